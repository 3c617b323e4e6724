//! Trust in a workspace's hooks, kept in keel's state folder (never the workspace).
//!
//! A hook in a workspace's `.keel/config.toml` comes with the repository: a clone ships it and
//! the model can write the files it runs. So it runs only once the person trusts it, and the
//! trust is keyed to a hash of what the hook is: the workspace, its event, matcher, command and
//! timeout, and the contents of every file of the workspace its command names (`./check.sh`,
//! `python3 hooks/lint.py`, `"$CLAUDE_PROJECT_DIR"/x.sh`). A changed command or a changed file
//! is a different hash: the hook stops running until the person trusts it again. The hash is
//! taken again before every run, so a file changed during the session is caught too.
//!
//! The trusted hashes live in `<state>/hooks/trusted.json`, readable by its owner only, written
//! whole through a temporary file and a rename.

use super::config::{HookSpec, Origin};
use super::run::PROJECT_DIR_VARS;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::io::Read as _;
use std::path::{Path, PathBuf};

/// The store's folder in keel's state folder, and its file.
const STORE_DIR: &str = "hooks";
const STORE_FILE: &str = "trusted.json";
/// What every hash starts with, so a new way of hashing never matches an old trust.
const HASH_DOMAIN: &str = "keel-hook-trust-v1";
/// Characters that end a word in a shell line, for finding the files a command names.
const SHELL_BREAKS: &[char] = &[';', '|', '&', '(', ')', '<', '>', '`', '\n', '\t', ' '];
/// Quotes, taken out of a word before it is read as a path (`"$CLAUDE_PROJECT_DIR"/x.sh`).
const QUOTES: [char; 2] = ['"', '\''];

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
        crate::tools::undo::shadow::create_private_dir(folder).map_err(|err| fail(&err))?;
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
    Trusted {
        workspace: workspace.to_owned(),
        event: spec.event.name().to_owned(),
        matcher: spec.matcher.text.clone(),
        command: spec.command.clone(),
        hash: hash(spec, workspace),
    }
}

/// How far `spec` is trusted, given what the store holds.
pub fn status(spec: &HookSpec, workspace: &Path, trusted: &[Trusted]) -> Trust {
    if spec.origin == Origin::Person {
        return Trust::Own;
    }
    let now = identify(spec, workspace);
    if trusted.iter().any(|old| old.same_hook(&now) && old.hash == now.hash) {
        Trust::Trusted
    } else if trusted.iter().any(|old| old.same_hook(&now)) {
        Trust::Changed
    } else {
        Trust::Untrusted
    }
}

/// The hash trust is keyed to: the hook as written and the files of the workspace it names.
pub fn hash(spec: &HookSpec, workspace: &Path) -> String {
    let mut hasher = Sha256::new();
    let matcher = spec.matcher.text.as_deref().unwrap_or_default();
    let timeout = spec.timeout.as_millis().to_string();
    for part in [
        HASH_DOMAIN,
        &workspace.to_string_lossy(),
        spec.event.name(),
        matcher,
        &spec.command,
        &timeout,
    ] {
        hasher.update(part.as_bytes());
        hasher.update([0]);
    }
    for (shown, path) in named_files(&spec.command, workspace) {
        hasher.update(shown.as_bytes());
        hasher.update([0]);
        hasher.update(file_hash(&path).as_bytes());
        hasher.update([0]);
    }
    hex(&hasher.finalize())
}

/// The regular files inside `workspace` that `command`'s words name, each once, in order: the
/// word as written and the file.
pub fn named_files(command: &str, workspace: &Path) -> Vec<(String, PathBuf)> {
    let Ok(root) = workspace.canonicalize() else {
        return Vec::new();
    };
    let mut found: Vec<(String, PathBuf)> = Vec::new();
    let unquoted = command.replace(QUOTES, "");
    for word in unquoted.split(SHELL_BREAKS).filter(|word| !word.is_empty()) {
        let expanded = expand_project_dir(word, &root);
        let candidate = root.join(&expanded);
        let Ok(file) = candidate.canonicalize() else { continue };
        if !file.starts_with(&root) || !file.is_file() || found.iter().any(|(_, f)| *f == file) {
            continue;
        }
        found.push((word.to_owned(), file));
    }
    found
}

/// `word` with a leading `$KEEL_PROJECT_DIR` or `$CLAUDE_PROJECT_DIR` (braced or not) as `root`.
fn expand_project_dir(word: &str, root: &Path) -> PathBuf {
    for name in PROJECT_DIR_VARS {
        for form in [format!("${{{name}}}"), format!("${name}")] {
            if let Some(rest) = word.strip_prefix(&form) {
                return root.join(rest.trim_start_matches('/'));
            }
        }
    }
    PathBuf::from(word)
}

/// A file's contents hashed, or a mark that it could not be read.
fn file_hash(path: &Path) -> String {
    let Ok(mut file) = std::fs::File::open(path) else {
        return "unreadable".to_owned();
    };
    let mut hasher = Sha256::new();
    let mut chunk = [0u8; 64 * 1024];
    loop {
        match file.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => hasher.update(&chunk[..n]),
            Err(_) => return "unreadable".to_owned(),
        }
    }
    hex(&hasher.finalize())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hooks::config::{Matcher, Origin};
    use crate::hooks::events::Event;
    use std::time::Duration;

    fn spec(command: &str) -> HookSpec {
        HookSpec {
            event: Event::PreToolUse,
            matcher: Matcher::parse(Some("Bash")).unwrap(),
            command: command.into(),
            timeout: Duration::from_secs(5),
            origin: Origin::Workspace,
        }
    }

    #[test]
    fn the_files_a_command_names_are_found_however_it_names_them() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir(root.join("hooks")).unwrap();
        std::fs::write(root.join("hooks/a.py"), "print()").unwrap();
        std::fs::write(root.join("check.sh"), "exit 0").unwrap();
        let files = named_files(
            "python3 hooks/a.py && ./check.sh; \"$CLAUDE_PROJECT_DIR\"/check.sh /etc/passwd",
            &root,
        );
        let names: Vec<&str> = files.iter().map(|(word, _)| word.as_str()).collect();
        assert_eq!(names, ["hooks/a.py", "./check.sh"], "each file once, none outside");
    }

    #[test]
    fn a_changed_command_or_file_is_a_changed_hash() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::write(root.join("check.sh"), "exit 0").unwrap();
        let first = hash(&spec("./check.sh"), &root);
        assert_eq!(first, hash(&spec("./check.sh"), &root), "the same hook, the same hash");
        assert_ne!(first, hash(&spec("./check.sh x"), &root));
        std::fs::write(root.join("check.sh"), "exit 2").unwrap();
        assert_ne!(first, hash(&spec("./check.sh"), &root));
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
