//! The workspace: the one folder tree the tools may touch, and the rules that keep them inside it.
//!
//! Every path the model names goes through [`Workspace::resolve`]. Relative paths are taken from
//! the root; absolute paths are accepted only inside it. `..` is resolved by hand before anything
//! is checked, and the nearest part of the path that already exists is canonicalised, so a symlink
//! that points out of the workspace is caught even when the file itself does not exist yet. A
//! device reached through a symlink (`ln -s /dev/zero zero`) is therefore refused as outside.
//!
//! Paths to be written go through [`Workspace::resolve_writable`], which also refuses git's and
//! keel's own folders: any `.git` component (nested repositories, submodules and their `.git`
//! files too) and `.keel` at the root. The rule is checked on the resolved real path, so a symlink
//! into `.git/` is refused as well. Names are compared regardless of ASCII case: on most Linux
//! file systems `.GIT` is a folder of its own that git ignores, but on case-insensitive ones
//! (vfat, exFAT, ext4 with casefold, macOS) it *is* `.git`, and refusing a rare `.GIT` costs less
//! than a hook written behind git's back.
//!
//! Every path resolved is also checked against the paths hidden from the model
//! ([`Hidden`]: keel's config and state, the person's credentials), on the real path, so a
//! symlink into one is refused as well; a search passes over them ([`Workspace::hides`]).
//!
//! Resolving is the check; the use goes through the workspace's folder descriptor (see
//! `super::beneath`), so a folder swapped for a symlink between the two is refused, not followed.

use super::beneath;
use super::path_error::PathError;
use super::sandbox::hidden::Hidden;
use super::sandbox::real_path::normalized_within;
use std::ffi::OsStr;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

/// git's folder (or, in a submodule or a linked worktree, the file pointing to it).
const GIT_DIR: &str = ".git";
/// keel's per-workspace folder, which holds settings only the person may change.
const KEEL_DIR: &str = ".keel";
const GIT_REASON: &str = "git's own files are not the model's to edit";
const KEEL_REASON: &str = "the workspace's keel settings are the person's to edit, not the model's";

/// The folder the tools work in, held as its canonical path and an open descriptor of it.
#[derive(Debug, Clone)]
pub struct Workspace {
    root: PathBuf,
    dir: Arc<OwnedFd>,
    /// Where writes note their temporary files in flight (`super::pending`), if anywhere.
    pending: Option<PathBuf>,
    /// The paths no tool reads or writes.
    hidden: Hidden,
    /// Those of them inside the workspace: all a tool can meet, looked up per walked file.
    inside: Hidden,
}

impl PartialEq for Workspace {
    fn eq(&self, other: &Self) -> bool {
        self.root == other.root
    }
}

impl Workspace {
    /// A workspace rooted at `root`, which must exist; it is canonicalised and opened once here.
    pub fn new(root: impl AsRef<Path>) -> io::Result<Self> {
        let root = root.as_ref().canonicalize()?;
        let dir = Arc::new(beneath::open_root(&root)?);
        Ok(Self { root, dir, pending: None, hidden: Hidden::default(), inside: Hidden::default() })
    }

    /// Refuses the paths `hidden` holds to every tool.
    pub fn hiding(mut self, hidden: Hidden) -> Self {
        // A path outside the workspace is refused before it is looked up in `inside`.
        self.inside = hidden.inside(&self.root);
        self.hidden = hidden;
        self
    }

    /// The paths no tool reads or writes.
    pub fn hidden(&self) -> &Hidden {
        &self.hidden
    }

    /// Whether `real` (a real path inside the workspace: a resolved one, or one a search walked
    /// to) is hidden from the model.
    pub fn hides(&self, real: &Path) -> bool {
        self.inside.holding(real).is_some()
    }

    /// The hidden paths inside the workspace, for a search's walk to pass over.
    pub fn hidden_inside(&self) -> &Hidden {
        &self.inside
    }

    /// Notes temporary files in flight in `dir` (keel's state for this workspace), so that the
    /// next start can remove what a killed write left (`super::pending::sweep`).
    pub fn noting_writes_in(mut self, dir: PathBuf) -> Self {
        self.pending = Some(dir);
        self
    }

    /// Where temporary files in flight are noted.
    pub(crate) fn pending_dir(&self) -> Option<&Path> {
        self.pending.as_deref()
    }

