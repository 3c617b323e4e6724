//! Touching workspace paths through a descriptor of the workspace, never by name from `/`.
//!
//! `Workspace::resolve` checks a path; this module is how it is then *used*, with no gap between
//! the two that a swapped symlink could slip through. Every open goes through `openat2` from the
//! workspace's folder descriptor with `RESOLVE_BENEATH` (the kernel refuses any step out of the
//! workspace, `..` and absolute symlinks included), `RESOLVE_NO_MAGICLINKS` (no `/proc/…/fd`
//! jumps) and `RESOLVE_NO_SYMLINKS`: the path was resolved to its real location, so a symlink met
//! on the way now means something was swapped since, and the open fails instead of following it.
//!
//! Everything that changes a folder's entries — creating a temporary file, renaming it over the
//! target, removing a file, making a folder or a symlink — is done by a single name relative to a
//! descriptor of that folder, opened the same way, so it cannot land anywhere else.

use std::fs::{File, Metadata};
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Component, Path, PathBuf};

use rustix::fs::{AtFlags, Mode, OFlags, ResolveFlags};

/// The mode a folder is created with, before the umask.
const NEW_FOLDER_MODE: u32 = 0o777;

/// How every path below the workspace is resolved: see the module doc.
fn strict() -> ResolveFlags {
    ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS | ResolveFlags::NO_SYMLINKS
}

/// `relative` as `openat2` takes it: `.` for the folder itself.
fn or_dot(relative: &Path) -> &Path {
    if relative.as_os_str().is_empty() { Path::new(".") } else { relative }
}

/// Opens the workspace's own folder, the descriptor everything else is resolved from.
pub(crate) fn open_root(path: &Path) -> io::Result<OwnedFd> {
    let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
    Ok(rustix::fs::open(path, flags, Mode::empty())?)
}

/// Opens the folder `relative` below `dir` (itself when empty), to read its entries, change them
/// by name and sync it.
pub(crate) fn open_folder(dir: BorrowedFd<'_>, relative: &Path) -> io::Result<OwnedFd> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    Ok(rustix::fs::openat2(dir, or_dot(relative), flags, Mode::empty(), strict())?)
}

/// Opens the file `relative` below `dir` for reading, never blocking (a FIFO opens at once),
/// never following a final symlink, never becoming the controlling terminal.
pub(crate) fn open_for_reading(dir: BorrowedFd<'_>, relative: &Path) -> io::Result<File> {
    let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOFOLLOW | OFlags::NOCTTY;
    let fd = rustix::fs::openat2(
        dir,
        or_dot(relative),
        flags | OFlags::CLOEXEC,
        Mode::empty(),
        strict(),
    )?;
    Ok(File::from(fd))
}

/// The metadata of `relative` below `dir` without opening it for reading or following a final
/// symlink; `None` when nothing is there.
pub(crate) fn metadata(dir: BorrowedFd<'_>, relative: &Path) -> io::Result<Option<Metadata>> {
    let flags = OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    match rustix::fs::openat2(dir, or_dot(relative), flags, Mode::empty(), strict()) {
        Ok(fd) => File::from(fd).metadata().map(Some),
        Err(rustix::io::Errno::NOENT) => Ok(None),
        Err(err) => Err(err.into()),
    }
}

/// Creates a new file named `name` in the folder `dir`, failing if the name is taken.
pub(crate) fn create_new(dir: BorrowedFd<'_>, name: &Path, mode: u32) -> io::Result<File> {
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let fd = rustix::fs::openat2(dir, name, flags, Mode::from_raw_mode(mode), strict())?;
    Ok(File::from(fd))
}

/// Renames `from` to `to`, both names in the folder `dir`.
pub(crate) fn rename(dir: BorrowedFd<'_>, from: &Path, to: &Path) -> io::Result<()> {
    Ok(rustix::fs::renameat(dir, from, dir, to)?)
}

/// Removes the file or symlink `name` in the folder `dir` (never what a symlink points to).
pub(crate) fn remove_file(dir: BorrowedFd<'_>, name: &Path) -> io::Result<()> {
    Ok(rustix::fs::unlinkat(dir, name, AtFlags::empty())?)
}

/// Removes the empty folder `name` in the folder `dir`.
pub(crate) fn remove_folder(dir: BorrowedFd<'_>, name: &Path) -> io::Result<()> {
    Ok(rustix::fs::unlinkat(dir, name, AtFlags::REMOVEDIR)?)
}

/// Makes `name` in the folder `dir` a symlink to `target`.
pub(crate) fn symlink(dir: BorrowedFd<'_>, name: &Path, target: &Path) -> io::Result<()> {
    Ok(rustix::fs::symlinkat(target, dir, name)?)
}

/// The target of the symlink `name` in the folder `dir`.
pub(crate) fn read_link(dir: BorrowedFd<'_>, name: &Path) -> io::Result<Vec<u8>> {
    Ok(rustix::fs::readlinkat(dir, name, Vec::new())?.into_bytes())
}

/// Whether an open failed because a symlink (or a `..`) on the way would have led elsewhere:
/// the path changed since it was checked.
pub(crate) fn is_swapped(err: &io::Error) -> bool {
    matches!(err.raw_os_error(), Some(code) if code == rustix::io::Errno::XDEV.raw_os_error()
        || code == rustix::io::Errno::LOOP.raw_os_error())
}

/// The folders below `dir` that opening `relative` (a folder) created, as relative paths,
/// deepest first; and the opened folder.
pub(crate) struct MadeFolder {
    pub fd: OwnedFd,
    pub created: Vec<PathBuf>,
}

/// Opens the folder `relative` below `dir`, creating it and its missing parents one name at a
/// time, each relative to the descriptor of the one above. On failure, removes what it created.
pub(crate) fn make_folder(dir: BorrowedFd<'_>, relative: &Path) -> io::Result<MadeFolder> {
    let mut created = Vec::new();
    let mut at = PathBuf::new();
    let mut fd = open_folder(dir, Path::new(""))?;
    for component in relative.components() {
        let Component::Normal(name) = component else {
            remove_made(dir, &created);
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "not a plain relative path"));
        };
        let name = Path::new(name);
        at.push(name);
        let step = match open_folder(fd.as_fd(), name) {
            Err(err) if err.kind() == io::ErrorKind::NotFound => {
                rustix::fs::mkdirat(&fd, name, Mode::from_raw_mode(NEW_FOLDER_MODE))
                    .map_err(io::Error::from)
                    .and_then(|()| {
                        created.insert(0, at.clone());
                        open_folder(fd.as_fd(), name)
                    })
            }
            other => other,
        };
        match step {
            Ok(next) => fd = next,
            Err(err) => {
                remove_made(dir, &created);
                return Err(err);
            }
        }
    }
    Ok(MadeFolder { fd, created })
}

/// Removes folders [`make_folder`] created, deepest first; one something has been put in since
/// stays.
pub(crate) fn remove_made(dir: BorrowedFd<'_>, created: &[PathBuf]) {
    for folder in created {
        let (Some(parent), Some(name)) = (folder.parent(), folder.file_name()) else { continue };
        if let Ok(parent) = open_folder(dir, parent) {
            let _ = remove_folder(parent.as_fd(), Path::new(name));
        }
    }
}

/// Whether the open folder `fd` is at `expected` now, as the kernel names it. When `/proc` is
/// not there to ask, the answer is yes: the opens above already kept the path inside.
pub(crate) fn is_at(fd: BorrowedFd<'_>, expected: &Path) -> bool {
    use std::os::fd::AsRawFd;
    match std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd())) {
        Ok(now) => now == expected,
        Err(_) => true,
    }
}
