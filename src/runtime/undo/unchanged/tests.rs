//! [`super`] against real git: what a snapshot notes, and every change that voids the note.

use super::*;
use crate::runtime::undo::Shadow;
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

    /// The workspace's listing, with the ignore rules the shadow repository hashes into it.
    fn listing(&self) -> Listing {
        let mut rules = vec![self.state.path().join("shadow.git/info/exclude")];
        rules.extend(global_ignore_file());
        match list(self.work.path(), &[], &rules) {
            Listed::Within(listing) => listing,
            other => panic!("not listed: {other:?}"),
        }
    }

    /// What a snapshot would find now.
    fn look(&self) -> Look {
        self.shadow().look()
    }

    /// The tree the note vouches for, now.
    fn vouched(&self) -> Option<ObjectId> {
        match self.look() {
            Look::Unchanged(tree) => Some(tree),
            _ => None,
        }
    }

    /// Takes a snapshot and notes it as the shadow does.
    fn snapshot(&self) -> ObjectId {
        self.shadow().snapshot().unwrap()
    }

    fn note(&self) -> String {
        std::fs::read_to_string(index_note::path(&self.index(), NOTE_SUFFIX)).unwrap_or_default()
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
    // A change to a file the index holds ends the look before the listing (`Unknown`); a path
    // that appeared is seen by the listing, noted for the snapshot after (`Listed`).
    let changes: [(&str, Change, bool); 7] = [
        // The same size, within the second the index was written in: only the bytes differ.
        ("rewritten", |w| std::fs::write(w.join("a.txt"), "bbb\n").unwrap(), false),
        (
            "made executable",
            |w| {
                std::fs::set_permissions(w.join("a.txt"), std::fs::Permissions::from_mode(0o755))
                    .unwrap();
            },
            false,
        ),
        ("removed", |w| std::fs::remove_file(w.join("a.txt")).unwrap(), false),
        ("a new file", |w| std::fs::write(w.join("n.txt"), "").unwrap(), true),
        ("a new folder", |w| std::fs::create_dir(w.join("n")).unwrap(), true),
        ("renamed", |w| std::fs::rename(w.join("a.txt"), w.join("b.txt")).unwrap(), false),
        (
            "made a symlink",
            |w| {
                std::fs::remove_file(w.join("a.txt")).unwrap();
                std::os::unix::fs::symlink("aaa", w.join("a.txt")).unwrap();
            },
            false,
        ),
    ];
    for (what, change, listed) in changes {
        let fixture = Fixture::new();
        fixture.snapshot();
        change(fixture.work.path());
        let look = fixture.look();
        assert_eq!(matches!(look, Look::Listed(_)), listed, "{what}: {look:?}");
        assert_eq!(matches!(look, Look::Unknown), !listed, "{what}: {look:?}");
    }
}

/// Makes the index's only entry cache the status `a.txt` has now, as if git had looked at the
/// file after it changed but read it before, and notes the index as a snapshot would.
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
    note(&fixture.index(), &Look::Listed(fixture.listing()), tree, true);
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
    // A snapshot of the same bytes gives the same tree. It ended its look at the changed file,
    // so it listed nothing to note; the snapshot after it does, and vouches again.
    assert_eq!(fixture.snapshot(), taken);
    assert_eq!(fixture.vouched(), None);
    assert_eq!(fixture.snapshot(), taken);
    assert_eq!(fixture.vouched(), Some(taken));
}

