//! What commands must not change under the trusted workspace hooks: the files each names,
//! read-only to commands, and the folders above them below the workspace's top, pinned (bound
//! onto themselves: `Sandbox::pinned`).
//!
//! A hook runs from private copies of the files it names, bound over them in its sandbox
//! (`super::reading::read`, `super::place`). A mount point cannot be written, renamed or removed
//! from the mount namespace it is one in; but a rename from any other namespace takes the mounts
//! on what it replaces away, the copy a hook runs from included, so a command's job swapping the
//! file in a loop would win some runs. Where commands cannot swap these, the copy is what runs.
//!
//! What is kept is fixed as the session's first command (or confined hook) starts, and kept for
//! the whole session (`Hooks::kept`): a job a command left running while a path was not kept
//! could make it a symlink, and bwrap binds what a symlink leads to. A hook trusted after that
//! is kept from the next session on; meanwhile its files are hashed again after every run.

use super::command_paths::named_files;
use super::config::HookSpec;
use crate::runtime::sandbox::Sandbox;
use std::path::{Path, PathBuf};

/// What commands must not change under the trusted workspace hooks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Kept {
    /// The files the hooks name: read-only to commands.
    pub files: Vec<PathBuf>,
    /// The folders above them, below the workspace's top, outermost first: pinned.
    pub folders: Vec<PathBuf>,
}

impl Kept {
    /// What `trusted` (workspace hooks the person trusts as they are) of `workspace` (canonical)
    /// need kept.
    pub fn of(trusted: &[&HookSpec], workspace: &Path) -> Self {
        let mut kept = Self::default();
        for spec in trusted {
            for (_, file) in named_files(&spec.command, workspace) {
                let mut folder = file.parent();
                while let Some(above) = folder.filter(|above| above.starts_with(workspace)) {
                    if above == workspace || kept.folders.iter().any(|kept| kept == above) {
                        break;
                    }
                    kept.folders.push(above.to_path_buf());
                    folder = above.parent();
                }
                if !kept.files.contains(&file) {
                    kept.files.push(file);
                }
            }
        }
        // A folder is pinned before what lies in it.
        kept.folders.sort_by_key(|folder| folder.components().count());
        kept
    }

    pub fn is_empty(&self) -> bool {
        self.files.is_empty() && self.folders.is_empty()
    }

    /// `sandbox` keeping these from its commands.
    pub fn keep_in(&self, sandbox: &mut Sandbox) {
        sandbox.pinned.extend(self.folders.iter().cloned());
        sandbox.read_only.extend(self.files.iter().cloned());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hooks::Hooks;
    use crate::hooks::config::Origin;
    use crate::hooks::trust::{self, TrustStore};

    #[test]
    fn what_a_trusted_workspace_hook_runs_is_kept_from_commands_and_nothing_else() {
        let (state, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let root = work.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("hooks/lib")).unwrap();
        for file in ["hooks/lib/check.sh", "top.sh", "mine.sh", "later.sh"] {
            std::fs::write(root.join(file), "exit 0\n").unwrap();
        }
        let store = TrustStore::in_state(state.path());
        let spec = HookSpec::for_test;
        let trusted = spec("./hooks/lib/check.sh && ./top.sh", Origin::Workspace);
        store.trust(&[trust::identify(&trusted, &root)]).unwrap();
        let specs =
            vec![spec("./mine.sh", Origin::Person), trusted, spec("./later.sh", Origin::Workspace)];
        let hooks = Hooks::new(specs, &root, Some(store), false);
        let kept = hooks.kept();
        assert_eq!(kept.files, [root.join("hooks/lib/check.sh"), root.join("top.sh")]);
        assert_eq!(kept.folders, [root.join("hooks"), root.join("hooks/lib")], "outermost first");
        let mut sandbox = Sandbox::off();
        kept.keep_in(&mut sandbox);
        assert_eq!(sandbox.read_only, kept.files);
        assert_eq!(sandbox.pinned, kept.folders);
        // Fixed as the first command started: forgotten or trusted later, the same for the
        // session (a job left running meanwhile could make what was not kept a symlink).
        hooks.forget().unwrap();
        assert_eq!(hooks.kept(), kept);
        hooks.trust_all().unwrap();
        let later = hooks.kept();
        assert_eq!(later, kept);
    }
}