    /// The descriptor of the root, which every use of a resolved path starts from.
    pub(crate) fn dir(&self) -> BorrowedFd<'_> {
        self.dir.as_fd()
    }

    /// `real` (a path [`Workspace::resolve`] returned) relative to the root, as the descriptor
    /// functions take it; an error for a path outside.
    pub(crate) fn below<'a>(&self, real: &'a Path) -> io::Result<&'a Path> {
        real.strip_prefix(&self.root).map_err(|_| {
            io::Error::new(io::ErrorKind::InvalidInput, "the path is outside the workspace")
        })
    }

    /// Opens the folder `real` (a resolved path) through the root's descriptor, checking that it
    /// still is that folder once open; a folder replaced since it was resolved is refused.
    pub(crate) fn open_folder(&self, real: &Path) -> io::Result<OwnedFd> {
        let fd = beneath::open_folder(self.dir(), self.below(real)?)?;
        if beneath::is_at(fd.as_fd(), real) { Ok(fd) } else { Err(swapped()) }
    }

    /// The canonical root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The real path `path` names, if it lies inside the workspace.
    ///
    /// The part of the path that exists is returned canonical (no symlinks, no `..`); the part
    /// that does not exist yet follows it as plain names.
    pub fn resolve(&self, path: &str) -> Result<PathBuf, PathError> {
        if path.is_empty() {
            return Err(self.invalid(path, "the path is empty"));
        }
        if path.contains('\0') {
            return Err(self.invalid(path, "the path contains a NUL byte"));
        }
        let requested = Path::new(path);
        let joined = if requested.is_absolute() {
            requested.to_path_buf()
        } else {
            self.root.join(requested)
        };
        let normal = normalized_within(&joined).ok_or_else(|| self.outside(path))?;
        if !normal.starts_with(&self.root) {
            return Err(self.outside(path));
        }
        let (existing, rest) = split_existing(&normal);
        let real = existing.canonicalize().map_err(|source| {
            if existing.symlink_metadata().is_ok_and(|meta| meta.is_symlink()) {
                PathError::InvalidPath {
                    path: path.to_owned(),
                    reason: format!("it is a symlink whose target cannot be followed ({source})"),
                }
            } else {
                PathError::Io { path: path.to_owned(), source }
            }
        })?;
        if !real.starts_with(&self.root) {
            return Err(PathError::SymlinkEscape {
                path: path.to_owned(),
                target: real,
                root: self.root.clone(),
            });
        }
        let real = rest.iter().fold(real, |acc, name| acc.join(name));
        match self.inside.holding(&real) {
            Some(hidden) => Err(PathError::Hidden {
                path: path.to_owned(),
                reason: hidden.reason(),
                how: hidden.how_to_allow(),
            }),
            None => Ok(real),
        }
    }

    /// Like [`Workspace::resolve`], for a path about to be written: also refuses anything inside
    /// `.git/` (at any depth) or the root's `.keel/`, judged on the real path.
    pub fn resolve_writable(&self, path: &str) -> Result<PathBuf, PathError> {
        let real = self.resolve(path)?;
        let relative = real.strip_prefix(&self.root).unwrap_or(&real);
        let names: Vec<&OsStr> = relative
            .components()
            .filter_map(|component| match component {
                Component::Normal(name) => Some(name),
                _ => None,
            })
            .collect();
        let git = names.iter().position(|name| is_named(name, GIT_DIR));
        let keel = names.first().filter(|name| is_named(name, KEEL_DIR)).map(|_| 0);
        let (at, reason) = match (keel, git) {
            (Some(at), _) => (at, KEEL_REASON),
            (None, Some(at)) => (at, GIT_REASON),
            (None, None) => return Ok(real),
        };
        let folder = names[at].to_string_lossy();
        let place = if at + 1 == names.len() {
            format!("{folder}/ itself")
        } else {
            format!("inside {folder}/")
        };
        Err(PathError::ProtectedPath { path: self.display(&real), place, reason })
    }

    /// `path` as the person and the model should read it: relative to the root when inside it.
    pub fn display(&self, path: &Path) -> String {
        match path.strip_prefix(&self.root) {
            Ok(relative) if relative.as_os_str().is_empty() => ".".to_owned(),
            Ok(relative) => relative.display().to_string(),
            Err(_) => path.display().to_string(),
        }
    }

    fn outside(&self, path: &str) -> PathError {
        PathError::OutsideWorkspace { path: path.to_owned(), root: self.root.clone() }
    }

    fn invalid(&self, path: &str, reason: &str) -> PathError {
        PathError::InvalidPath { path: path.to_owned(), reason: reason.to_owned() }
    }
}

/// The error for a folder found replaced between its check and its use.
pub(crate) fn swapped() -> io::Error {
    io::Error::from_raw_os_error(rustix::io::Errno::XDEV.raw_os_error())
}

/// Whether `name` is `protected`, regardless of ASCII case (see the module doc).
fn is_named(name: &OsStr, protected: &str) -> bool {
    name.as_bytes().eq_ignore_ascii_case(protected.as_bytes())
}

/// Splits a normalised absolute path into its longest existing ancestor (itself, possibly) and
/// the names below it that do not exist yet, in order.
fn split_existing(path: &Path) -> (&Path, Vec<&std::ffi::OsStr>) {
    let mut existing = path;
    let mut rest = Vec::new();
    while existing.symlink_metadata().is_err() {
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name);
                existing = parent;
            }
            _ => break,
        }
    }
    rest.reverse();
    (existing, rest)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::testing::folder;

    #[test]
    fn the_root_reads_as_a_dot_and_the_rest_relative_to_it() {
        let (_dir, root) = folder();
        let workspace = Workspace::new(&root).unwrap();
        assert_eq!(workspace.display(workspace.root()), ".");
        assert_eq!(workspace.display(&workspace.root().join("a/b.txt")), "a/b.txt");
        assert_eq!(workspace.display(Path::new("/elsewhere/x")), "/elsewhere/x");
    }
}
