//! Repositories a command makes below the workspace's top ([`nested`]): noted before the
//! session's first command, looked for again as every turn ends, and moved aside, the person
//! told, when one appeared.

use crate::agent::event::AgentEvent;
use crate::agent::turn::task::Agent;
use crate::tools::sandbox::nested;

impl Agent {
    /// Before a command: notes the `.git` entries below the workspace's top, once a session.
    pub(in crate::agent) async fn note_nested_repositories(&mut self) {
        if self.nested.is_some() {
            return;
        }
        let root = self.tools.workspace().root().to_path_buf();
        let scan = tokio::task::spawn_blocking(move || nested::scan(&root)).await;
        self.nested = Some(scan.unwrap_or_default());
    }

    /// As a turn ends, once a command has run in the session: a repository that appeared below
    /// the top since is moved aside, and the person told as of an error (`-p` prints it too).
    pub(in crate::agent) async fn look_for_nested_repositories(&mut self) {
        let Some(before) = self.nested.take() else { return };
        let root = self.tools.workspace().root().to_path_buf();
        let settled = tokio::task::spawn_blocking(move || nested::settle(&root, &before)).await;
        let Ok((now, told)) = settled else { return };
        self.nested = Some(now);
        for text in told {
            self.emit(AgentEvent::Error { text });
        }
    }
}
