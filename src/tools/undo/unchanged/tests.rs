//! [`super`] against real git: what a snapshot notes, and every change that voids the note.

use super::*;
use crate::tools::undo::Shadow;
use std::os::unix::fs::PermissionsExt;

/// A workspace with `a.txt`, and a shadow repository for it in a folder of its own.
struct Fixture {
    work: tempfile::TempDir,
    state: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Self {
        let fixture =
            Self { work: tempfile::tempdir().unwrap(), state: tempfile::tempdir().unwrap() };
        fixture.write("a.txt", "aaa\n");
        fixture
    }

    fn write(&self, path: &str, content: &str) {
        let path = self.work.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }

    fn index(&self) -> PathBuf {
        self.state.path().join("index")
    }

    fn shadow(&self) -> Shadow {
        let state = self.state.path();
        Shadow::new(state.join("shadow.git"), self.work.path().to_owned(), self.index())
    }

    fn listing(&self) -> Option<Listing> {
        self.shadow().listing()
    }

    /// The tree the note vouches for, now.
    fn vouched(&self) -> Option<ObjectId> {
        tree(&self.index(), self.work.path(), &self.listing()?, |_| true)
    }

    /// Takes a snapshot and notes it as the shadow does.
    fn snapshot(&self) -> ObjectId {
        self.shadow().snapshot().unwrap()
    }
}

#[test]
fn a_workspace_as_the_snapshot_left_it_is_vouched_for() {
    let fixture = Fixture::new();
    fixture.write("d/b.txt", "bbb\n");
    let taken = fixture.snapshot();
    assert_eq!(fixture.vouched(), Some(taken.clone()));
    // Reading changes nothing; neither does anything inside the workspace's own `.git`.
    let _ = std::fs::read(fixture.work.path().join("a.txt")).unwrap();
    fixture.write(".git/HEAD", "ref: refs/heads/main\n");
    assert_eq!(fixture.vouched(), Some(taken));
}

/// Something done to the workspace at the given path.
type Change = fn(&Path);

#[test]
fn every_change_git_would_see_is_seen() {
    let changes: [(&str, Change); 7] = [
        // The same size, within the second the index was written in: only the bytes differ.
        ("rewritten", |w| std::fs::write(w.join("a.txt"), "bbb\n").unwrap()),
        ("made executable", |w| {
            std::fs::set_permissions(w.join("a.txt"), std::fs::Permissions::from_mode(0o755))
                .unwrap();
        }),
        ("removed", |w| std::fs::remove_file(w.join("a.txt")).unwrap()),
        ("a new file", |w| std::fs::write(w.join("n.txt"), "").unwrap()),
        ("a new folder", |w| std::fs::create_dir(w.join("n")).unwrap()),
        ("renamed", |w| std::fs::rename(w.join("a.txt"), w.join("b.txt")).unwrap()),
        ("made a symlink", |w| {
            std::fs::remove_file(w.join("a.txt")).unwrap();
            std::os::unix::fs::symlink("aaa", w.join("a.txt")).unwrap();
        }),
    ];
    for (what, change) in changes {
        let fixture = Fixture::new();
        fixture.snapshot();
        change(fixture.work.path());
        assert_eq!(fixture.vouched(), None, "{what}");
    }
}

/// Makes the index's only entry cache the status `a.txt` has now, as if git had looked at
/// the file after it changed but read it before, and notes the index as a snapshot would.
fn cache_status_now(fixture: &Fixture, tree: &ObjectId) {
    let meta = std::fs::symlink_metadata(fixture.work.path().join("a.txt")).unwrap();
    let mut bytes = std::fs::read(fixture.index()).unwrap();
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let status = [
        meta.ctime() as u32,
        meta.ctime_nsec() as u32,
        meta.mtime() as u32,
        meta.mtime_nsec() as u32,
        meta.dev() as u32,
        meta.ino() as u32,
    ];
    let at = index_file::HEADER_BYTES;
    for (word, value) in status.iter().enumerate() {
        bytes[at + 4 * word..at + 4 * word + 4].copy_from_slice(&value.to_be_bytes());
    }
    std::fs::write(fixture.index(), bytes).unwrap();
    remember(&fixture.index(), &fixture.listing().unwrap(), tree);
}

