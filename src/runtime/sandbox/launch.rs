//! How a supervisor starts a command under the sandbox: through `bwrap`, through keel's own
//! binary confining itself with Landlock, or directly where commands run unconfined; and, for one
//! command alone, files bound read-only over paths ([`Overlay`]).

use super::{Availability, Confinement, Sandbox, bwrap, landlock};
use crate::runtime::supervisor::Launch;
use std::path::{Path, PathBuf};

/// A file bound read-only over a path for one command ([`Sandbox::launch_with`]): a private
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
    /// confines commands, directly ([`Launch::default`]) when they run unconfined.
    pub fn launch(&self, workspace: &Path) -> Launch {
        self.launch_reading(workspace, &[])
    }

    /// [`Sandbox::launch`], with the files `readable` readable where they lie under Landlock.
    fn launch_reading(&self, workspace: &Path, readable: &[PathBuf]) -> Launch {
        let Some(keel) = crate::runtime::supervisor::program() else {
            return Launch::default();
        };
        if self.confinement() != Confinement::Confined {
            return Launch::default();
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
                bwrap::launch(&self.policy, &setup)
            }
            Availability::Landlock { .. } => {
                let mut spec = landlock::spec(&self.policy, workspace, &self.read_only, &self.keel);
                spec.readable.extend_from_slice(readable);
                landlock::launch(&self.policy, keel, &spec)
            }
            Availability::Missing(_) => Launch::default(),
        }
    }

    /// As [`Sandbox::launch`], with each of `overlays` bound read-only over its path for this
    /// command alone, where the sandbox can bind (bwrap); `true` when it could. Where it cannot
    /// (commands run unconfined, or under a sandbox without mounts) the launch is
    /// [`Sandbox::launch`]'s, and the caller must not count on the overlays — but for an
    /// overlay seen at its own path (a hook's input in the host's `/tmp`), which Landlock lets
    /// the command read where it lies.
    pub fn launch_with(&self, workspace: &Path, overlays: &[Overlay]) -> (Launch, bool) {
        let in_place = overlays.iter().filter(|overlay| overlay.source == overlay.target);
        let in_place: Vec<PathBuf> = in_place.map(|overlay| overlay.source.clone()).collect();
        let mut launch = self.launch_reading(workspace, &in_place);
        let through_bwrap = matches!(&self.availability, Availability::Ready { bwrap }
            if launch.prefix.first().is_some_and(|program| Path::new(program) == bwrap));
        let bound = through_bwrap && bwrap::overlay(&mut launch.prefix, overlays);
        (launch, bound)
    }
}
