//! Repositories a command makes below the workspace's top (`sub/.git`), or anywhere git would
//! find one (`sub/HEAD` with `sub/objects/` and `sub/refs/`, or the top itself made so: see
//! [`git_dirs`](super::git_dirs)). The sandbox pins the workspace's own `.git` and keeps what in it runs code
//! read-only, but no mount can foresee a folder a command has yet to make, and git obeys the
//! config and hooks of whatever repository it finds where it runs: a `core.fsmonitor` a sandboxed
//! command wrote into `sub/.git/config` would run outside any sandbox as soon as the person, or
//! their shell's prompt, ran `git status` in `sub/`.
//!
//! So as a session opens the agent notes every repository below the top, and a top that is one
//! without a `.git` (each by the identity of its `.git` or `HEAD`, so one put in another's place
//! counts as new), and binds each read-only into every command's sandbox (a command could
//! otherwise write their hooks and config just as well); and as each turn that follows a command
//! ends it looks again: a `.git` that appeared since is moved aside, in its folder, to
//! `.git-quarantined` (numbered when that is taken), where git does not look, and a `HEAD` that
//! made a folder a repository to `HEAD-quarantined`, which leaves the folder none; the person is
//! told how to put it back. A `.git` file that points into the workspace's own `.git/modules` or
//! `.git/worktrees` — a submodule or a linked worktree the person made, since commands cannot
//! write there — is left as it is. Renames go through a descriptor of the folder, opened beneath
//! the workspace, so a symlink swapped in meanwhile cannot send them elsewhere; what keel moved
//! aside is not taken for a repository of its own later.
//!
//! The look is bounded: past [`MAX_ENTRIES`] entries it stops. When the look as the session opened
//! stopped short, no later look can tell a new `.git` from one it did not reach, so none is moved
//! and the person is told; when a later one does, what lies past it is not looked at.

mod quarantine;

use super::git_dirs::{HEAD, Signs};
use quarantine::quarantine_new;
use std::collections::{HashMap, HashSet};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The name git looks for.
const GIT: &str = ".git";
/// The most entries a look goes through.
pub const MAX_ENTRIES: usize = 300_000;

/// The repositories in the workspace, each by its mark — a `.git` below the top, or the `HEAD`
/// of a folder git takes for a repository — with the mark's identity (device, inode).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scan {
    found: HashMap<PathBuf, (u64, u64)>,
    /// Whether the look went through every entry.
    pub complete: bool,
    /// Folders the look does not go into: keel's own (its state folder, with undo's
    /// repositories, when the workspace holds it) and what keel moved aside (a repository
    /// itself, but the person's to look at, never new).
    passed_over: HashSet<PathBuf>,
}

impl Scan {
    /// What to keep read-only to commands, one path for each repository found, in no particular
    /// order: a `.git`; the folder a `HEAD` makes a repository; at the top, which cannot be read-only
    /// whole, its `HEAD`, `config` and `hooks`.
    pub fn protected(&self, root: &Path) -> Vec<PathBuf> {
        let mut paths = Vec::new();
        for mark in self.found.keys() {
            match mark.parent() {
                Some(folder) if mark.file_name() == Some(HEAD.as_ref()) && folder == root => {
                    let parts = [HEAD, "config", "hooks"].map(|name| folder.join(name));
                    paths.extend(parts.into_iter().filter(|part| part.symlink_metadata().is_ok()));
                }
                Some(folder) if mark.file_name() == Some(HEAD.as_ref()) => {
                    paths.push(folder.to_path_buf());
                }
                _ => paths.push(mark.clone()),
            }
        }
        paths
    }
}

/// Looks through the workspace at `root` for repositories: `.git` entries below its top (not
/// inside one), and folders git takes for one, the top included; never into `passed_over`.
pub fn scan(root: &Path, passed_over: &[PathBuf]) -> Scan {
    scan_within(root, MAX_ENTRIES, &passed_over.iter().cloned().collect())
}

/// [`scan`], through at most `max_entries` entries, passing over what keel moved aside.
fn scan_within(root: &Path, max_entries: usize, passed_over: &HashSet<PathBuf>) -> Scan {
    let mut found = HashMap::new();
    let mut folders = vec![root.to_path_buf()];
    let mut seen = 0;
    let done = |found, complete| Scan { found, complete, passed_over: passed_over.clone() };
    while let Some(folder) = folders.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else { continue };
        let mut signs = Signs::default();
        for entry in entries.flatten() {
            seen += 1;
            if seen > max_entries {
                return done(found, false);
            }
            // Only folders and `.git` entries are named in full: most entries are neither.
            let name = entry.file_name();
            if name == GIT {
                if folder != root
                    && let Ok(meta) = entry.metadata()
                {
                    found.insert(entry.path(), (meta.dev(), meta.ino()));
                }
                continue;
            }
            let Ok(kind) = entry.file_type() else { continue };
            signs.note(&name, !kind.is_dir());
            if kind.is_dir() {
                let path = entry.path();
                if !passed_over.contains(&path) {
                    folders.push(path);
                }
            }
        }
        if signs.repository() && !passed_over.contains(&folder) {
            let head = folder.join(HEAD);
            if let Ok(meta) = head.symlink_metadata() {
                found.insert(head, (meta.dev(), meta.ino()));
            }
        }
    }
    done(found, true)
}

