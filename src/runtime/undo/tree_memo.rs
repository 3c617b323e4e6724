//! The tree a snapshot's private index last gave. `git write-tree` builds the tree from the
//! index's entries alone — each path, its mode and its object id, all of which `git add` has just
//! brought up to date, re-reading any file whose time stamps it cannot trust — so an index whose
//! entries are those of the last snapshot gives the tree that snapshot wrote. Such a snapshot
//! (after a command that only read, or at a turn's start when nothing changed since the last)
//! reuses that tree and runs one git process instead of two; the tree is the one `write-tree`
//! would print, so undo sees no difference.
//!
//! Only the entries count, not the file around them: `git add` rewrites the index for a file
//! changed within the same second as the index was written, to refresh the time stamps it keeps
//! of it, although its entry stays as it was. The entries are hashed with SHA-256, so no command
//! can make another workspace's entries look like these. The note lives beside the index, in
//! keel's state folder, which commands cannot write; a tree it names is used only while the
//! snapshot reference that keeps its objects exists. An index keel does not read whole (another
//! version, a split or sparse index, a conflict) is never remembered.

use super::git_output::ObjectId;
use super::index_file::{self, SHA1_BYTES};
use super::index_note::{self, hex};
use sha2::{Digest, Sha256};
use std::path::Path;

/// Added to the index's file name for the note's.
const NOTE_SUFFIX: &str = ".tree";
/// A SHA-1 object id, as hex digits.
const SHA1_HEX: usize = 40;

/// What an index's entries hash to: read once a snapshot, before `write-tree`, which changes
/// only the index's cached trees, not its entries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Entries(String);

/// `index`'s entries now; `None` for an index not read whole here. The shadow repository's ids
/// are SHA-1 (it is made in format version 0).
pub(super) fn entries(index: &Path) -> Option<Entries> {
    entries_digest(&std::fs::read(index).ok()?, SHA1_BYTES).map(Entries)
}

/// The tree the index gave when its `entries` were last written through, if they were these,
/// and the tree's objects are still kept (`kept`).
pub(super) fn remembered(
    index: &Path,
    entries: &Entries,
    kept: impl Fn(&ObjectId) -> bool,
) -> Option<ObjectId> {
    let note = index_note::read(index, NOTE_SUFFIX)?;
    let (digest, tree) = note.trim_end().split_once(' ')?;
    let tree = ObjectId::parse(tree)?;
    (digest == entries.0 && kept(&tree)).then_some(tree)
}

/// Notes that the index's `entries` give `tree`. Best effort: without the note the next
/// snapshot runs `write-tree`, as it always did.
pub(super) fn remember(index: &Path, entries: Option<&Entries>, tree: &ObjectId) {
    let digest = match entries {
        Some(Entries(digest)) if tree.as_str().len() == SHA1_HEX => digest,
        _ => {
            forget(index);
            return;
        }
    };
    index_note::write(index, NOTE_SUFFIX, &format!("{digest} {}\n", tree.as_str()));
}

/// Drops the note: `index` is being started again.
pub(super) fn forget(index: &Path) {
    index_note::forget(index, NOTE_SUFFIX);
}

