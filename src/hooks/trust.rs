//! Trust in a workspace's hooks, kept in keel's state folder (never the workspace).
//!
//! A hook in a workspace's `.keel/config.toml` comes with the repository: a clone ships it and
//! the model can write the files it runs. So it runs only once the person trusts it, and the
//! trust is keyed to a hash of what the hook is (`super::reading`): its command and the files of
//! the workspace it names among the rest. A changed command or a changed file is a different
//! hash: the hook stops running until the person trusts it again.
//!
//! Trust decides only *whether* a workspace hook runs: it runs in the command sandbox all the
//! same (`super::place`), since what it opens besides the files it names (an import, a sourced
//! file, a Makefile) is hashed by nobody; and it runs from the private copies made as it was
//! hashed (`super::reading::read`).
//!
//! The trusted hashes live in `<state>/hooks/trusted.json`, readable by its owner only, written
//! whole through a temporary file and a rename.

use super::config::{HookSpec, Origin};
use super::reading;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The store's folder in keel's state folder, and its file.
const STORE_DIR: &str = "hooks";
const STORE_FILE: &str = "trusted.json";
/// The folder of the private copies hooks run from, beside the store.
const COPIES_DIR: &str = "copies";

/// How far a hook is trusted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trust {
    /// The person's own config: it runs.
    Own,
    /// A workspace hook the person trusted as it is now.
    Trusted,
    /// A workspace hook never trusted.
    Untrusted,
    /// A workspace hook trusted once, whose file or timeout has changed since.
    Changed,
}

impl Trust {
    pub fn runs(self) -> bool {
        matches!(self, Self::Own | Self::Trusted)
    }
}

/// One trusted hook, as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Trusted {
    pub workspace: PathBuf,
    pub event: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matcher: Option<String>,
    pub command: String,
    pub hash: String,
}

impl Trusted {
    /// Whether `other` is the same hook as written (its files aside).
    fn same_hook(&self, other: &Self) -> bool {
        self.workspace == other.workspace
            && self.event == other.event
            && self.matcher == other.matcher
            && self.command == other.command
    }
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Stored {
    #[serde(default)]
    trusted: Vec<Trusted>,
}

/// The trusted hooks' file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustStore {
    path: PathBuf,
}

impl TrustStore {
    /// The store in keel's state folder `state`.
    pub fn in_state(state: &Path) -> Self {
        Self { path: state.join(STORE_DIR).join(STORE_FILE) }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The folder private copies of hooks' files are made in, beside the store.
    pub fn copies(&self) -> PathBuf {
        self.path.parent().unwrap_or(Path::new(".")).join(COPIES_DIR)
    }

    /// What is trusted; nothing when the file is missing. A damaged file trusts nothing.
    pub fn load(&self) -> Result<Vec<Trusted>, String> {
        match std::fs::read(&self.path) {
            Ok(bytes) => serde_json::from_slice::<Stored>(&bytes)
                .map(|stored| stored.trusted)
                .map_err(|err| format!("{} cannot be read: {err}", self.path.display())),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
            Err(err) => Err(format!("{}: {err}", self.path.display())),
        }
    }

    /// Trusts `hooks`, in place of any earlier trust in the same hooks.
    pub fn trust(&self, hooks: &[Trusted]) -> Result<(), String> {
        let mut trusted = self.load().unwrap_or_default();
        trusted.retain(|old| !hooks.iter().any(|new| new.same_hook(old)));
        trusted.extend(hooks.iter().cloned());
        self.save(trusted)
    }

    /// Forgets every hook trusted in `workspace`; returns how many there were.
    pub fn forget(&self, workspace: &Path) -> Result<usize, String> {
        let mut trusted = self.load().unwrap_or_default();
        let before = trusted.len();
        trusted.retain(|old| old.workspace != workspace);
        let forgotten = before - trusted.len();
        self.save(trusted)?;
        Ok(forgotten)
    }

    fn save(&self, trusted: Vec<Trusted>) -> Result<(), String> {
        let fail = |err: &dyn std::fmt::Display| format!("{}: {err}", self.path.display());
        let folder = self.path.parent().unwrap_or(Path::new("."));
        crate::runtime::undo::shadow::create_private_dir(folder).map_err(|err| fail(&err))?;
        let json = serde_json::to_vec_pretty(&Stored { trusted }).map_err(|err| fail(&err))?;
        // A temporary file is created readable by its owner only.
        let mut file = tempfile::NamedTempFile::new_in(folder).map_err(|err| fail(&err))?;
        std::io::Write::write_all(&mut file, &json).map_err(|err| fail(&err))?;
        file.persist(&self.path).map_err(|err| fail(&err.error))?;
        Ok(())
    }
}

/// The stored form of workspace hook `spec` as it is now in `workspace`.
pub fn identify(spec: &HookSpec, workspace: &Path) -> Trusted {
    identified(spec, workspace, reading::hash(spec, workspace))
}

/// The stored form of workspace hook `spec` of `workspace`, whose files hash to `hash`.
fn identified(spec: &HookSpec, workspace: &Path, hash: String) -> Trusted {
    Trusted {
        workspace: workspace.to_owned(),
        event: spec.event.name().to_owned(),
        matcher: spec.matcher.text.clone(),
        command: spec.command.clone(),
        hash,
    }
}

/// How far `spec` is trusted, given what the store holds.
pub fn status(spec: &HookSpec, workspace: &Path, trusted: &[Trusted]) -> Trust {
    if spec.origin == Origin::Person {
        return Trust::Own;
    }
    status_of(spec, workspace, &reading::hash(spec, workspace), trusted)
}

/// How far workspace hook `spec` is trusted when its files hash to `hash` (a
/// [`Reading`](reading::Reading)'s).
pub fn status_of(spec: &HookSpec, workspace: &Path, hash: &str, trusted: &[Trusted]) -> Trust {
    if spec.origin == Origin::Person {
        return Trust::Own;
    }
    let now = identified(spec, workspace, hash.to_owned());
    if trusted.iter().any(|old| old.same_hook(&now) && old.hash == now.hash) {
        Trust::Trusted
    } else if trusted.iter().any(|old| old.same_hook(&now)) {
        Trust::Changed
    } else {
        Trust::Untrusted
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hooks::config::Origin;

    fn spec(command: &str) -> HookSpec {
        HookSpec::for_test(command, Origin::Workspace)
    }

    #[test]
    fn the_store_trusts_forgets_and_tells_a_changed_hook_from_a_new_one() {
        let state = tempfile::tempdir().unwrap();
        let work = tempfile::tempdir().unwrap();
        let root = work.path().canonicalize().unwrap();
        std::fs::write(root.join("check.sh"), "exit 0").unwrap();
        let store = TrustStore::in_state(state.path());
        let hook = spec("./check.sh");
        assert_eq!(status(&hook, &root, &store.load().unwrap()), Trust::Untrusted);
        store.trust(&[identify(&hook, &root)]).unwrap();
        assert_eq!(status(&hook, &root, &store.load().unwrap()), Trust::Trusted);
        std::fs::write(root.join("check.sh"), "exit 2").unwrap();
        assert_eq!(status(&hook, &root, &store.load().unwrap()), Trust::Changed);
        assert_eq!(status(&spec("./other.sh"), &root, &store.load().unwrap()), Trust::Untrusted);
        assert_eq!(store.forget(&root).unwrap(), 1);
        assert!(store.load().unwrap().is_empty());
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(store.path()).unwrap().permissions().mode();
        assert_eq!(mode & 0o077, 0, "the store is its owner's only");
    }
}
