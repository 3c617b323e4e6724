//! Hooks: the person's own programs, run at points of a session in Claude Code's shape, so
//! hooks written for Claude Code run unchanged (`protocol`), with what its peers lack: a
//! workspace's hooks run only once the person trusts them, keyed to a hash of what they are
//! (`trust`, `reading`), and then in the command sandbox all the same, from private copies of
//! the files they name (`place`); a PreToolUse or TaskCompleted hook that cannot answer blocks
//! rather than waves through (`protocol::judge`), and one whose files changed since it was
//! trusted blocks every call it guards until the person trusts it again or forgets it
//! (`session_trust`); and the board has an event of its own, TaskCompleted.
//!
//! [`Hooks`] is a workspace's service (held by the agent's `Services`, so every conversation —
//! a child agent's too — goes through the same hooks): the hooks configured (`config`), how far
//! each is trusted, and what ran. [`Hooks::fire`] runs the hooks an event matches, in parallel
//! (`fire`, `run`), and returns what they said ([`Fired`]); what that means for the call, the
//! prompt, the turn or the board is the agent's to decide where the event happens.

pub mod command_paths;
pub mod config;
pub mod events;
mod fire;
pub mod fired;
pub mod kept;
pub mod listing;
pub mod names;
pub mod place;
pub mod protocol;
pub mod reading;
pub mod run;
mod session_trust;
pub mod trust;

pub use config::{DEFAULT_TIMEOUT, HookSpec, HooksConfig, Origin};
pub use events::Event;
pub use fire::Query;
pub use fired::{Fired, Ran};
pub use kept::Kept;
pub use listing::{HookLine, HooksView, Outcome, RanLine};
pub use place::Place;
pub use protocol::{Common, Permission, Reply, Verdict};

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};
use trust::{Trust, TrustStore};

/// How many runs `/hooks` remembers.
const RAN_KEPT: usize = 50;
/// How the person trusts a workspace's hooks, in both front ends.
pub const HOW_TO_TRUST: &str = "/hooks trust in keel's screen, or `keel hooks trust`";

/// What the person can ask of the hooks (`/hooks trust`, `/hooks forget`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HooksCommand {
    /// Trust the workspace's hooks as they are now.
    Trust,
    /// Forget every trust in this workspace's hooks.
    Forget,
}

/// A workspace's hooks.
#[derive(Debug, Default)]
pub struct Hooks {
    specs: Vec<HookSpec>,
    /// The workspace (canonical): where hooks run, and what trust is keyed to.
    workspace: PathBuf,
    /// Where trust is kept; `None` when there is no state folder (nothing can be trusted).
    store: Option<TrustStore>,
    /// Someone can answer when a hook asks for the person's approval (not `keel -p`).
    interactive: bool,
    live: Mutex<Live>,
}

#[derive(Debug, Default)]
struct Live {
    /// How far each hook is trusted now, in `specs`' order.
    trust: Vec<Trust>,
    /// The person has been told that this hook changed since they trusted it (at the start, or
    /// as it was found): told once, until they trust or forget it.
    told_changed: Vec<bool>,
    ran: VecDeque<RanLine>,
    /// What commands must not change, fixed as the first command's sandbox was set up.
    kept: Option<Kept>,
    /// The store could not be read (nothing is trusted meanwhile).
    store_problem: Option<String>,
}

impl Hooks {
    /// The hooks `specs` (the person's, then the workspace's) of `workspace`, trusted as `store`
    /// says; `interactive` when a person can answer an approval.
    pub fn new(
        specs: Vec<HookSpec>,
        workspace: &Path,
        store: Option<TrustStore>,
        interactive: bool,
    ) -> Self {
        let workspace = workspace.canonicalize().unwrap_or_else(|_| workspace.to_owned());
        let hooks = Self { specs, workspace, store, interactive, live: Mutex::default() };
        hooks.refresh_trust();
        hooks
    }

    /// No hooks at all.
    pub fn none() -> Self {
        Self::default()
    }

    /// Whether any hook is configured for `event` (trusted or not).
    pub fn has(&self, event: Event) -> bool {
        self.specs.iter().any(|spec| spec.event == event)
    }

    /// Whether a person can answer when a hook asks for approval.
    pub fn interactive(&self) -> bool {
        self.interactive
    }

    /// The workspace the hooks run in.
    pub fn workspace(&self) -> &Path {
        &self.workspace
    }

    /// What commands must not change under the trusted workspace hooks ([`kept`]), for the
    /// sandbox of a command or a confined hook about to start: what the hooks trusted when the
    /// first one started name, for the whole session. A path is kept from the session's first
    /// command on or not at all: a job a command left running while it was not could make it a
    /// symlink, and bwrap binds what a symlink leads to.
    pub fn kept(&self) -> Kept {
        let mut live = self.lock();
        let live = &mut *live;
        let kept = live.kept.get_or_insert_with(|| {
            let trusted: Vec<&HookSpec> = (self.specs.iter().zip(&live.trust))
                .filter(|(_, trust)| **trust == Trust::Trusted)
                .map(|(spec, _)| spec)
                .collect();
            Kept::of(&trusted, &self.workspace)
        });
        kept.clone()
    }

    /// Keeps the newest runs for `/hooks`.
    fn remember(&self, runs: &[Ran]) {
        let mut live = self.lock();
        for ran in runs {
            live.ran.push_back(RanLine::of(ran));
            if live.ran.len() > RAN_KEPT {
                live.ran.pop_front();
            }
        }
    }

    /// The hooks and the newest runs, for `/hooks`.
    pub fn view(&self) -> HooksView {
        let live = self.lock();
        HooksView {
            hooks: self
                .specs
                .iter()
                .zip(&live.trust)
                .map(|(spec, trust)| HookLine::of(spec, *trust, Place::of(spec, &self.workspace)))
                .collect(),
            ran: live.ran.iter().cloned().collect(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Live> {
        self.live.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A hook named for the person: its event and command.
pub fn name(spec: &HookSpec) -> String {
    format!("{} `{}`", spec.event, crate::visible::one_line(&spec.command))
}
