//! Opening a workspace file without ever blocking: regular files only.
//!
//! Opening a FIFO for reading waits for a writer, reading a character device such as `/dev/zero`
//! never ends, and a socket cannot be opened at all; any of them would freeze a tool call or the
//! approval preview. So the type is checked from metadata first, *without opening* (an `O_PATH`
//! descriptor); then the file is opened with `O_NONBLOCK` (a FIFO swapped in after the check
//! opens at once instead of waiting), through the workspace's descriptor (`beneath`: a symlink
//! swapped in anywhere on the path is refused, so nothing outside is ever opened), and the opened
//! file is checked again with `fstat`, so a swap between the check and the open is caught before
//! a single byte is read.

use super::path_error::PathError;
use super::{Workspace, beneath};
use std::fs::{File, FileType, Metadata};
use std::io;
use std::os::unix::fs::FileTypeExt;
use std::path::Path;

/// What kind of file `file_type` is, in words for an error; `None` for a regular file.
pub(crate) fn irregular_kind(file_type: FileType) -> Option<&'static str> {
    if file_type.is_file() {
        None
    } else if file_type.is_fifo() {
        Some("a FIFO (named pipe)")
    } else if file_type.is_socket() {
        Some("a socket")
    } else if file_type.is_char_device() {
        Some("a character device")
    } else if file_type.is_block_device() {
        Some("a block device")
    } else if file_type.is_symlink() {
        Some("a symlink")
    } else {
        Some("neither a file nor a folder")
    }
}

/// Refuses a folder, a FIFO, a socket or a device, from metadata already at hand.
pub(crate) fn check_regular(meta: &Metadata, display: &str) -> Result<(), PathError> {
    if meta.is_dir() {
        return Err(PathError::IsDirectory { path: display.to_owned() });
    }
    match irregular_kind(meta.file_type()) {
        None => Ok(()),
        Some(kind) => Err(PathError::NotRegularFile { path: display.to_owned(), kind }),
    }
}

/// Opens the regular file at `path` (a real path from `Workspace::resolve`) for reading, with its
/// metadata as the opened file reports it. Never blocks, never reads: see the module doc.
pub(crate) fn open_regular(
    workspace: &Workspace,
    path: &Path,
    display: &str,
) -> Result<(File, Metadata), PathError> {
    let meta = existing(workspace, path, display)?
        .ok_or_else(|| PathError::NotFound { path: display.to_owned() })?;
    check_regular(&meta, display)?;
    let relative = workspace.below(path).map_err(|source| io_error(display, source))?;
    let file = beneath::open_for_reading(workspace.dir(), relative)
        .map_err(|source| used_error(display, source))?;
    let opened = file.metadata().map_err(|source| io_error(display, source))?;
    check_regular(&opened, display)?;
    Ok((file, opened))
}

/// The file's metadata without following a final symlink; `None` when nothing is there.
pub(crate) fn existing(
    workspace: &Workspace,
    path: &Path,
    display: &str,
) -> Result<Option<Metadata>, PathError> {
    let relative = workspace.below(path).map_err(|source| io_error(display, source))?;
    beneath::metadata(workspace.dir(), relative).map_err(|source| used_error(display, source))
}

/// The error for a resolved path that could not be used: swapped since the check, or plain I/O.
pub(crate) fn used_error(display: &str, source: io::Error) -> PathError {
    if beneath::is_swapped(&source) {
        PathError::InvalidPath {
            path: display.to_owned(),
            reason: "it or a folder above it was replaced (by a symlink?) after the path was \
                     checked, so it was not touched; try again"
                .to_owned(),
        }
    } else {
        not_found_or_io(display, source)
    }
}

pub(crate) fn not_found_or_io(display: &str, source: io::Error) -> PathError {
    if source.kind() == io::ErrorKind::NotFound {
        PathError::NotFound { path: display.to_owned() }
    } else {
        io_error(display, source)
    }
}

pub(crate) fn io_error(display: &str, source: io::Error) -> PathError {
    PathError::Io { path: display.to_owned(), source }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_are_named_without_being_opened() {
        let null = std::fs::metadata("/dev/null").unwrap();
        let err = check_regular(&null, "null").unwrap_err();
        assert!(matches!(err, PathError::NotRegularFile { kind: "a character device", .. }));
        let folder = std::fs::metadata("/").unwrap();
        assert!(matches!(check_regular(&folder, "/"), Err(PathError::IsDirectory { .. })));
    }
}
