//! Temporary files in flight, noted outside the workspace so that the next start can remove
//! what a killed write or undo left behind.
//!
//! An atomic write puts its content in `.NAME.keel-RANDOM.tmp` beside the target and renames it
//! over the target; killed in between, keel leaves that file (the whole new content) in the
//! workspace. So before the temporary file is filled, a note naming it (relative to the
//! workspace) goes into keel's state for the workspace, named by the writing process's id; it is
//! removed once the rename or the clean-up is done. At start, [`sweep`] removes the temporary
//! file of every note whose process is gone — only a regular file whose name is one keel makes,
//! reached through the workspace's descriptor — and the note.

use super::{Workspace, atomic, beneath};
use nix::sys::signal::kill;
use nix::unistd::Pid;
use std::os::fd::AsFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// A note of one temporary file in flight; dropping it removes the note.
#[derive(Debug)]
pub(crate) struct Note {
    path: Option<PathBuf>,
}

impl Drop for Note {
    fn drop(&mut self) {
        if let Some(path) = &self.path {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// Notes `temp` (relative to the workspace) in `dir`; a note that cannot be written is no note
/// (the write goes on: it only loses the clean-up after a kill).
pub(crate) fn note(dir: Option<&Path>, temp: &Path) -> Note {
    let Some(dir) = dir else { return Note { path: None } };
    let path = dir.join(format!("{}-{:016x}", std::process::id(), fastrand::u64(..)));
    let written = super::undo::shadow::create_private_dir(dir)
        .and_then(|()| std::fs::write(&path, temp.as_os_str().as_bytes()));
    Note { path: written.is_ok().then_some(path) }
}

/// Removes the temporary files of notes in the workspace's note folder whose writer is gone;
/// returns how many files it removed.
pub fn sweep(workspace: &Workspace) -> usize {
    let Some(dir) = workspace.pending_dir() else { return 0 };
    let Ok(entries) = std::fs::read_dir(dir) else { return 0 };
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let writer = name.to_str().and_then(|name| name.split('-').next()?.parse::<i32>().ok());
        if writer.is_some_and(is_alive) {
            continue;
        }
        if let Ok(temp) = std::fs::read(entry.path()) {
            removed +=
                usize::from(remove_temp(workspace, Path::new(std::ffi::OsStr::from_bytes(&temp))));
        }
        let _ = std::fs::remove_file(entry.path());
    }
    removed
}

/// Whether the process `pid` still runs (as far as a signal 0 can tell).
fn is_alive(pid: i32) -> bool {
    pid != 0 && !matches!(kill(Pid::from_raw(pid), None), Err(nix::errno::Errno::ESRCH))
}

/// Removes the temporary file `relative` if it is a regular file named as keel names them.
fn remove_temp(workspace: &Workspace, relative: &Path) -> bool {
    let (Some(folder), Some(name)) = (relative.parent(), relative.file_name()) else {
        return false;
    };
    if !atomic::is_keel_temp(name.as_bytes()) {
        return false;
    }
    let Ok(dir) = workspace.open_folder(&workspace.root().join(folder)) else { return false };
    beneath::metadata(dir.as_fd(), Path::new(name)).ok().flatten().is_some_and(|m| m.is_file())
        && beneath::remove_file(dir.as_fd(), Path::new(name)).is_ok()
}
