//! The sandbox every command runs in: what the kernel lets a command touch, whatever the guard
//! made of its text.
//!
//! A [`Policy`] says what a command may write and whether it may reach the network; [`Sandbox`]
//! is that policy plus whether the machine can enforce it, found out once at start by running a
//! command through the sandbox ([`Sandbox::probe`]), on a thread of its own ([`Probing`]). On
//! Linux the sandbox is `bwrap` (package `bubblewrap`, see [`bwrap`]) started by the command's
//! supervisor, and inside it keel's own binary installs a seccomp filter before it becomes `bash`
//! ([`confine`]). Where bwrap cannot start, that last step confines itself with Landlock instead
//! ([`landlock`]); only where neither works are commands unconfined (and then only as the person
//! chose). docs/sandbox.md says what each layer stops and what it costs.

mod availability;
pub mod bwrap;
pub mod confine;
pub mod git_dirs;
pub mod hidden;
pub mod keel_folders;
pub mod landlock;
pub mod nested;
mod notices;
mod policy;
pub mod probing;
pub mod process_limit;
pub mod real_path;
pub mod report;
pub mod repository;
pub mod session_tmp;
mod shell_start;

pub use availability::{Availability, BWRAP_VARIABLE, DEFAULT_BWRAP, INSTALL_HINT};
pub use keel_folders::KeelFolders;
pub use policy::{Mode, Policy};
pub use probing::Probing;
pub use shell_start::Overlay;

use std::path::PathBuf;

/// The policy plus whether it can be enforced; what the `bash` tool runs commands with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sandbox {
    pub policy: Policy,
    pub availability: Availability,
    /// Folders that stay read-only even where the policy lets commands write (repositories
    /// below the workspace's top).
    pub read_only: Vec<PathBuf>,
    /// Folders bound onto themselves where commands may write, so that no command can rename
    /// or remove them (the folders above a file a trusted hook runs: `hooks::Hooks::kept`).
    pub pinned: Vec<PathBuf>,
    /// keel's own folders: its config and state, the session's `/tmp`, the note over what the
    /// sandbox covers.
    pub keel: KeelFolders,
    /// Why commands run with no bound on their processes, when the probe found that none can be
    /// kept here (as root without a `pids` cgroup keel can make).
    pub unbounded: Option<String>,
}

/// How the next command will run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Confinement {
    /// Inside the sandbox.
    Confined,
    /// Unconfined, because the person chose `--sandbox off`.
    Off,
    /// Unconfined would be the only way, and the person did not choose it.
    Unavailable,
}

impl Sandbox {
    /// No sandbox, as `--sandbox off` asks.
    pub fn off() -> Self {
        Self {
            policy: Policy { mode: Mode::Off, ..Policy::default() },
            availability: Availability::Missing("the sandbox is off".into()),
            read_only: Vec::new(),
            pinned: Vec::new(),
            keel: KeelFolders::default(),
            unbounded: None,
        }
    }

    /// This sandbox with at most `mode`'s freedom; with the sandbox off, as it is (plan mode
    /// then falls back to the guard's read-only check).
    pub fn at_most(&self, mode: Mode) -> Self {
        if self.confinement() == Confinement::Off {
            return self.clone();
        }
        Self { policy: self.policy.at_most(mode), ..self.clone() }
    }

    pub fn confinement(&self) -> Confinement {
        match (&self.availability, self.policy.mode) {
            (_, Mode::Off) => Confinement::Off,
            (Availability::Ready { .. } | Availability::Landlock { .. }, _) => {
                Confinement::Confined
            }
            (Availability::Missing(_), _) => Confinement::Unavailable,
        }
    }

    /// Whether Landlock confines commands (bwrap cannot run here).
    pub fn is_landlock(&self) -> bool {
        self.confinement() == Confinement::Confined
            && matches!(self.availability, Availability::Landlock { .. })
    }

    /// Why commands cannot be confined, when they cannot and the person did not turn it off.
    pub fn problem(&self) -> Option<&str> {
        match (&self.availability, self.policy.mode) {
            (Availability::Missing(why), Mode::Workspace | Mode::ReadOnly) => Some(why),
            _ => None,
        }
    }
}

/// A folder for a unit test outside the host's `/tmp`, which every sandbox hides or replaces,
/// wherever the checkout lies (a clone under `/tmp` too).
#[cfg(test)]
pub(crate) fn outside_tmp() -> tempfile::TempDir {
    const OUTSIDE_TMP: &str = "/var/tmp";
    tempfile::tempdir_in(OUTSIDE_TMP).expect("a folder in /var/tmp")
}
