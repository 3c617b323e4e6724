//! The repositories below the workspace's top ([`nested`]), as the session opened and as the last
//! turn left them: what every conversation's commands are kept away from, and what a look after a
//! command compares with (`turn::nested_repos` does the looking).

use crate::runtime::sandbox::nested::{self, Scan};
use crate::tools::Tools;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use tokio::sync::oneshot;

/// The most repositories below the top kept read-only to commands: bwrap's mounts cost each
/// command's start about 0.07 ms apiece (more as they grow), so 32 cost about 2 ms.
pub(in crate::agent) const MAX_PROTECTED: usize = 32;

/// The `.git` entries below the workspace's top, as the session opened and as the last turn
/// left them.
#[derive(Debug)]
pub(in crate::agent) struct NestedWatch {
    pub root: PathBuf,
    /// Folders never looked into: keel's own.
    passed_over: Vec<PathBuf>,
    pub state: Noted,
    /// A command has run in this session: every turn's end looks.
    pub commands_ran: bool,
    /// The person was told that some repositories stay writable.
    pub told_unprotected: bool,
    /// The person was told that a look stopped short of the whole workspace.
    pub told_incomplete: bool,
    /// Every mark of a repository (`sub/.git`, `sub/HEAD`) moved aside in this session.
    pub moved: HashSet<PathBuf>,
}

#[derive(Debug)]
pub(in crate::agent) enum Noted {
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
    pub async fn before(&mut self) -> Scan {
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
