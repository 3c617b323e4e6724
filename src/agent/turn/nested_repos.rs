//! Repositories below the workspace's top, or the top made one without a `.git` ([`nested`]):
//! noted as the session opens, on a thread of its own (what is there then is the person's) and
//! kept read-only to commands; looked for again as every turn that follows a command ends, and
//! one that appeared moved aside, the person told.

use crate::agent::event::AgentEvent;
use crate::agent::turn::task::Agent;
use crate::tools::sandbox::nested::{self, Scan};
use crate::tools::{ToolName, Tools};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use tokio::sync::oneshot;

/// The most repositories below the top kept read-only to commands: bwrap's mounts cost each
/// command's start about 0.07 ms apiece (more as they grow), so 32 cost about 2 ms.
const MAX_PROTECTED: usize = 32;

/// The `.git` entries below the workspace's top, as the session opened and as the last turn
/// left them.
#[derive(Debug)]
pub(in crate::agent) struct NestedWatch {
    root: PathBuf,
    /// Folders never looked into: keel's own.
    passed_over: Vec<PathBuf>,
    state: Noted,
    /// A command has run in this session: every turn's end looks.
    commands_ran: bool,
    /// The person was told that some repositories stay writable.
    told_unprotected: bool,
    /// The person was told that a look stopped short of the whole workspace.
    told_incomplete: bool,
    /// Every mark of a repository (`sub/.git`, `sub/HEAD`) moved aside in this session.
    moved: HashSet<PathBuf>,
}

#[derive(Debug)]
enum Noted {
    /// The look as the session opened, still under way.
    Opening(oneshot::Receiver<Scan>),
    Done(Scan),
}

impl NestedWatch {
    /// Starts noting the repositories in `root`, never looking into `passed_over` (keel's own
    /// folders).
    pub(in crate::agent) fn opening(root: &Path, passed_over: Vec<PathBuf>) -> Self {
        let (sender, receiver) = oneshot::channel();
        let (folder, skipped) = (root.to_path_buf(), passed_over.clone());
        let state = match std::thread::Builder::new()
            .name("nested-repositories".into())
            .spawn(move || sender.send(nested::scan(&folder, &skipped)))
        {
            Ok(_) => Noted::Opening(receiver),
            Err(_) => Noted::Done(nested::scan(root, &passed_over)),
        };
        Self {
            root: root.to_path_buf(),
            passed_over,
            state,
            commands_ran: false,
            told_unprotected: false,
            told_incomplete: false,
            moved: HashSet::new(),
        }
    }

    /// The look as the session opened, waited for; looked again now if that one was lost.
    async fn before(&mut self) -> Scan {
        let state = std::mem::replace(&mut self.state, Noted::Done(Scan::default()));
        match state {
            Noted::Done(scan) => scan,
            Noted::Opening(receiver) => match receiver.await {
                Ok(scan) => scan,
                Err(_) => {
                    let (root, skipped) = (self.root.clone(), self.passed_over.clone());
                    tokio::task::spawn_blocking(move || nested::scan(&root, &skipped))
                        .await
                        .unwrap_or_default()
                }
            },
        }
    }

    /// `tools` with the repositories below the top as the last look found them read-only to
    /// commands (their hooks and config would run later, outside any sandbox, as the top's
    /// would): the [`MAX_PROTECTED`] nearest the top, each mount costing every command's start.
    /// How many were left writable, when any were.
    pub(in crate::agent) fn protecting(&self, tools: Tools) -> (Tools, Option<usize>) {
        let Noted::Done(scan) = &self.state else { return (tools, None) };
        let mut repositories = scan.protected(&self.root);
        if repositories.is_empty() {
            return (tools, None);
        }
        repositories.sort_by(|a, b| (a.components().count(), a).cmp(&(b.components().count(), b)));
        let left = repositories.len().saturating_sub(MAX_PROTECTED);
        let mut sandbox = tools.sandbox().clone();
        sandbox.read_only.extend(repositories.into_iter().take(MAX_PROTECTED));
        (tools.with_sandbox(sandbox), (left > 0).then_some(left))
    }
}

impl Agent {
    /// Before a command (`tool`, any other is given `tools` back): the look as the session opened
    /// is done (what a command makes is new); returns `tools` with the repositories below the
    /// top read-only ([`NestedWatch::protecting`]). The person is told once of any left writable.
    pub(in crate::agent) async fn protect_nested_repositories(
        &mut self,
        tools: Tools,
        tool: &ToolName,
    ) -> Tools {
        if *tool != ToolName::Bash {
            return tools;
        }
        if !self.nested.commands_ran {
            let before = self.nested.before().await;
            self.nested.state = Noted::Done(before);
            self.nested.commands_ran = true;
        }
        let (tools, left) = self.nested.protecting(tools);
        if let (Some(left), false) = (left, self.nested.told_unprotected) {
            self.nested.told_unprotected = true;
            self.emit(AgentEvent::Error {
                text: format!(
                    "keel keeps the {MAX_PROTECTED} repositories nearest the workspace's top \
                     read-only to commands; {left} more below it are not, and a command could \
                     write the hooks and config git runs there."
                ),
            });
        }
        tools
    }

    /// As a turn ends, once a command has run in the session: a repository that appeared below
    /// the top since is moved aside, and the person told as of an error (`-p` prints it too).
    /// Whether one was made again where keel had moved one aside before.
    pub(in crate::agent) async fn look_for_nested_repositories(&mut self) -> bool {
        if !self.nested.commands_ran {
            return false;
        }
        let before = self.nested.before().await;
        if !before.complete {
            self.tell_incomplete(false);
        }
        let (root, kept) = (self.nested.root.clone(), before.clone());
        let settled = tokio::task::spawn_blocking(move || nested::settle(&root, &before)).await;
        let Ok(settled) = settled else {
            // The look was lost: the next one starts from this one's start, never from nothing.
            self.nested.state = Noted::Done(kept);
            return false;
        };
        let complete = settled.scan.complete;
        self.nested.state = Noted::Done(settled.scan);
        for text in settled.told {
            self.emit(AgentEvent::Error { text });
        }
        if !complete {
            self.tell_incomplete(true);
        }
        let mut again = false;
        for mark in settled.moved {
            again |= !self.nested.moved.insert(mark);
        }
        again
    }

    /// Tells the person, once, that a look stopped at [`nested::MAX_ENTRIES`] entries: as the
    /// session opened (no repository a command makes is looked for), or later (only those
    /// within the first entries are).
    fn tell_incomplete(&mut self, later: bool) {
        if std::mem::replace(&mut self.nested.told_incomplete, true) {
            return;
        }
        let max = nested::MAX_ENTRIES;
        let text = if later {
            format!(
                "keel looked through the first {max} entries of the workspace for repositories \
                 commands made, not all of them."
            )
        } else {
            format!(
                "The workspace holds more than {max} entries, too many for keel to tell a \
                 repository a command makes (a sub/.git, whose hooks git would run outside the \
                 sandbox) from one that was there: look before you use git in a folder a \
                 command made."
            )
        };
        self.emit(AgentEvent::Error { text });
    }
}
