//! What no command may leave in the workspace's repository: a `.git/commondir`. That file makes
//! git take its config and its hooks from the folder it names, which a command can write, so a
//! hook a sandboxed command wrote would run later, outside any sandbox, at the person's next
//! `git commit`. The sandbox pins `.git` and keeps `hooks` and `config` read-only, but it cannot
//! cover a missing file without making one in the person's repository. So the agent notes the
//! file as the session opens, and looks again after every command and at the end of every turn
//! (a background job may write it later): one that appeared since is removed, and the command's
//! answer, or a notice, says so. Every path is opened beneath the workspace without following a
//! symlink.

use crate::runtime::beneath;
use std::io::Read;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};

/// The repository folder, and the file in it that redirects git.
const GIT: &str = ".git";
const COMMONDIR: &str = "commondir";
/// The most of a `commondir` kept to be put back: a path.
const COMMONDIR_LIMIT: u64 = 4096;

/// `.git/commondir` as the session found it.
#[derive(Debug)]
pub struct Watch {
    root: PathBuf,
    before: Option<Seen>,
    /// How many times one was removed in this session.
    removals: usize,
}

/// A `commondir` that was there: its content, when it is a regular file.
#[derive(Debug)]
enum Seen {
    Content(Vec<u8>),
    Other,
}

impl Watch {
    /// Notes the workspace's `.git/commondir`, if the workspace has a repository folder.
    pub fn before(root: &Path) -> Self {
        let before = git_folder(root).and_then(|git| {
            let there = beneath::metadata(git.as_fd(), Path::new(COMMONDIR)).ok().flatten()?;
            Some(read(&git).filter(|_| there.is_file()).map_or(Seen::Other, Seen::Content))
        });
        Self { root: root.to_path_buf(), before, removals: 0 }
    }

    /// How many times a `commondir` that appeared was removed in this session.
    pub fn removals(&self) -> usize {
        self.removals
    }

    /// Removes a `commondir` that appeared since the session opened; what it found, to tell.
    /// One it cannot put right is told once, then taken as it is.
    pub fn after(&mut self) -> Option<String> {
        let git = &git_folder(&self.root)?;
        let now = beneath::metadata(git.as_fd(), Path::new(COMMONDIR)).ok().flatten();
        match (&self.before, now) {
            (None, None) | (Some(Seen::Other), Some(_)) => None,
            (Some(Seen::Content(before)), Some(_)) if read(git).as_ref() == Some(before) => None,
            (None, Some(made)) if !made.is_dir() => {
                Some(match beneath::remove_file(git.as_fd(), Path::new(COMMONDIR)) {
                    Ok(()) => {
                        self.removals += 1;
                        format!("Removed .git/{COMMONDIR}, which a command made: {WHY}")
                    }
                    Err(err) => format!(
                        "A command made .git/{COMMONDIR}, and keel could not remove it \
                         ({err}): {WHY} Remove it before you run git."
                    ),
                })
            }
            _ => {
                self.before = Self::before(&self.root).before;
                Some(format!(
                    "A command made, changed or removed .git/{COMMONDIR}, and keel left it as it \
                     is: {WHY} Check it before you run git."
                ))
            }
        }
    }
}

/// Why it matters, for the model and the person.
const WHY: &str = "that file makes git run hooks and read settings from the folder it names, \
outside the sandbox.";

/// The workspace's repository folder, opened beneath it (never through a symlink).
fn git_folder(root: &Path) -> Option<OwnedFd> {
    let root = beneath::open_root(root).ok()?;
    beneath::open_folder(root.as_fd(), Path::new(GIT)).ok()
}

/// `.git/commondir`'s content, when it is a regular file.
fn read(git: &OwnedFd) -> Option<Vec<u8>> {
    let file = beneath::open_for_reading(git.as_fd(), Path::new(COMMONDIR)).ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut content = Vec::new();
    file.take(COMMONDIR_LIMIT).read_to_end(&mut content).ok()?;
    Some(content)
}
