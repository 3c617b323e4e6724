//! Knowing without git that the workspace is just as the last snapshot left it, so that the
//! snapshot after a command that changed nothing (`python3 hello.py`) is the last snapshot's
//! tree and costs no git process at all.
//!
//! `git add --all` changes the private index only when a file the index holds differs from what
//! the index says of it, when a path appears or goes away, or when the rules of what to ignore
//! change. keel checks each as git itself would, and when any check cannot vouch, runs git:
//! - **The index's files**: each one's status now (times, device, inode, owner, size, kind,
//!   executable bit) against what git cached of it. A file git could not trust by its times —
//!   changed within the second the index was written in, "racily clean" — is read and hashed as
//!   git hashes a blob, and compared with the entry's object.
//! - **Every path**: a listing of each name in the workspace with its kind, folder by folder,
//!   hashed (what git ignores included, since keel does not read ignore rules). It is taken
//!   before each snapshot's `git add`, so anything that appears or goes away after it makes the
//!   next listing differ from the note's.
//! - **The ignore rules**: those outside the workspace (the copy of `.git/info/exclude`, the
//!   person's global ignore file) are hashed into the listing, and a note is written only when
//!   every `.gitignore` listed is in the index, where the first check covers it.
//!
//! A note is written only after a `git add` that said nothing (it skips a file it cannot read,
//! and says so; that file may be readable later), with no repository nested in the workspace
//! (git records one by its `HEAD`, which no listing sees), and for at most [`MAX_LISTED`]
//! entries, past which a listing costs more than the git process it saves. The note lives
//! beside the index, in keel's state folder, which commands cannot write, and names the index
//! by the SHA-256 of its bytes.

use super::git_output::ObjectId;
use super::index_file::{self, Entry, SHA1_BYTES};
use super::tree_memo::hex;
use sha1::Sha1;
use sha2::{Digest, Sha256};
use std::ffi::OsStr;
use std::fs::Metadata;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Added to the index's file name for the note's.
const NOTE_SUFFIX: &str = ".unchanged";
/// The most entries a listing goes through before it gives up.
pub(super) const MAX_LISTED: usize = 50_000;
/// The name of a repository's folder, and of git's per-folder ignore rules.
const GIT: &str = ".git";
const IGNORE_FILE: &str = ".gitignore";
/// The kinds of file a mode in the index names, and the executable bit git keeps.
const KIND_MASK: u32 = 0o170_000;
const REGULAR: u32 = 0o100_000;
const SYMLINK: u32 = 0o120_000;
const EXECUTABLE: u32 = 0o100;

/// What the workspace holds, name by name, and its `.gitignore` files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Listing {
    digest: String,
    ignore_files: Vec<Vec<u8>>,
}

/// Lists the workspace at `work_tree`, leaving out its own `.git` and the `excluded` paths
/// (relative), with the content of each of `rules` (ignore files outside the workspace; a
/// missing one counts as empty). `None` when the listing cannot vouch for the workspace: an
/// unreadable folder, a nested repository, more than [`MAX_LISTED`] entries.
pub(super) fn list(work_tree: &Path, excluded: &[String], rules: &[PathBuf]) -> Option<Listing> {
    list_within(work_tree, excluded, rules, MAX_LISTED)
}

/// [`list`], through at most `max_entries` entries.
fn list_within(
    work_tree: &Path,
    excluded: &[String],
    rules: &[PathBuf],
    max_entries: usize,
) -> Option<Listing> {
    let mut hasher = Sha256::new();
    for rule in rules {
        let content = std::fs::read(rule).unwrap_or_default();
        hasher.update(u64::try_from(content.len()).ok()?.to_be_bytes());
        hasher.update(&content);
    }
    let mut ignore_files = Vec::new();
    let mut folders: Vec<Vec<u8>> = vec![Vec::new()];
    let mut seen = 0usize;
    while let Some(folder) = folders.pop() {
        let mut names = Vec::new();
        for entry in std::fs::read_dir(work_tree.join(OsStr::from_bytes(&folder))).ok()? {
            let entry = entry.ok()?;
            seen += 1;
            if seen > max_entries {
                return None;
            }
            names.push((entry.file_name(), entry.file_type().ok()?));
        }
        names.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        // Folders are pushed in reverse, so that they are listed in order.
        let mut below = Vec::new();
        for (name, kind) in names {
            if name == GIT {
                if folder.is_empty() {
                    continue;
                }
                return None;
            }
            let mut path = folder.clone();
            if !path.is_empty() {
                path.push(b'/');
            }
            path.extend_from_slice(name.as_bytes());
            if excluded.iter().any(|excluded| excluded.as_bytes() == path.as_slice()) {
                continue;
            }
            let tag = if kind.is_dir() {
                b'd'
            } else if kind.is_symlink() {
                b'l'
            } else if kind.is_file() {
                b'f'
            } else {
                b'o'
            };
            hasher.update(&path);
            hasher.update([0, tag]);
            if name == IGNORE_FILE {
                ignore_files.push(path.clone());
            }
            if kind.is_dir() {
                below.push(path);
            }
        }
        folders.extend(below.into_iter().rev());
    }
    Some(Listing { digest: hex(&hasher.finalize()), ignore_files })
}