/// What a look found and did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Settled {
    /// What the next look starts from: what is there now, less what was moved.
    pub scan: Scan,
    /// What to tell the person, one line each.
    pub told: Vec<String>,
    /// The marks (`sub/.git`, `sub/HEAD`) moved aside.
    pub moved: Vec<PathBuf>,
}

/// Looks again, and moves aside every mark of a repository that `before` did not hold (as that
/// very entry), unless it points into the workspace's own repository.
/// After an incomplete `before` nothing is looked at: a `.git` it did not reach is not new.
pub fn settle(root: &Path, before: &Scan) -> Settled {
    if !before.complete {
        return Settled { scan: before.clone(), ..Settled::default() };
    }
    let mut now = scan_within(root, MAX_ENTRIES, &before.passed_over);
    let (told, moved) = quarantine_new(root, before, &mut now);
    Settled { scan: now, told, moved }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::testing::{files, folder, folders};

    #[test]
    fn only_entries_below_the_top_are_found() {
        let (_work, root) = &folder();
        folders(root, &[".git/modules/x/.git", "a/b/.git/c/.git"]);
        files(root, &[("d.git", "")]);
        let found = scan(root, &[]);
        assert!(found.complete);
        let mut paths: Vec<_> = found.found.keys().cloned().collect();
        paths.sort();
        assert_eq!(paths, vec![root.join("a/b/.git")], "not the top's, not inside one");
    }

    #[test]
    fn after_a_look_that_stopped_short_nothing_is_moved() {
        let (_work, root) = &folder();
        folders(root, &["a/.git", "b/.git", "c/.git", "d/.git"]);
        let short = scan_within(root, 3, &HashSet::new());
        assert!(!short.complete);
        let settled = settle(root, &short);
        assert!(settled.told.is_empty(), "{:?}", settled.told);
        assert_eq!(settled.scan, short);
        for folder in ["a", "b", "c", "d"] {
            assert!(root.join(folder).join(".git").is_dir(), "{folder} was moved");
        }
    }

    /// Makes `folder` what git takes for a bare repository.
    fn bare(folder: &Path) {
        folders(folder, &["objects", "refs"]);
        files(folder, &[("HEAD", "ref: refs/heads/main\n")]);
    }

    #[test]
    fn a_folder_git_takes_for_a_repository_is_one_at_the_top_and_below() {
        let (_work, root) = &folder();
        let before = scan(root, &[]);
        bare(&root.join("sub"));
        bare(root);
        folders(root, &["lib/objects"]);
        files(root, &[("lib/HEAD", "not a repository: no refs\n")]);
        let settled = settle(root, &before);
        let mut moved = settled.moved.clone();
        moved.sort();
        assert_eq!(moved, vec![root.join("HEAD"), root.join("sub/HEAD")], "{:?}", settled.told);
        assert!(root.join("sub/HEAD-quarantined").is_file() && !root.join("sub/HEAD").exists());
        assert!(root.join("HEAD-quarantined").is_file());
        assert!(root.join("lib/HEAD").is_file(), "no refs: no repository");
        let told = settled.told.join("\n");
        assert!(told.contains("a command made sub a git repository"), "{told}");
        assert!(told.contains("`mv sub/HEAD-quarantined sub/HEAD`"), "{told}");
        assert!(told.contains("made the workspace's top a git repository"), "{told}");
    }

    #[test]
    fn what_keel_passed_over_is_not_taken_for_a_new_repository() {
        let (_work, root) = &folder();
        let before = scan(root, &[]);
        bare(&root.join("sub/.git"));
        let first = settle(root, &before);
        assert_eq!(first.moved, vec![root.join("sub/.git")]);
        let second = settle(root, &first.scan);
        assert!(second.told.is_empty() && second.moved.is_empty(), "{:?}", second.told);
        assert!(root.join("sub/.git-quarantined/HEAD").is_file());
        // One that was there as the session opened is the person's: kept, and read-only.
        bare(&root.join("theirs"));
        let opened = scan(root, &[]);
        assert!(settle(root, &opened).moved.is_empty());
        assert!(opened.protected(root).contains(&root.join("theirs")));
    }
}
