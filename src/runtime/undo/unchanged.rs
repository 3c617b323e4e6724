//! Knowing without git that the workspace is just as the last snapshot left it, so that the
//! snapshot after a command that changed nothing (`python3 hello.py`) is the last snapshot's
//! tree and costs no git process at all.
//!
//! `git add --all` changes the private index only when a file the index holds differs from what
//! the index says of it, when a path appears or goes away, or when the rules of what to ignore
//! change. keel checks each as git itself would, and when any check cannot vouch, runs git:
//! - **The index's files**, first: each one's status now (times, device, inode, owner, size,
//!   kind, executable bit) against what git cached of it. A file git could not trust by its times
//!   — changed within the second the index was written in, "racily clean" — is read and hashed
//!   as git hashes a blob, and compared with the entry's object. A change here ends the look:
//!   git runs anyway, and nothing is noted for the next snapshot.
//! - **Every path**: a listing of each name in the workspace with its kind, folder by folder,
//!   hashed (what git ignores included, since keel does not read ignore rules). It is taken
//!   before each snapshot's `git add`, so anything that appears or goes away after it makes the
//!   next listing differ from the note's.
//! - **The ignore rules**: those outside the workspace (the copy of `.git/info/exclude`, the
//!   person's global ignore file) are hashed into the listing, and a note is written only when
//!   every `.gitignore` listed is in the index, where the first check covers it.
//!
//! A note is written only after a `git add` that said nothing (it skips a file it cannot read,
//! and says so; that file may be readable later) and with no repository nested in the workspace
//! (git records one by its `HEAD`, which no listing sees). The look pays where git's own start
//! is most of a snapshot's cost: past [`MAX_LISTED`] entries a look costs about what it saves
//! (`cargo bench --bench undo`), so an index that holds more is left to git at once, and a
//! workspace whose listing goes past it (a `node_modules`) is noted as such and not listed again
//! while the index stays as it is. The note lives beside the index, in keel's state folder,
//! which commands cannot write, and names the index by the checksum git ends it with.

use super::git_output::ObjectId;
use super::index_file::{self, Entry, SHA1_BYTES};
use super::index_note::{self, hex};
use sha1::Sha1;
use sha2::{Digest, Sha256};
use std::collections::HashSet;
use std::ffi::OsStr;
use std::fs::Metadata;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Added to the index's file name for the note's.
const NOTE_SUFFIX: &str = ".unchanged";
/// The most entries a listing goes through before it gives up.
pub(super) const MAX_LISTED: usize = 2_000;
/// The most racily clean files read and hashed before leaving the snapshot to git.
const MAX_RACY_READS: usize = 64;
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

/// What a look before `git add` found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Look {
    /// The workspace is as the last snapshot left it: its tree, no git needed.
    Unchanged(ObjectId),
    /// Something changed, or nothing was noted; the listing to note once git has added.
    Listed(Listing),
    /// More than [`MAX_LISTED`] entries in the workspace: not listed again while the index
    /// stays as it is.
    TooMany,
    /// More than [`MAX_LISTED`] entries in the index: nothing is noted; the next look tells from
    /// the index git writes.
    LargeIndex,
    /// A file the index holds changed (no listing then: git runs anyway), or nothing a listing
    /// can vouch for (a nested repository, an unreadable folder).
    Unknown,
}

/// Where a workspace is looked at from: its private index, its work tree, what is left out of
/// its snapshots (relative paths) and the ignore rules outside it (a missing file counts as
/// empty).
#[derive(Debug, Clone, Copy)]
pub(super) struct Place<'a> {
    pub index: &'a Path,
    pub work_tree: &'a Path,
    pub excluded: &'a [String],
    pub rules: &'a [PathBuf],
}

