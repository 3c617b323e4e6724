//! Trust in a workspace's hooks, kept in keel's state folder (never the workspace).
//!
//! A hook in a workspace's `.keel/config.toml` comes with the repository: a clone ships it and
//! the model can write the files it runs. So it runs only once the person trusts it, and the
//! trust is keyed to a hash of what the hook is: the workspace, its event, matcher, command and
//! timeout, and the contents of every file of the workspace its command names (`./check.sh`,
//! `python3 hooks/lint.py`, `"$CLAUDE_PROJECT_DIR"/x.sh`, `$PWD/x.sh`). A changed command or a
//! changed file is a different hash: the hook stops running until the person trusts it again.
//! The hash is taken again before every run, so a file changed during the session is caught too.
//!
//! Trust decides only *whether* a workspace hook runs: it runs in the command sandbox all the
//! same (`super::place`), since what it opens besides the files it names (an import, a sourced
//! file, a Makefile) is hashed by nobody. And what runs is what was hashed: [`read`] reads each
//! named file once, hashing the bytes as it writes them to a private copy outside every folder
//! commands may write, and the copy is what the hook's sandbox shows at the file's path. Each
//! file is opened without following a symlink, and only as the very file named.
//!
//! The trusted hashes live in `<state>/hooks/trusted.json`, readable by its owner only, written
//! whole through a temporary file and a rename; the copies, in `<state>/hooks/copies/`, for as
//! long as one run lasts.

use super::config::{HookSpec, Origin};
use crate::tools::sandbox::Overlay;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::fs::File;
use std::io::{Read as _, Write as _};
use std::os::unix::fs::{OpenOptionsExt as _, PermissionsExt as _};
use std::path::{Component, Path, PathBuf};

/// The store's folder in keel's state folder, and its file.
const STORE_DIR: &str = "hooks";
const STORE_FILE: &str = "trusted.json";
/// The folder of the private copies hooks run from, beside the store.
const COPIES_DIR: &str = "copies";
/// What every hash starts with, so a new way of hashing never matches an old trust.
const HASH_DOMAIN: &str = "keel-hook-trust-v1";
/// Characters that end a word in a shell line, for finding the files a command names.
const SHELL_BREAKS: &[char] = &[';', '|', '&', '(', ')', '<', '>', '`', '\n', '\t', ' '];
/// Quotes, taken out of a word before it is read as a path (`"$CLAUDE_PROJECT_DIR"/x.sh`).
const QUOTES: [char; 2] = ['"', '\''];
/// Variables that name the workspace in a hook's command: keel's, Claude Code's, and the
/// shell's own (a hook starts in the workspace).
const WORKSPACE_VARS: [&str; 3] = ["KEEL_PROJECT_DIR", "CLAUDE_PROJECT_DIR", "PWD"];
/// What a file that cannot be read (or is not the file named) counts as in a hash.
const UNREADABLE: &str = "unreadable";
/// Bytes read from a named file at once.
const READ_CHUNK: usize = 64 * 1024;
/// The permission bits a private copy keeps of its file's: read and execute, never another's
/// write or a set-id bit.
const COPY_MODE_BITS: u32 = 0o755;
/// A copy while it is written: its owner's only.
const COPY_WRITING_MODE: u32 = 0o600;

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
    identified(spec, workspace, hash(spec, workspace))
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
    status_of(spec, workspace, &hash(spec, workspace), trusted)
}

/// How far workspace hook `spec` is trusted when its files hash to `hash` (a [`Reading`]'s).
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

/// The hash trust is keyed to: the hook as written and the files of the workspace it names.
pub fn hash(spec: &HookSpec, workspace: &Path) -> String {
    read(spec, workspace, None).hash
}

/// A hook as read once: its hash and, where asked, a private copy of each file it names.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reading {
    /// The hash trust is keyed to.
    pub hash: String,
    /// Each named file's copy over the file, made from the bytes hashed.
    pub copies: Vec<Overlay>,
    /// The words naming files that could not be copied (unreadable, or the copy not written):
    /// the hook cannot run from copies alone.
    pub uncopied: Vec<String>,
}