/// The tree the last snapshot wrote, if the workspace at `work_tree` is just as it left it: the
/// note is for `index` as it is now, `listing` is the note's, every file the index holds is as
/// git cached it (or, if its times cannot be trusted, holds the entry's object), and the tree's
/// objects are still kept (`kept`).
pub(super) fn tree(
    index: &Path,
    work_tree: &Path,
    listing: &Listing,
    kept: impl Fn(&ObjectId) -> bool,
) -> Option<ObjectId> {
    let note = std::fs::read_to_string(note_path(index)).ok()?;
    let mut words = note.split_whitespace();
    let (noted_listing, noted_index, tree) = (words.next()?, words.next()?, words.next()?);
    let tree = ObjectId::parse(tree)?;
    if noted_listing != listing.digest || !kept(&tree) {
        return None;
    }
    let bytes = std::fs::read(index).ok()?;
    if hex(&Sha256::digest(&bytes)) != noted_index {
        return None;
    }
    // Git's rule for racily clean entries, to the second: a file changed in the second the index
    // was written in may have changed after git read it.
    let written = u32::try_from(std::fs::metadata(index).ok()?.mtime()).ok()?;
    let parsed = index_file::parse(&bytes, SHA1_BYTES)?;
    let as_cached = |entry: &Entry| {
        let path = work_tree.join(OsStr::from_bytes(entry.path));
        let meta = std::fs::symlink_metadata(&path).ok()?;
        let cached = entry.status;
        if !status_is(entry, &meta) {
            return None;
        }
        if cached.mtime.0 >= written || cached.ctime.0 >= written {
            return (blob_id(&path, &meta)?.as_slice() == entry.id).then_some(());
        }
        Some(())
    };
    parsed.entries.iter().try_for_each(as_cached)?;
    Some(tree)
}

/// Notes that `index`, just written by a `git add` after `listing`, gives `tree`, when what the
/// index holds lets a later [`tree`] vouch for it; otherwise drops the note. Best effort: without
/// the note the next snapshot runs git, as it always did.
pub(super) fn remember(index: &Path, listing: &Listing, tree: &ObjectId) {
    let note = std::fs::read(index).ok().and_then(|bytes| {
        let parsed = index_file::parse(&bytes, SHA1_BYTES)?;
        let plain = |entry: &Entry| {
            let kind = entry.status.mode & KIND_MASK;
            !entry.extended && (kind == REGULAR || kind == SYMLINK)
        };
        let held =
            |path: &Vec<u8>| parsed.entries.iter().any(|entry| entry.path == path.as_slice());
        (parsed.entries.iter().all(plain) && listing.ignore_files.iter().all(held)).then(|| {
            format!("{} {} {}\n", listing.digest, hex(&Sha256::digest(&bytes)), tree.as_str())
        })
    });
    let Some(note) = note else {
        forget(index);
        return;
    };
    let path = note_path(index);
    let mut temporary = path.clone().into_os_string();
    temporary.push(format!(".{}.tmp", std::process::id()));
    let temporary = PathBuf::from(temporary);
    let written =
        std::fs::write(&temporary, note).and_then(|()| std::fs::rename(&temporary, &path));
    if written.is_err() {
        let _ = std::fs::remove_file(&temporary);
        forget(index);
    }
}

/// Drops the note: the index is being started again, or the last snapshot cannot vouch.
pub(super) fn forget(index: &Path) {
    let _ = std::fs::remove_file(note_path(index));
}

/// The person's global ignore file, where git looks for it when no config names one.
pub(super) fn global_ignore_file() -> Option<PathBuf> {
    match std::env::var_os("XDG_CONFIG_HOME").filter(|home| !home.is_empty()) {
        Some(config) => Some(PathBuf::from(config).join("git/ignore")),
        None => std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".config/git/ignore")),
    }
}

fn note_path(index: &Path) -> PathBuf {
    let mut name = index.as_os_str().to_owned();
    name.push(NOTE_SUFFIX);
    PathBuf::from(name)
}

/// Whether `meta` is what git cached for `entry`: its kind and executable bit, and each field
/// cut to 32 bits as the index keeps it.
fn status_is(entry: &Entry, meta: &Metadata) -> bool {
    let cached = entry.status;
    let kind = match cached.mode & KIND_MASK {
        REGULAR => {
            meta.file_type().is_file()
                && (cached.mode & EXECUTABLE != 0) == (meta.mode() & EXECUTABLE != 0)
        }
        SYMLINK => meta.file_type().is_symlink(),
        _ => false,
    };
    // Truncation is what git does to each field.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let now = (
        (meta.ctime() as u32, meta.ctime_nsec() as u32),
        (meta.mtime() as u32, meta.mtime_nsec() as u32),
        meta.dev() as u32,
        meta.ino() as u32,
        meta.uid(),
        meta.gid(),
        meta.size() as u32,
    );
    kind && now
        == (cached.ctime, cached.mtime, cached.dev, cached.ino, cached.uid, cached.gid, cached.size)
}

/// The object id git would give the file at `path` as a blob: its bytes, or a symlink's target.
fn blob_id(path: &Path, meta: &Metadata) -> Option<Vec<u8>> {
    let content = if meta.file_type().is_symlink() {
        std::fs::read_link(path).ok()?.into_os_string().into_vec()
    } else {
        std::fs::read(path).ok()?
    };
    let mut hasher = Sha1::new();
    hasher.update(format!("blob {}\0", content.len()).as_bytes());
    hasher.update(&content);
    Some(hasher.finalize().to_vec())
}

#[cfg(test)]
mod tests;
