//! What every conversation over one workspace shares: the tools' workspace, the sandbox commands
//! run in and the MCP servers (`Tools`); the hooks (`crate::hooks`); the person's approvals,
//! "always" answers included; and the watches over the workspace's repositories. A conversation borrows them for its turns
//! (`turn::Turn`), so a second conversation — a child agent — runs over the same ones, never a
//! second set of watchers; the few parts that change are behind locks of their own, held only
//! for a look or a change.

use crate::agent::approval::Approvals;
mod nested;

use crate::agent::config::ApprovalMode;
use crate::hooks::Hooks;
use crate::runtime::Sandbox;
use crate::runtime::sandbox::Confinement;
use crate::runtime::sandbox::repository;
use crate::tools::Tools;
pub(in crate::agent) use nested::{MAX_PROTECTED, NestedWatch, Noted};
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// The workspace's services.
#[derive(Debug)]
pub(in crate::agent) struct Services {
    pub tools: Tools,
    /// The workspace's hooks.
    pub hooks: Arc<Hooks>,
    approvals: Mutex<Approvals>,
    /// The sandbox's probe has answered, and the approvals and the status bar know it.
    sandbox_known: AtomicBool,
    /// The workspace's `.git/commondir` as the session found it, looked at again after every
    /// command and turn.
    repository: Mutex<repository::Watch>,
    /// The repositories below the workspace's top as the session opened, and as the last turn
    /// left them (`turn::nested_repos`).
    pub nested: tokio::sync::Mutex<NestedWatch>,
    /// The lines of MCP servers (failures, tools capped) the person has been told.
    mcp_told: Mutex<HashSet<String>>,
}

impl Services {
    /// The services of `tools`' workspace, approving as `mode` says.
    pub fn new(tools: Tools, mode: ApprovalMode) -> Self {
        let root = tools.workspace().root().to_path_buf();
        let keels = tools.probing_sandbox().ready_or_assumed().0.keel.own.clone();
        Self {
            approvals: Mutex::new(Approvals::new(mode)),
            sandbox_known: AtomicBool::new(false),
            repository: Mutex::new(repository::Watch::before(&root)),
            nested: tokio::sync::Mutex::new(NestedWatch::opening(&root, keels)),
            mcp_told: Mutex::new(HashSet::new()),
            tools,
            hooks: Arc::default(),
        }
    }

    /// These services, running `hooks` where their events happen.
    pub fn with_hooks(self, hooks: Arc<Hooks>) -> Self {
        Self { hooks, ..self }
    }

    /// The approvals, for a look or a change.
    pub fn approvals(&self) -> MutexGuard<'_, Approvals> {
        lock(&self.approvals)
    }

    /// Whether the sandbox's probe has answered and been taken in ([`Services::adopt_sandbox`]).
    pub fn sandbox_known(&self) -> bool {
        self.sandbox_known.load(Ordering::Acquire)
    }

    /// Takes the sandbox's probe's answer into the approval rules; returns the sandbox as the
    /// status bar names it (nothing when the person turned it off).
    pub fn adopt_sandbox(&self, sandbox: &Sandbox) -> Option<Arc<str>> {
        {
            let mut approvals = self.approvals();
            *approvals = std::mem::take(&mut *approvals).with_sandbox(sandbox);
        }
        self.sandbox_known.store(true, Ordering::Release);
        (sandbox.confinement() != Confinement::Off).then(|| sandbox.label().into())
    }

    /// The sandbox's probe's answer, waited for if it has not come yet and taken in; the label
    /// for the status bar when it was taken in now.
    pub async fn settle_sandbox(&self) -> Option<Option<Arc<str>>> {
        if self.sandbox_known() {
            return None;
        }
        let probing = self.tools.probing_sandbox().clone();
        Some(self.adopt_sandbox(probing.settled().await))
    }

    /// A `.git/commondir` a command (or a job it left) wrote since the last look: removed, and
    /// what the person and the model are told of it; and whether one was removed before in this
    /// session, so that this one was made again.
    pub fn look_at_repository(&self) -> (Option<String>, bool) {
        let mut watch = lock(&self.repository);
        let removed = watch.removals();
        let found = watch.after();
        (found, removed > 0 && watch.removals() > removed)
    }

    /// Whether the person has not yet been told this line of an MCP server (a failure, its tools
    /// capped); noted as told.
    pub fn tell_mcp_once(&self, line: &str) -> bool {
        lock(&self.mcp_told).insert(line.to_owned())
    }
}

/// A lock whose holder panicked is still the same data: nothing here is left half-changed.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
