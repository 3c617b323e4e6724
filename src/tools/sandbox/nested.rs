//! Repositories a command makes below the workspace's top (`sub/.git`). The sandbox pins the
//! workspace's own `.git` and keeps what in it runs code read-only, but no mount can foresee a
//! folder a command has yet to make, and git obeys the config and hooks of whatever repository it
//! finds where it runs: a `core.fsmonitor` a sandboxed command wrote into `sub/.git/config` would
//! run outside any sandbox as soon as the person, or their shell's prompt, ran `git status` in
//! `sub/`.
//!
//! So as a session opens the agent notes every `.git` below the top (each by its identity, so one
//! put in another's place counts as new), and binds each read-only into every command's sandbox
//! (a command could otherwise write their hooks and config just as well); and as each turn that
//! follows a command ends it looks again:
//! a `.git` that appeared since is moved aside, in its folder, to `.git-quarantined` (numbered
//! when that is taken), where git does not look, and the person is told how to put it back. A
//! `.git` file that points into the workspace's own `.git/modules` or `.git/worktrees` — a
//! submodule or a linked worktree the person made, since commands cannot write there — is left
//! as it is. Renames go through a descriptor of the folder, opened beneath the workspace, so a
//! symlink swapped in meanwhile cannot send them elsewhere.
//!
//! The look is bounded: past [`MAX_ENTRIES`] entries it stops. When the look as the session opened
//! stopped short, no later look can tell a new `.git` from one it did not reach, so none is moved
//! and the person is told; when a later one does, what lies past it is not looked at.

use crate::tools::beneath;
use std::collections::HashMap;
use std::io::Read;
use std::os::fd::AsFd;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};

/// The name git looks for.
const GIT: &str = ".git";
/// What a moved `.git` is called, with a number after it when that is taken.
const QUARANTINE: &str = ".git-quarantined";
const QUARANTINE_TRIES: usize = 100;
/// The most entries a look goes through.
pub const MAX_ENTRIES: usize = 300_000;
/// A `.git` file's pointer, and the most of it read.
const GITDIR_PREFIX: &str = "gitdir:";
const POINTER_LIMIT: u64 = 4096;
/// Where the workspace's own repository keeps its submodules' and linked worktrees' folders.
const PERSONS_FOLDERS: [&str; 2] = [".git/modules", ".git/worktrees"];

/// The `.git` entries below the workspace's top, each with its identity (device, inode).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scan {
    found: HashMap<PathBuf, (u64, u64)>,
    /// Whether the look went through every entry.
    pub complete: bool,
}

impl Scan {
    /// The `.git` entries found, in no particular order.
    pub fn repositories(&self) -> impl Iterator<Item = &Path> {
        self.found.keys().map(PathBuf::as_path)
    }
}

/// Looks through the workspace at `root` for `.git` entries below its top (not inside one).
pub fn scan(root: &Path) -> Scan {
    scan_within(root, MAX_ENTRIES)
}

/// [`scan`], through at most `max_entries` entries.
fn scan_within(root: &Path, max_entries: usize) -> Scan {
    let mut found = HashMap::new();
    let mut folders = vec![root.to_path_buf()];
    let mut seen = 0;
    while let Some(folder) = folders.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else { continue };
        for entry in entries.flatten() {
            seen += 1;
            if seen > max_entries {
                return Scan { found, complete: false };
            }
            // Only folders and `.git` entries are named in full: most entries are neither.
            if entry.file_name() == GIT {
                if folder != root
                    && let Ok(meta) = entry.metadata()
                {
                    found.insert(entry.path(), (meta.dev(), meta.ino()));
                }
            } else if entry.file_type().is_ok_and(|kind| kind.is_dir()) {
                folders.push(entry.path());
            }
        }
    }
    Scan { found, complete: true }
}

/// Looks again, and moves aside every `.git` that `before` did not hold (as that very entry),
/// unless it points into the workspace's own repository. Returns what the next look starts from
/// (what is there now, less what was moved) and what to tell the person, one line each.
/// After an incomplete `before` nothing is looked at: a `.git` it did not reach is not new.
pub fn settle(root: &Path, before: &Scan) -> (Scan, Vec<String>) {
    if !before.complete {
        return (before.clone(), Vec::new());
    }
    let mut now = scan(root);
    let told = quarantine_new(root, before, &mut now);
    (now, told)
}

fn quarantine_new(root: &Path, before: &Scan, now: &mut Scan) -> Vec<String> {
    let mut told = Vec::new();
    let mut new: Vec<PathBuf> = now
        .found
        .iter()
        .filter(|(path, identity)| before.found.get(*path) != Some(identity))
        .map(|(path, _)| path.clone())
        .collect();
    new.sort();
    for path in new {
        let Some(relative) = path.strip_prefix(root).ok().and_then(Path::parent) else { continue };
        if points_into_persons_repository(root, relative) {
            continue;
        }
        let shown = relative.join(GIT);
        told.push(match move_aside(root, relative) {
            Ok(moved) => {
                now.found.remove(&path);
                let moved = relative.join(&moved);
                format!(
                    "Moved {} aside to {}: a command made it, and git would run its hooks and \
                     settings outside the sandbox when used there. Look at them, then run `mv \
                     {} {}` in the workspace if you trust it.",
                    shown.display(),
                    moved.display(),
                    shell_word(&moved),
                    shell_word(&shown)
                )
            }
            Err(err) => format!(
                "A command made {}, and keel could not move it aside ({err}): git would run its \
                 hooks and settings outside the sandbox when used there. Check it before you \
                 run git in that folder.",
                shown.display()
            ),
        });
    }
    told
}