#[test]
fn what_no_listing_sees_writes_no_note() {
    // A nested repository: git records it by a `HEAD` no listing reads.
    let nested = Fixture::new();
    nested.write("sub/.git/HEAD", "ref: refs/heads/main\n");
    nested.snapshot();
    assert_eq!(nested.look(), Look::Unknown);
    assert_eq!(nested.note(), "");
    // A `.gitignore` git ignores: the index does not hold it, so nothing checks its rules.
    let ignored = Fixture::new();
    ignored.write(".git/info/exclude", ".gitignore\n");
    ignored.write(".gitignore", "*.log\n");
    ignored.snapshot();
    assert_eq!(ignored.note(), "");
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
    let place = |index| Place { index, work_tree: fixture.work.path(), excluded: &[], rules: &[] };
    assert!(matches!(look(place(&fixture.index()), |_| false), Look::Listed(_)), "objects gone");
    let noted = fixture.note();
    for note in ["", "x y", "listed a b c", &noted.replace(taken.as_str(), "0")] {
        std::fs::write(index_note::path(&fixture.index(), NOTE_SUFFIX), note).unwrap();
        assert_eq!(fixture.vouched(), None, "{note:?}");
    }
    std::fs::write(index_note::path(&fixture.index(), NOTE_SUFFIX), &noted).unwrap();
    assert_eq!(fixture.vouched(), Some(taken));
    let mut bytes = std::fs::read(fixture.index()).unwrap();
    bytes.push(0);
    std::fs::write(fixture.index(), bytes).unwrap();
    assert_eq!(fixture.vouched(), None, "another index");
}

#[test]
fn a_workspace_too_large_to_list_is_not_listed_again_while_its_index_stays() {
    let fixture = Fixture::new();
    // Ignored, so not in the index: only the listing goes through them.
    fixture.write(".gitignore", "d*/\n");
    for file in 0..MAX_LISTED {
        fixture.write(&format!("d{}/f{file}", file % 20), "");
    }
    fixture.snapshot();
    assert!(fixture.note().starts_with(Note::TOO_MANY), "{}", fixture.note());
    assert_eq!(fixture.look(), Look::TooMany);
    // Fewer entries now, but the index is the one the note names: not listed again.
    std::fs::remove_dir_all(fixture.work.path().join("d3")).unwrap();
    assert_eq!(fixture.look(), Look::TooMany);
    // An index that holds more than a listing would go through says so itself.
    for file in 0..MAX_LISTED / 10 {
        fixture.write(&format!("e/f{file}"), "");
    }
    std::fs::remove_file(fixture.work.path().join(".gitignore")).unwrap();
    fixture.snapshot();
    assert_eq!(fixture.look(), Look::LargeIndex);
    // A workspace small enough, indexed anew, is listed again.
    std::fs::remove_dir_all(fixture.work.path()).unwrap();
    std::fs::create_dir(fixture.work.path()).unwrap();
    fixture.write("a.txt", "aaa\n");
    fixture.snapshot();
    assert_eq!(fixture.note(), "", "the look was at an index too large");
    assert!(matches!(fixture.look(), Look::Listed(_)));
    fixture.snapshot();
    assert!(fixture.note().starts_with(Note::LISTED), "{}", fixture.note());
}

#[test]
fn the_listing_holds_names_and_kinds_and_the_rules_outside() {
    let dir = tempfile::tempdir().unwrap();
    let (work, rules) = (dir.path().join("w"), dir.path().join("ignore"));
    std::fs::create_dir_all(work.join("keel/state")).unwrap();
    std::fs::write(work.join(".gitignore"), "").unwrap();
    let listed = || list(&work, &["keel/state".to_owned()], std::slice::from_ref(&rules));
    let Listed::Within(first) = listed() else { panic!("not listed") };
    assert_eq!(first.ignore_files, vec![b".gitignore".to_vec()]);
    // What the listing leaves out: the excluded path, and the workspace's own `.git`.
    std::fs::write(work.join("keel/state/log"), "").unwrap();
    std::fs::create_dir(work.join(".git")).unwrap();
    assert_eq!(listed(), Listed::Within(first.clone()));
    std::fs::write(&rules, "*.txt\n").unwrap();
    assert_ne!(listed(), Listed::Within(first), "the rules outside changed");
    assert_eq!(list_within(&work, &[], &[], 2), Listed::TooMany, "past the limit");
    std::fs::create_dir_all(work.join("sub/.git")).unwrap();
    assert_eq!(list_within(&work, &[], &[], MAX_LISTED), Listed::Unknown, "a nested repository");
}
