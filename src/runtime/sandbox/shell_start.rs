//! How a supervisor starts a command under the sandbox: through `bwrap`, through keel's own
//! binary confining itself with Landlock, or directly where commands run unconfined; and, for one
//! command alone, files bound read-only over paths ([`Overlay`]).

use super::{Availability, Confinement, Sandbox, bwrap, landlock};
use crate::runtime::supervisor::ShellStart;
use std::path::{Path, PathBuf};

/// A file bound read-only over a path for one command ([`Sandbox::shell_start_with`]): a private
/// copy over the file it was made from, say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Overlay {
    /// What is seen: a file outside every folder commands may write.
    pub source: PathBuf,
    /// Where it is seen, inside the sandbox.
    pub target: PathBuf,
}

impl Sandbox {
    /// How a supervisor starts a command of `workspace` under this sandbox: through it when it
    /// confines commands, directly ([`ShellStart::default`]) when they run unconfined.
    pub fn shell_start(&self, workspace: &Path) -> ShellStart {
        self.shell_start_reading(workspace, &[])
    }

    /// [`Sandbox::shell_start`], with the files `readable` readable where they lie under Landlock.
    fn shell_start_reading(&self, workspace: &Path, readable: &[PathBuf]) -> ShellStart {
        let Some(keel) = crate::runtime::supervisor::program() else {
            return ShellStart::default();
        };
        if self.confinement() != Confinement::Confined {
            return ShellStart::default();
        }
        match &self.availability {
            Availability::Ready { bwrap } => {
                let setup = bwrap::Setup {
                    bwrap,
                    workspace,
                    keel,
                    read_only: &self.read_only,
                    pinned: &self.pinned,
                    folders: &self.keel,
                };
                bwrap::shell_start(&self.policy, &setup)
            }
            Availability::Landlock { .. } => {
                let mut spec = landlock::spec(&self.policy, workspace, &self.read_only, &self.keel);
                spec.readable.extend_from_slice(readable);
                landlock::shell_start(&self.policy, keel, &spec)
            }
            Availability::Missing(_) => ShellStart::default(),
        }
    }

    /// As [`Sandbox::shell_start`], with each of `overlays` bound read-only over its path for this
    /// command alone, where the sandbox can bind (bwrap); `true` when it could. Where it cannot
    /// (commands run unconfined, or under a sandbox without mounts) the start is
    /// [`Sandbox::shell_start`]'s, and the caller must not count on the overlays — but for an
    /// overlay seen at its own path (a hook's input in the host's `/tmp`), which Landlock lets
    /// the command read where it lies.
    pub fn shell_start_with(&self, workspace: &Path, overlays: &[Overlay]) -> (ShellStart, bool) {
        let in_place = overlays.iter().filter(|overlay| overlay.source == overlay.target);
        let in_place: Vec<PathBuf> = in_place.map(|overlay| overlay.source.clone()).collect();
        let mut start = self.shell_start_reading(workspace, &in_place);
        let through_bwrap = matches!(&self.availability, Availability::Ready { bwrap }
            if start.prefix.first().is_some_and(|program| Path::new(program) == bwrap));
        let bound = through_bwrap && bwrap::overlay(&mut start.prefix, overlays);
        (start, bound)
    }
}