/// `path` as one word for the shell: a name a command chose must not run as a command when the
/// person pastes the line keel suggests.
fn shell_word(path: &Path) -> String {
    let text = path.to_string_lossy();
    shlex::try_quote(&text)
        .map_or_else(|_| text.escape_debug().to_string(), |word| word.into_owned())
}

/// Whether `folder/.git` is a file pointing into the workspace's `.git/modules` or
/// `.git/worktrees`.
fn points_into_persons_repository(root: &Path, folder: &Path) -> bool {
    let Ok(root_fd) = beneath::open_root(root) else { return false };
    let Ok(file) = beneath::open_for_reading(root_fd.as_fd(), &folder.join(GIT)) else {
        return false;
    };
    if !file.metadata().is_ok_and(|meta| meta.is_file()) {
        return false;
    }
    let mut pointer = String::new();
    if file.take(POINTER_LIMIT).read_to_string(&mut pointer).is_err() {
        return false;
    }
    let Some(target) = pointer.trim().strip_prefix(GITDIR_PREFIX).map(str::trim) else {
        return false;
    };
    let target = lexically_normal(&root.join(folder).join(target));
    PERSONS_FOLDERS.iter().any(|persons| target.starts_with(root.join(persons)))
}

/// `path` with `.` and `..` taken out by name alone.
fn lexically_normal(path: &Path) -> PathBuf {
    let mut normal = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                normal.pop();
            }
            Component::CurDir => {}
            other => normal.push(other),
        }
    }
    normal
}

/// Renames `folder/.git` to the first free quarantine name in `folder`; returns that name.
fn move_aside(root: &Path, folder: &Path) -> std::io::Result<PathBuf> {
    let root_fd = beneath::open_root(root)?;
    let dir = if folder.as_os_str().is_empty() {
        root_fd
    } else {
        beneath::open_folder(root_fd.as_fd(), folder)?
    };
    for attempt in 1..=QUARANTINE_TRIES {
        let name = match attempt {
            1 => PathBuf::from(QUARANTINE),
            n => PathBuf::from(format!("{QUARANTINE}-{n}")),
        };
        if beneath::metadata(dir.as_fd(), &name)?.is_some() {
            continue;
        }
        beneath::rename(dir.as_fd(), Path::new(GIT), &name)?;
        return Ok(name);
    }
    Err(std::io::Error::other("every quarantine name is taken"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_entries_below_the_top_are_found() {
        let work = tempfile::tempdir().unwrap();
        let root = work.path();
        std::fs::create_dir_all(root.join(".git/modules/x/.git")).unwrap();
        std::fs::create_dir_all(root.join("a/b/.git/c/.git")).unwrap();
        std::fs::write(root.join("d.git"), "").unwrap();
        let found = scan(root);
        assert!(found.complete);
        let mut paths: Vec<_> = found.found.keys().cloned().collect();
        paths.sort();
        assert_eq!(paths, vec![root.join("a/b/.git")], "not the top's, not inside one");
    }

    #[test]
    fn after_a_look_that_stopped_short_nothing_is_moved() {
        let work = tempfile::tempdir().unwrap();
        let root = work.path();
        for folder in ["a", "b", "c", "d"] {
            std::fs::create_dir_all(root.join(folder).join(".git")).unwrap();
        }
        let short = scan_within(root, 3);
        assert!(!short.complete);
        let (next, told) = settle(root, &short);
        assert!(told.is_empty(), "{told:?}");
        assert_eq!(next, short);
        for folder in ["a", "b", "c", "d"] {
            assert!(root.join(folder).join(".git").is_dir(), "{folder} was moved");
        }
    }

    #[test]
    fn the_suggested_move_back_runs_nothing_a_name_holds() {
        let work = tempfile::tempdir().unwrap();
        let root = work.path();
        let folder = root.join("x; touch pwned; y");
        std::fs::create_dir_all(folder.join(".git")).unwrap();
        let (_, told) = settle(root, &Scan { complete: true, ..Scan::default() });
        let line = told.first().expect("the move is told");
        let command = line.split('`').nth(1).expect("a command to paste");
        let ran = std::process::Command::new("sh")
            .args(["-c", command])
            .current_dir(root)
            .status()
            .unwrap();
        assert!(ran.success(), "{command}");
        assert!(folder.join(".git").is_dir(), "moved back: {command}");
        assert!(!root.join("pwned").exists(), "{command}");
    }

    #[test]
    fn a_pointer_into_the_persons_repository_is_theirs() {
        let work = tempfile::tempdir().unwrap();
        let root = work.path();
        std::fs::create_dir_all(root.join("lib")).unwrap();
        for (pointer, theirs) in [
            ("gitdir: ../.git/modules/lib\n", true),
            ("gitdir: ../.git/worktrees/lib", true),
            ("gitdir: ../.git/modules/../../elsewhere", false),
            ("gitdir: ../elsewhere", false),
            ("not a pointer", false),
        ] {
            std::fs::write(root.join("lib/.git"), pointer).unwrap();
            assert_eq!(points_into_persons_repository(root, Path::new("lib")), theirs, "{pointer}");
        }
    }
}