/// SHA-256 of every entry of the index `bytes` but its cached file status, as hex; `None` for an
/// index not read whole here.
fn entries_digest(bytes: &[u8], id_bytes: usize) -> Option<String> {
    let index = index_file::parse(bytes, id_bytes)?;
    let mut hasher = Sha256::new();
    hasher.update(index.header);
    for entry in &index.entries {
        hasher.update(entry.status.mode.to_be_bytes());
        hasher.update(entry.named);
        hasher.update([0]);
    }
    Some(hex(&hasher.finalize()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::undo::index_file::{
        ENTRY_ALIGN, HEADER_BYTES, MODE_BYTES, STAT_AFTER_MODE, STAT_BEFORE_MODE,
    };

    /// A version-2 index of `entries` (path, mode, object id byte, file size), with a cache
    /// extension and a checksum (not checked here).
    fn index(entries: &[(&str, u32, u8, u32)], extension: &[u8; 4]) -> Vec<u8> {
        let mut bytes = b"DIRC".to_vec();
        bytes.extend(2u32.to_be_bytes());
        bytes.extend(u32::try_from(entries.len()).unwrap().to_be_bytes());
        for &(path, mode, id, size) in entries {
            let start = bytes.len();
            bytes.extend([7; STAT_BEFORE_MODE]);
            bytes.extend(mode.to_be_bytes());
            bytes.extend([0; 8]);
            bytes.extend(size.to_be_bytes());
            bytes.extend([id; SHA1_BYTES]);
            bytes.extend(u16::try_from(path.len()).unwrap().to_be_bytes());
            bytes.extend(path.as_bytes());
            bytes.push(0);
            while !(bytes.len() - start).is_multiple_of(ENTRY_ALIGN) {
                bytes.push(0);
            }
        }
        bytes.extend(extension);
        bytes.extend(3u32.to_be_bytes());
        bytes.extend(b"abc");
        bytes.extend([9; SHA1_BYTES]);
        bytes
    }

    /// The tree remembered for `path`'s entries as they are now.
    fn recalled(path: &Path, kept: impl Fn(&ObjectId) -> bool) -> Option<ObjectId> {
        entries(path).and_then(|entries| remembered(path, &entries, kept))
    }

    fn tree(hex: char) -> ObjectId {
        ObjectId::parse(&hex.to_string().repeat(SHA1_HEX)).unwrap()
    }

    #[test]
    fn the_same_entries_give_the_tree_they_gave() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("index");
        let written = [("a.txt", 0o100644, 1, 4), ("dir/long-name.rs", 0o100755, 2, 90)];
        std::fs::write(&path, index(&written, b"TREE")).unwrap();
        remember(&path, entries(&path).as_ref(), &tree('a'));
        assert_eq!(recalled(&path, |_| true), Some(tree('a')));
        assert_eq!(recalled(&path, |_| false), None, "a tree whose objects are gone");
        // `git add` refreshed what it keeps of a file's status (a racily clean one's size is
        // zeroed): the entries are the same.
        let refreshed = [("a.txt", 0o100644, 1, 0), ("dir/long-name.rs", 0o100755, 2, 90)];
        std::fs::write(&path, index(&refreshed, b"TREE")).unwrap();
        assert_eq!(recalled(&path, |_| true), Some(tree('a')));
        // Another object, mode or path: another tree.
        for changed in [
            [("a.txt", 0o100644, 3, 4), ("dir/long-name.rs", 0o100755, 2, 90)],
            [("a.txt", 0o100755, 1, 4), ("dir/long-name.rs", 0o100755, 2, 90)],
            [("a.txt", 0o100644, 1, 4), ("dir/long-name.RS", 0o100755, 2, 90)],
        ] {
            std::fs::write(&path, index(&changed, b"TREE")).unwrap();
            assert_eq!(recalled(&path, |_| true), None, "{changed:?}");
        }
    }

    #[test]
    fn an_index_not_read_whole_is_never_remembered() {
        let entries = [("a.txt", 0o100644, 1, 4)];
        assert!(entries_digest(&index(&entries, b"TREE"), SHA1_BYTES).is_some());
        assert!(entries_digest(&index(&entries, b"link"), SHA1_BYTES).is_none(), "split");
        assert!(entries_digest(&index(&entries, b"sdir"), SHA1_BYTES).is_none(), "sparse");
        let mut v4 = index(&entries, b"TREE");
        v4[7] = 4;
        assert!(entries_digest(&v4, SHA1_BYTES).is_none(), "version 4");
        let whole = index(&entries, b"TREE");
        for cut in [0, 11, 40, whole.len() - 30] {
            assert!(entries_digest(&whole[..cut], SHA1_BYTES).is_none(), "cut at {cut}");
        }
        let mut conflicted = index(&entries, b"TREE");
        let flags_at = HEADER_BYTES + STAT_BEFORE_MODE + MODE_BYTES + STAT_AFTER_MODE + SHA1_BYTES;
        conflicted[flags_at] |= 0x10;
        assert!(entries_digest(&conflicted, SHA1_BYTES).is_none(), "a merge stage");
    }

    #[test]
    fn a_damaged_note_is_no_tree() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("index");
        std::fs::write(&path, index(&[("a.txt", 0o100644, 1, 4)], b"TREE")).unwrap();
        for note in ["", "12", "50 HEAD", "abc --output=/tmp/x\n"] {
            std::fs::write(index_note::path(&path, NOTE_SUFFIX), note).unwrap();
            assert_eq!(recalled(&path, |_| true), None, "{note:?}");
        }
        forget(&path);
        assert!(!index_note::path(&path, NOTE_SUFFIX).exists());
    }
}