#[test]
fn a_racily_clean_file_is_read() {
    let fixture = Fixture::new();
    let taken = fixture.snapshot();
    // The same size, so only the bytes tell: git's cached status matches, but it was cached
    // within the second the index was written in.
    fixture.write("a.txt", "bbb\n");
    cache_status_now(&fixture, &taken);
    assert_eq!(fixture.vouched(), None, "other bytes");
    fixture.write("a.txt", "aaa\n");
    cache_status_now(&fixture, &taken);
    assert_eq!(fixture.vouched(), Some(taken), "the entry's own bytes");
}

#[test]
fn the_same_bytes_written_again_are_snapshotted_by_git() {
    let fixture = Fixture::new();
    let taken = fixture.snapshot();
    // Its times changed, so git's cached status no longer vouches for it.
    fixture.write("a.txt", "aaa\n");
    assert_eq!(fixture.vouched(), None);
    // A snapshot of the same bytes gives the same tree, and vouches again.
    assert_eq!(fixture.snapshot(), taken);
    assert_eq!(fixture.vouched(), Some(taken));
}

#[test]
fn what_no_listing_sees_writes_no_note() {
    // A nested repository: git records it by a `HEAD` no listing reads.
    let nested = Fixture::new();
    nested.write("sub/.git/HEAD", "ref: refs/heads/main\n");
    nested.snapshot();
    assert_eq!(nested.listing(), None);
    assert!(!note_path(&nested.index()).exists());
    // A `.gitignore` git ignores: the index does not hold it, so nothing checks its rules.
    let ignored = Fixture::new();
    ignored.write(".git/info/exclude", ".gitignore\n");
    ignored.write(".gitignore", "*.log\n");
    ignored.snapshot();
    assert!(!note_path(&ignored.index()).exists());
    // A tracked one is covered like any file.
    let tracked = Fixture::new();
    tracked.write(".gitignore", "*.log\n");
    tracked.snapshot();
    assert!(tracked.vouched().is_some());
    tracked.write(".gitignore", "*.txt\n");
    assert_eq!(tracked.vouched(), None);
}

#[test]
fn a_note_for_another_index_or_tree_vouches_for_nothing() {
    let fixture = Fixture::new();
    let taken = fixture.snapshot();
    let listing = fixture.listing().unwrap();
    assert_eq!(tree(&fixture.index(), fixture.work.path(), &listing, |_| false), None);
    let mut bytes = std::fs::read(fixture.index()).unwrap();
    bytes.push(0);
    std::fs::write(fixture.index(), bytes).unwrap();
    assert_eq!(fixture.vouched(), None, "another index");
    for note in ["", "x y", &format!("{} {} {}", listing.digest, "0", taken.as_str())] {
        std::fs::write(note_path(&fixture.index()), note).unwrap();
        assert_eq!(fixture.vouched(), None, "{note:?}");
    }
}

#[test]
fn the_listing_holds_names_and_kinds_and_the_rules_outside() {
    let dir = tempfile::tempdir().unwrap();
    let (work, rules) = (dir.path().join("w"), dir.path().join("ignore"));
    std::fs::create_dir_all(work.join("keel/state")).unwrap();
    std::fs::write(work.join(".gitignore"), "").unwrap();
    let listed = || list(&work, &["keel/state".to_owned()], std::slice::from_ref(&rules));
    let first = listed().unwrap();
    assert_eq!(first.ignore_files, vec![b".gitignore".to_vec()]);
    // What the listing leaves out: the excluded path, and the workspace's own `.git`.
    std::fs::write(work.join("keel/state/log"), "").unwrap();
    std::fs::create_dir(work.join(".git")).unwrap();
    assert_eq!(listed(), Some(first.clone()));
    std::fs::write(&rules, "*.txt\n").unwrap();
    assert_ne!(listed(), Some(first), "the rules outside changed");
    assert_eq!(list_within(&work, &[], &[], 2), None, "past the limit");
}
