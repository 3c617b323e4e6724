//! Where an undo may write: each path checked against the workspace just before it is touched.
//!
//! A path to restore comes from a snapshot or a session log, and a log can be forged (a cloned
//! repository, a model with a shell). So every path goes through `Workspace::resolve_writable`
//! again — inside the workspace, no symlink leading out, nothing in `.git/` or `.keel/` — and its
//! folder is resolved separately so that a final symlink is dealt with as the link it is, never
//! followed. Files are compared, replaced and removed through a descriptor of their folder opened
//! beneath the workspace's (`runtime::beneath`), never by name from `/`, so a folder swapped for a
//! symlink while undo runs is refused, not followed; files are written with the atomic writer.

use crate::runtime::atomic::write_atomically;
use crate::runtime::workspace::swapped;
use crate::runtime::{Workspace, beneath};
use std::io::{self, Read};
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// Why a file is left alone when it does not hold what keel left there.
pub(super) const CHANGED_SINCE: &str = "it was changed after that prompt";
/// The permission bits that make a file executable.
const EXECUTE_BITS: u32 = 0o111;

/// What a path should hold (or held).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Content<'a> {
    Absent,
    File(&'a [u8]),
    /// A symlink with this target.
    Link(&'a [u8]),
}

/// A checked path inside the workspace.
#[derive(Debug)]
pub(super) struct Place {
    workspace: Workspace,
    /// The real folder it is in.
    folder: PathBuf,
    /// Its name in that folder.
    name: PathBuf,
    path: PathBuf,
    display: String,
}

impl Place {
    /// `relative` re-checked against the workspace.
    pub fn check(workspace: &Workspace, relative: &str) -> Result<Self, String> {
        workspace.resolve_writable(relative).map_err(|err| err.to_string())?;
        let relative_path = Path::new(relative);
        let name = relative_path.file_name().ok_or_else(|| "it names no file".to_owned())?;
        let folder = match relative_path.parent().and_then(Path::to_str) {
            Some(parent) if !parent.is_empty() => parent,
            _ => ".",
        };
        let folder = workspace.resolve_writable(folder).map_err(|err| err.to_string())?;
        let path = folder.join(name);
        let display = workspace.display(&path);
        let name = PathBuf::from(name);
        Ok(Self { workspace: workspace.clone(), folder, name, path, display })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn display(&self) -> &str {
        &self.display
    }

    /// Whether the path holds exactly `expected` now (a symlink is never followed).
    pub fn holds(&self, expected: Content<'_>) -> Result<bool, String> {
        let dir = match self.workspace.open_folder(&self.folder) {
            Ok(dir) => dir,
            Err(err) if err.kind() == io::ErrorKind::NotFound => {
                return Ok(expected == Content::Absent);
            }
            Err(err) => return Err(folder_error(&err)),
        };
        let meta = match beneath::metadata(dir.as_fd(), &self.name) {
            Ok(Some(meta)) => meta,
            Ok(None) => return Ok(expected == Content::Absent),
            Err(err) => return Err(format!("cannot look at it: {err}")),
        };
        match expected {
            Content::Absent => Ok(false),
            Content::Link(target) => Ok(meta.is_symlink()
                && beneath::read_link(dir.as_fd(), &self.name).is_ok_and(|now| now == target)),
            Content::File(bytes) => {
                if !meta.is_file() || meta.len() != bytes.len() as u64 {
                    return Ok(false);
                }
                Ok(read_regular(dir.as_fd(), &self.name)?.as_deref() == Some(bytes))
            }
        }
    }

    /// Puts `content` back, atomically; `executable` sets or clears the execute bits.
    pub fn write(&self, content: &[u8], executable: Option<bool>) -> Result<(), String> {
        write_atomically(&self.workspace, &self.path, &self.display, content)
            .map_err(|err| err.to_string())?;
        if let Some(executable) = executable {
            let dir = self.workspace.open_folder(&self.folder).map_err(|err| folder_error(&err))?;
            let file = beneath::open_for_reading(dir.as_fd(), &self.name)
                .map_err(|err| format!("restored, but its mode could not be set: {err}"))?;
            let meta = file.metadata().map_err(|err| err.to_string())?;
            if !meta.is_file() {
                return Err("restored, but something else was put in its place".to_owned());
            }
            let mode = meta.permissions().mode();
            let wanted = if executable { mode | EXECUTE_BITS } else { mode & !EXECUTE_BITS };
            if wanted != mode {
                file.set_permissions(std::fs::Permissions::from_mode(wanted))
                    .map_err(|err| format!("restored, but its mode could not be set: {err}"))?;
            }
        }
        Ok(())
    }

    /// Removes the file or symlink (never what a symlink points to).
    pub fn remove(&self) -> Result<(), String> {
        let dir = self.workspace.open_folder(&self.folder).map_err(|err| folder_error(&err))?;
        beneath::remove_file(dir.as_fd(), &self.name)
            .map_err(|err| format!("could not remove it: {err}"))
    }

    /// Removes the path if it is an empty folder (a folder the undone prompt created).
    pub fn remove_empty_folder(&self) {
        if let Ok(dir) = self.workspace.open_folder(&self.folder)
            && beneath::metadata(dir.as_fd(), &self.name).ok().flatten().is_some_and(|m| m.is_dir())
        {
            let _ = beneath::remove_folder(dir.as_fd(), &self.name);
        }
    }

    /// Makes the path a symlink to `target` again.
    pub fn link(&self, target: &[u8]) -> Result<(), String> {
        let relative = self.workspace.below(&self.folder).map_err(|err| err.to_string())?;
        let made = beneath::make_folder(self.workspace.dir(), relative)
            .map_err(|err| format!("cannot create its folder: {err}"))?;
        if !beneath::is_at(made.fd.as_fd(), &self.folder) {
            return Err(folder_error(&swapped()));
        }
        let target =
            Path::new(<std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(target));
        beneath::symlink(made.fd.as_fd(), &self.name, target)
            .map_err(|err| format!("could not restore the symlink: {err}"))
    }
}

/// Why the folder of a path could not be used.
fn folder_error(err: &io::Error) -> String {
    if beneath::is_swapped(err) {
        "its folder was replaced (by a symlink?) while undo ran, so it was not touched".to_owned()
    } else {
        format!("cannot open its folder: {err}")
    }
}

/// The contents of the regular file `name` in the folder `dir`; `None` if something else is
/// there. Never follows a symlink and never waits on a FIFO swapped in after the check.
fn read_regular(dir: BorrowedFd<'_>, name: &Path) -> Result<Option<Vec<u8>>, String> {
    let mut file = match beneath::open_for_reading(dir, name) {
        Ok(file) => file,
        Err(err) if err.raw_os_error() == Some(nix::libc::ELOOP) => return Ok(None),
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(format!("cannot read it: {err}")),
    };
    if !file.metadata().is_ok_and(|meta| meta.is_file()) {
        return Ok(None);
    }
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).map_err(|err| format!("cannot read it: {err}"))?;
    Ok(Some(bytes))
}

/// Removes the folders above the deleted file `relative` that the undone prompt `created`, while
/// they are empty now, deepest first; stops at the first it did not create, and never reaches
/// the workspace itself.
pub(super) fn remove_created_folders(
    workspace: &Workspace,
    relative: &str,
    mut created: impl FnMut(&str) -> bool,
) {
    let folders =
        Path::new(relative).ancestors().skip(1).take_while(|folder| !folder.as_os_str().is_empty());
    for folder in folders {
        let Some(folder) = folder.to_str() else { return };
        if !created(folder) {
            return;
        }
        match Place::check(workspace, folder) {
            Ok(place) => place.remove_empty_folder(),
            Err(_) => return,
        }
    }
}
