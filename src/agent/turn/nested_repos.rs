//! Repositories below the workspace's top ([`nested`]): noted as the session opens, on a thread
//! of its own (what is there then is the person's) and kept read-only to commands; looked for
//! again as every turn that follows a command ends, and one that appeared moved aside, the person
//! told.

use crate::agent::event::AgentEvent;
use crate::agent::turn::task::Agent;
use crate::tools::Tools;
use crate::tools::sandbox::nested::{self, Scan};
use std::path::{Path, PathBuf};
use tokio::sync::oneshot;

/// The `.git` entries below the workspace's top, as the session opened and as the last turn
/// left them.
#[derive(Debug)]
pub(in crate::agent) struct NestedWatch {
    root: PathBuf,
    state: Noted,
    /// A command has run in this session: every turn's end looks.
    commands_ran: bool,
}

#[derive(Debug)]
enum Noted {
    /// The look as the session opened, still under way.
    Opening(oneshot::Receiver<Scan>),
    Done(Scan),
}

impl NestedWatch {
    /// Starts noting the `.git` entries below `root`'s top.
    pub(in crate::agent) fn opening(root: &Path) -> Self {
        let (sender, receiver) = oneshot::channel();
        let folder = root.to_path_buf();
        let state = match std::thread::Builder::new()
            .name("nested-repositories".into())
            .spawn(move || sender.send(nested::scan(&folder)))
        {
            Ok(_) => Noted::Opening(receiver),
            Err(_) => Noted::Done(nested::scan(root)),
        };
        Self { root: root.to_path_buf(), state, commands_ran: false }
    }

    /// The look as the session opened, waited for; looked again now if that one was lost.
    async fn before(&mut self) -> Scan {
        let state = std::mem::replace(&mut self.state, Noted::Done(Scan::default()));
        match state {
            Noted::Done(scan) => scan,
            Noted::Opening(receiver) => match receiver.await {
                Ok(scan) => scan,
                Err(_) => {
                    let root = self.root.clone();
                    tokio::task::spawn_blocking(move || nested::scan(&root))
                        .await
                        .unwrap_or_default()
                }
            },
        }
    }
}

impl NestedWatch {
    /// `tools` with the repositories below the top as the last look found them read-only to
    /// commands: their hooks and config would run later, outside any sandbox, as the root's would.
    pub(in crate::agent) fn protecting(&self, tools: Tools) -> Tools {
        let Noted::Done(scan) = &self.state else { return tools };
        if scan.repositories().next().is_none() {
            return tools;
        }
        let mut sandbox = tools.sandbox().clone();
        sandbox.read_only.extend(scan.repositories().map(Path::to_path_buf));
        tools.with_sandbox(sandbox)
    }
}

impl Agent {
    /// Before a command: the look as the session opened is done (what a command makes is new).
    pub(in crate::agent) async fn note_nested_repositories(&mut self) {
        if !self.nested.commands_ran {
            let before = self.nested.before().await;
            self.nested.state = Noted::Done(before);
            self.nested.commands_ran = true;
        }
    }

    /// As a turn ends, once a command has run in the session: a repository that appeared below
    /// the top since is moved aside, and the person told as of an error (`-p` prints it too).
    pub(in crate::agent) async fn look_for_nested_repositories(&mut self) {
        if !self.nested.commands_ran {
            return;
        }
        let before = self.nested.before().await;
        let (root, kept) = (self.nested.root.clone(), before.clone());
        let settled = tokio::task::spawn_blocking(move || nested::settle(&root, &before)).await;
        let Ok((now, told)) = settled else {
            // The look was lost: the next one starts from this one's start, never from nothing.
            self.nested.state = Noted::Done(kept);
            return;
        };
        self.nested.state = Noted::Done(now);
        for text in told {
            self.emit(AgentEvent::Error { text });
        }
    }
}