/// Reads `spec` of `workspace` once: hashes it and, with `copies` (a private folder outside
/// every folder commands may write), writes there a copy of each file its command names, from
/// the very bytes hashed.
pub fn read(spec: &HookSpec, workspace: &Path, copies: Option<&Path>) -> Reading {
    let mut reading = Reading::default();
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
    for (index, (shown, path)) in named_files(&spec.command, workspace).into_iter().enumerate() {
        let copy = copies.map(|folder| folder.join(index.to_string()));
        let (file_hash, copied) = read_file(&path, copy.as_deref());
        hasher.update(shown.as_bytes());
        hasher.update([0]);
        hasher.update(file_hash.as_bytes());
        hasher.update([0]);
        match copy {
            Some(source) if copied => reading.copies.push(Overlay { source, target: path }),
            Some(_) => reading.uncopied.push(shown),
            None => {}
        }
    }
    reading.hash = hex(&hasher.finalize());
    reading
}

/// The regular files inside `workspace` that `command`'s words name, each once, in order: the
/// word as written and the file.
pub fn named_files(command: &str, workspace: &Path) -> Vec<(String, PathBuf)> {
    let Ok(root) = workspace.canonicalize() else {
        return Vec::new();
    };
    let mut found: Vec<(String, PathBuf)> = Vec::new();
    for word in words(command).iter().map(String::as_str) {
        let expanded = expand_workspace(word, &root).unwrap_or_else(|| PathBuf::from(word));
        let candidate = root.join(&expanded);
        let Ok(file) = candidate.canonicalize() else { continue };
        if !file.starts_with(&root) || !file.is_file() || found.iter().any(|(_, f)| *f == file) {
            continue;
        }
        found.push((word.to_owned(), file));
    }
    found
}

/// Whether `command` names a path inside `workspace`: a file or folder of it that is there, any
/// path below `$KEEL_PROJECT_DIR`, `$CLAUDE_PROJECT_DIR` or `$PWD`, or an absolute path inside
/// it, there or not. A hook of the person's that does runs in the sandbox (`super::place`).
pub fn names_workspace(command: &str, workspace: &Path) -> bool {
    let Ok(root) = workspace.canonicalize() else {
        return false;
    };
    words(command).iter().any(|word| {
        if expand_workspace(word, &root).is_some() {
            return true;
        }
        match root.join(word).canonicalize() {
            Ok(found) => found.starts_with(&root),
            Err(_) => Path::new(word).is_absolute() && lexical(Path::new(word)).starts_with(&root),
        }
    })
}

/// The words of a shell line, its quotes taken out first, as paths may stand in it.
fn words(command: &str) -> Vec<String> {
    let unquoted = command.replace(QUOTES, "");
    unquoted.split(SHELL_BREAKS).filter(|word| !word.is_empty()).map(str::to_owned).collect()
}

/// `word` with a leading `$KEEL_PROJECT_DIR`, `$CLAUDE_PROJECT_DIR` or `$PWD` (braced or not)
/// as `root`; `None` when it has none.
fn expand_workspace(word: &str, root: &Path) -> Option<PathBuf> {
    for name in WORKSPACE_VARS {
        for form in [format!("${{{name}}}"), format!("${name}")] {
            if let Some(rest) = word.strip_prefix(&form)
                && (rest.is_empty() || rest.starts_with('/'))
            {
                return Some(root.join(rest.trim_start_matches('/')));
            }
        }
    }
    None
}