/// Looks at the workspace before a snapshot's `git add`: whether it is as the note says the last
/// snapshot left it (the tree's objects still `kept`), and what to note after. The files the
/// index holds are checked first: a change there ends the look before the listing.
pub(super) fn look(place: Place, kept: impl Fn(&ObjectId) -> bool) -> Look {
    let bytes = std::fs::read(place.index).unwrap_or_default();
    if index_file::count(&bytes).is_some_and(|count| count > MAX_LISTED) {
        return Look::LargeIndex;
    }
    let parsed = index_file::parse(&bytes, SHA1_BYTES);
    let current = parsed.as_ref().and(trailer(&bytes));
    let note = Note::read(place.index);
    let noted = match (&note, &current) {
        (Some(Note::TooMany { index }), Some(current)) if index == current => {
            return Look::TooMany;
        }
        (Some(Note::Listed { listing, index, tree }), Some(current))
            if index == current && kept(tree) =>
        {
            let written = std::fs::metadata(place.index).ok().map(|meta| meta.mtime());
            let entries = parsed.as_ref().map_or(&[][..], |parsed| &parsed.entries[..]);
            if !written.is_some_and(|written| as_cached(place.work_tree, entries, written)) {
                return Look::Unknown;
            }
            Some((listing, tree))
        }
        _ => None,
    };
    match list(place.work_tree, place.excluded, place.rules) {
        Listed::Within(listing) => match noted {
            Some((digest, tree)) if *digest == listing.digest => Look::Unchanged(tree.clone()),
            _ => Look::Listed(listing),
        },
        Listed::TooMany => Look::TooMany,
        Listed::Unknown => Look::Unknown,
    }
}

/// Notes what `look` found for the next snapshot, once `git add` has written the index (saying
/// nothing when `quiet`) and the snapshot's `tree` is known. Best effort: without a note the next
/// snapshot runs git, as it always did.
pub(super) fn note(index: &Path, look: &Look, tree: &ObjectId, quiet: bool) {
    let note = match look {
        Look::TooMany => std::fs::read(index)
            .ok()
            .and_then(|bytes| trailer(&bytes))
            .map(|index| Note::TooMany { index }),
        Look::Listed(listing) if quiet => std::fs::read(index).ok().and_then(|bytes| {
            let parsed = index_file::parse(&bytes, SHA1_BYTES)?;
            let plain = |entry: &Entry| {
                let kind = entry.status.mode & KIND_MASK;
                !entry.extended && (kind == REGULAR || kind == SYMLINK)
            };
            let paths: HashSet<&[u8]> = parsed.entries.iter().map(|entry| entry.path).collect();
            let held = |path: &Vec<u8>| paths.contains(path.as_slice());
            let index = trailer(&bytes)?;
            (parsed.entries.iter().all(plain) && listing.ignore_files.iter().all(held)).then(|| {
                Note::Listed { listing: listing.digest.clone(), index, tree: tree.clone() }
            })
        }),
        _ => None,
    };
    match note {
        Some(note) => note.write(index),
        None => forget(index),
    }
}

/// Drops the note: the index is being started again.
pub(super) fn forget(index: &Path) {
    index_note::forget(index, NOTE_SUFFIX);
}

/// What the last snapshot noted for the next, beside the index it wrote (named by the SHA-1
/// checksum git ends an index with).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Note {
    Listed { listing: String, index: String, tree: ObjectId },
    TooMany { index: String },
}

impl Note {
    const LISTED: &'static str = "listed";
    const TOO_MANY: &'static str = "too-many";

    fn read(index: &Path) -> Option<Self> {
        let text = index_note::read(index, NOTE_SUFFIX)?;
        let words: Vec<&str> = text.split_whitespace().collect();
        match words.as_slice() {
            [Self::LISTED, listing, index, tree] => Some(Self::Listed {
                listing: (*listing).to_owned(),
                index: (*index).to_owned(),
                tree: ObjectId::parse(tree)?,
            }),
            [Self::TOO_MANY, index] => Some(Self::TooMany { index: (*index).to_owned() }),
            _ => None,
        }
    }

