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

use super::git_dirs::{HEAD, Signs};
use super::real_path::normalized;
use crate::tools::beneath;
use std::collections::{HashMap, HashSet};
use std::io::Read;
use std::os::fd::AsFd;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The name git looks for.
const GIT: &str = ".git";
/// What a moved `.git` or `HEAD` is called: its name and this, with a number after it when that
/// is taken.
const QUARANTINE: &str = "-quarantined";
const QUARANTINE_TRIES: usize = 100;
/// The most entries a look goes through.
pub const MAX_ENTRIES: usize = 300_000;
/// A `.git` file's pointer, and the most of it read.
const GITDIR_PREFIX: &str = "gitdir:";
const POINTER_LIMIT: u64 = 4096;
/// Where the workspace's own repository keeps its submodules' and linked worktrees' folders.
const PERSONS_FOLDERS: [&str; 2] = [".git/modules", ".git/worktrees"];

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

fn quarantine_new(root: &Path, before: &Scan, now: &mut Scan) -> (Vec<String>, Vec<PathBuf>) {
    let (mut told, mut moved) = (Vec::new(), Vec::new());
    let mut new: Vec<PathBuf> = now
        .found
        .iter()
        .filter(|(path, identity)| before.found.get(*path) != Some(identity))
        .map(|(path, _)| path.clone())
        .collect();
    new.sort();
    for path in new {
        let Some(relative) = path.strip_prefix(root).ok().and_then(Path::parent) else { continue };
        let Some(name) = path.file_name().and_then(|name| name.to_str()) else { continue };
        if name == GIT && points_into_persons_repository(root, relative) {
            continue;
        }
        let shown = relative.join(name);
        let made = if name == GIT {
            format!("a command made {}", shown.display())
        } else if relative.as_os_str().is_empty() {
            "a command made the workspace's top a git repository (HEAD, objects, refs)".to_owned()
        } else {
            format!("a command made {} a git repository (HEAD, objects, refs)", relative.display())
        };
        told.push(match move_aside(root, relative, name) {
            Ok(aside) => {
                now.found.remove(&path);
                now.passed_over.insert(root.join(relative).join(&aside));
                moved.push(path.clone());
                let aside = relative.join(&aside);
                format!(
                    "Moved {} aside to {}: {made}, and git would run its hooks and settings \
                     outside the sandbox when used there. Look at them, then run `mv {} {}` in \
                     the workspace if you trust it.",
                    shown.display(),
                    aside.display(),
                    shell_word(&aside),
                    shell_word(&shown)
                )
            }
            Err(err) => format!(
                "keel could not move {} aside ({err}): {made}, and git would run its hooks and \
                 settings outside the sandbox when used there. Check it before you run git in \
                 that folder.",
                shown.display()
            ),
        });
    }
    (told, moved)
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
    let target = normalized(&root.join(folder).join(target));
    PERSONS_FOLDERS.iter().any(|persons| target.starts_with(root.join(persons)))
}

/// Renames `folder/NAME` to the first free quarantine name in `folder`; returns that name.
fn move_aside(root: &Path, folder: &Path, name: &str) -> std::io::Result<PathBuf> {
    let root_fd = beneath::open_root(root)?;
    let dir = if folder.as_os_str().is_empty() {
        root_fd
    } else {
        beneath::open_folder(root_fd.as_fd(), folder)?
    };
    for attempt in 1..=QUARANTINE_TRIES {
        let aside = match attempt {
            1 => PathBuf::from(format!("{name}{QUARANTINE}")),
            n => PathBuf::from(format!("{name}{QUARANTINE}-{n}")),
        };
        if beneath::metadata(dir.as_fd(), &aside)?.is_some() {
            continue;
        }
        beneath::rename(dir.as_fd(), Path::new(name), &aside)?;
        return Ok(aside);
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
        let found = scan(root, &[]);
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
        let short = scan_within(root, 3, &HashSet::new());
        assert!(!short.complete);
        let settled = settle(root, &short);
        assert!(settled.told.is_empty(), "{:?}", settled.told);
        assert_eq!(settled.scan, short);
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
        let settled = settle(root, &Scan { complete: true, ..Scan::default() });
        let line = settled.told.first().expect("the move is told");
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

    /// Makes `folder` what git takes for a bare repository.
    fn bare(folder: &Path) {
        std::fs::create_dir_all(folder.join("objects")).unwrap();
        std::fs::create_dir_all(folder.join("refs")).unwrap();
        std::fs::write(folder.join("HEAD"), "ref: refs/heads/main\n").unwrap();
    }

    #[test]
    fn a_folder_git_takes_for_a_repository_is_one_at_the_top_and_below() {
        let work = tempfile::tempdir().unwrap();
        let root = work.path();
        let before = scan(root, &[]);
        bare(&root.join("sub"));
        bare(root);
        std::fs::create_dir_all(root.join("lib/objects")).unwrap();
        std::fs::write(root.join("lib/HEAD"), "not a repository: no refs\n").unwrap();
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
        let work = tempfile::tempdir().unwrap();
        let root = work.path();
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
