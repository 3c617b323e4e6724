//! A workspace hook read once: the hash its trust is keyed to (`super::trust`), and, for a run,
//! a private copy of each file its command names, made from the very bytes hashed.
//!
//! The hash covers what the hook is: the workspace, its event, matcher, command and timeout, and
//! the contents of every file of the workspace its command names (`super::command_paths`). A
//! changed command or a changed file is a different hash. It is taken again before every run,
//! so a file changed during the session is caught too.
//!
//! What runs is what was hashed: [`read`] reads each named file once, hashing the bytes as it
//! writes them to a private copy outside every folder commands may write, and the copy is what
//! the hook's sandbox shows at the file's path (`super::place`). Each file is opened without
//! following a symlink, and only as the very file named. The copies are made in
//! `<state>/hooks/copies/`, beside the trust store, for as long as one run lasts.

use super::command_paths::named_files;
use super::config::HookSpec;
use super::trust::TrustStore;
use crate::runtime::sandbox::Overlay;
use sha2::{Digest, Sha256};
use std::fs::File;
use std::io::{Read as _, Write as _};
use std::os::unix::fs::{OpenOptionsExt as _, PermissionsExt as _};
use std::path::Path;

/// What every hash starts with, so a new way of hashing never matches an old trust.
const HASH_DOMAIN: &str = "keel-hook-trust-v1";
/// What a file that cannot be read (or is not the file named) counts as in a hash.
const UNREADABLE: &str = "unreadable";
/// Bytes read from a named file at once.
const READ_CHUNK: usize = 64 * 1024;
/// The permission bits a private copy keeps of its file's: read and execute, never another's
/// write or a set-id bit.
const COPY_MODE_BITS: u32 = 0o755;
/// A copy while it is written: its owner's only.
const COPY_WRITING_MODE: u32 = 0o600;
/// What the name of one run's folder of private copies starts with.
const COPIES_PREFIX: &str = "run-";

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

/// A trusted workspace hook's files as read for its hash, with the folder their copies are in
/// (removed when the run is over), or why there is none.
#[derive(Debug)]
pub(super) struct Copied {
    pub(super) reading: Reading,
    pub(super) folder: Result<tempfile::TempDir, String>,
}

/// A private folder for one run's copies of a hook's files: in keel's state folder, beside
/// `store`; without one, in the temporary folder commands never see.
pub(super) fn copies_folder(store: Option<&TrustStore>) -> std::io::Result<tempfile::TempDir> {
    let Some(store) = store else {
        return tempfile::Builder::new().prefix(COPIES_PREFIX).tempdir();
    };
    let folder = store.copies();
    crate::runtime::undo::shadow::create_private_dir(&folder)?;
    tempfile::Builder::new().prefix(COPIES_PREFIX).tempdir_in(folder)
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
    use crate::hooks::config::Origin;
    use crate::runtime::testing::{files, folder};

    fn spec(command: &str) -> HookSpec {
        HookSpec::for_test(command, Origin::Workspace)
    }

    #[test]
    fn a_changed_command_or_file_is_a_changed_hash() {
        let (_dir, root) = folder();
        std::fs::write(root.join("check.sh"), "exit 0").unwrap();
        let first = hash(&spec("./check.sh"), &root);
        assert_eq!(first, hash(&spec("./check.sh"), &root), "the same hook, the same hash");
        assert_ne!(first, hash(&spec("./check.sh x"), &root));
        std::fs::write(root.join("check.sh"), "exit 2").unwrap();
        assert_ne!(first, hash(&spec("./check.sh"), &root));
    }

    #[test]
    fn a_reading_copies_the_very_bytes_it_hashed_and_never_through_a_symlink() {
        let (_dir, root) = folder();
        files(&root, &[("hooks/lint.py", "import helper\n"), ("check.sh", "exit 0\n")]);
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
}