/// `path` with `.` and `..` worked out without the file system.
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// A named file's contents hashed, or [`UNREADABLE`]; with `copy`, the same bytes written there
/// as they are hashed, and whether that was done.
fn read_file(path: &Path, copy: Option<&Path>) -> (String, bool) {
    let Some(mut file) = open_named(path) else {
        return (UNREADABLE.to_owned(), false);
    };
    let mode = file.metadata().map_or(COPY_WRITING_MODE, |meta| meta.permissions().mode());
    let mut out = copy.and_then(|copy| {
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(COPY_WRITING_MODE)
            .open(copy)
            .ok()
    });
    let mut hasher = Sha256::new();
    let mut chunk = vec![0u8; READ_CHUNK];
    loop {
        match file.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => {
                hasher.update(&chunk[..n]);
                if out.as_mut().is_some_and(|out| out.write_all(&chunk[..n]).is_err()) {
                    out = None;
                }
            }
            Err(_) => return (UNREADABLE.to_owned(), false),
        }
    }
    let copied = out.is_some_and(|out| {
        out.sync_all().is_ok()
            && out.set_permissions(std::fs::Permissions::from_mode(mode & COPY_MODE_BITS)).is_ok()
    });
    (hex(&hasher.finalize()), copied)
}

/// `path` opened for reading as the regular file it names: not through a symlink at its end
/// (`O_NOFOLLOW`), and only if what was opened is that very path, so that a folder on the way
/// swapped for a symlink is not followed elsewhere either. Never waits on a FIFO.
fn open_named(path: &Path) -> Option<File> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
        .open(path)
        .ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let opened =
        std::fs::read_link(format!("/proc/self/fd/{}", std::os::fd::AsRawFd::as_raw_fd(&file)));
    (opened.ok()? == path).then_some(file)
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
        let files = named_files("cd \"$PWD\" && ${PWD}/check.sh", &root);
        assert_eq!(files, [("${PWD}/check.sh".to_owned(), root.join("check.sh"))]);
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
    fn a_reading_copies_the_very_bytes_it_hashed_and_never_through_a_symlink() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir(root.join("hooks")).unwrap();
        std::fs::write(root.join("hooks/lint.py"), "import helper\n").unwrap();
        std::fs::write(root.join("check.sh"), "exit 0\n").unwrap();
        std::fs::set_permissions(root.join("check.sh"), std::fs::Permissions::from_mode(0o4777))
            .unwrap();
        let copies = tempfile::tempdir().unwrap();
        let hook = spec("./check.sh && python3 hooks/lint.py");
        let reading = read(&hook, &root, Some(copies.path()));
        assert_eq!(reading.hash, hash(&hook, &root), "copying changes nothing of the hash");
        assert!(reading.uncopied.is_empty());
        let targets: Vec<&Path> = reading.copies.iter().map(|c| c.target.as_path()).collect();
        assert_eq!(targets, [root.join("check.sh"), root.join("hooks/lint.py")]);
        for copy in &reading.copies {
            assert!(copy.source.starts_with(copies.path()));
            assert_eq!(std::fs::read(&copy.source).unwrap(), std::fs::read(&copy.target).unwrap());
        }
        let mode = std::fs::metadata(&reading.copies[0].source).unwrap().permissions().mode();
        assert_eq!(mode & 0o7777, 0o755, "runnable as it was, no set-id bit, no one else's write");

        // The file swapped for a symlink after it was found: not followed, not copied.
        std::fs::write(root.join("elsewhere"), "exit 0\n").unwrap();
        std::fs::remove_file(root.join("check.sh")).unwrap();
        std::os::unix::fs::symlink(root.join("elsewhere"), root.join("check.sh")).unwrap();
        let into = tempfile::tempdir().unwrap();
        let (seen, copied) = read_file(&root.join("check.sh"), Some(&into.path().join("0")));
        assert_eq!((seen.as_str(), copied), (UNREADABLE, false));
        assert!(!into.path().join("0").exists());
        // Nor a folder on the way that became a symlink.
        std::fs::rename(root.join("hooks"), root.join("real-hooks")).unwrap();
        std::os::unix::fs::symlink(root.join("real-hooks"), root.join("hooks")).unwrap();
        assert_eq!(read_file(&root.join("hooks/lint.py"), None).0, UNREADABLE);
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