    fn write(&self, index: &Path) {
        let text = match self {
            Self::Listed { listing, index: checksum, tree } => {
                format!("{} {listing} {checksum} {}\n", Self::LISTED, tree.as_str())
            }
            Self::TooMany { index: checksum } => format!("{} {checksum}\n", Self::TOO_MANY),
        };
        index_note::write(index, NOTE_SUFFIX, &text);
    }
}

/// The checksum git ends an index with, as hex; `None` for one without (`index.skipHash`).
fn trailer(bytes: &[u8]) -> Option<String> {
    let checksum = bytes.get(bytes.len().checked_sub(SHA1_BYTES)?..)?;
    checksum.iter().any(|&byte| byte != 0).then(|| hex(checksum))
}

/// Whether every file of `entries` is as git cached it in an index written at `written` (in
/// seconds): its status the same, and where git's times cannot vouch — a file changed within
/// the second the index was written in may have changed after git read it — its bytes those
/// of the entry's object.
fn as_cached(work_tree: &Path, entries: &[Entry], written: i64) -> bool {
    let Ok(written) = u32::try_from(written) else { return false };
    let mut racy = 0usize;
    entries.iter().all(|entry| {
        let path = work_tree.join(OsStr::from_bytes(entry.path));
        let Ok(meta) = std::fs::symlink_metadata(&path) else { return false };
        let cached = entry.status;
        if !status_is(entry, &meta) {
            return false;
        }
        if cached.mtime.0 < written && cached.ctime.0 < written {
            return true;
        }
        // Past a few, git does better: it rewrites the index, so that they are racy no more.
        racy += 1;
        racy <= MAX_RACY_READS && blob_id(&path, &meta).is_some_and(|id| id.as_slice() == entry.id)
    })
}

/// What a listing found.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Listed {
    Within(Listing),
    /// More than [`MAX_LISTED`] entries.
    TooMany,
    /// What no listing can vouch for: an unreadable folder, a nested repository.
    Unknown,
}

/// Lists the workspace at `work_tree`, leaving out its own `.git` and the `excluded` paths
/// (relative), with the content of each of `rules` (ignore files outside the workspace; a
/// missing one counts as empty).
fn list(work_tree: &Path, excluded: &[String], rules: &[PathBuf]) -> Listed {
    list_within(work_tree, excluded, rules, MAX_LISTED)
}

/// [`list`], through at most `max_entries` entries.
fn list_within(
    work_tree: &Path,
    excluded: &[String],
    rules: &[PathBuf],
    max_entries: usize,
) -> Listed {
    let mut hasher = Sha256::new();
    for rule in rules {
        let content = std::fs::read(rule).unwrap_or_default();
        hasher.update(content.len().to_be_bytes());
        hasher.update(&content);
    }
    let mut ignore_files = Vec::new();
    let mut folders: Vec<Vec<u8>> = vec![Vec::new()];
    let mut seen = 0usize;
    while let Some(folder) = folders.pop() {
        let mut names = Vec::new();
        let Ok(entries) = std::fs::read_dir(work_tree.join(OsStr::from_bytes(&folder))) else {
            return Listed::Unknown;
        };
        for entry in entries {
            seen += 1;
            if seen > max_entries {
                return Listed::TooMany;
            }
            match entry.and_then(|entry| Ok((entry.file_name(), entry.file_type()?))) {
                Ok(named) => names.push(named),
                Err(_) => return Listed::Unknown,
            }
        }
        names.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        // Folders are pushed in reverse, so that they are listed in order.
        let mut below = Vec::new();
        for (name, kind) in names {
            if name == GIT {
                if folder.is_empty() {
                    continue;
                }
                return Listed::Unknown;
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
    Listed::Within(Listing { digest: hex(&hasher.finalize()), ignore_files })
}

/// The person's global ignore file, where git looks for it when no config names one.
pub(super) fn global_ignore_file() -> Option<PathBuf> {
    match std::env::var_os("XDG_CONFIG_HOME").filter(|home| !home.is_empty()) {
        Some(config) => Some(PathBuf::from(config).join("git/ignore")),
        None => std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".config/git/ignore")),
    }
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
