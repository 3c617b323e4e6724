//! Writing a file so that a failure never leaves it half written.
//!
//! The new content goes to a temporary file created beside the target (same folder, so the same
//! file system), which takes the target's mode and owner, is written and synced; only then is it
//! renamed over the target, and the folder is synced so that the rename itself survives a crash.
//! Whatever fails before the rename — a full disk, a size limit, a folder where no file can be
//! created — removes the temporary file and the folders this write created, leaves the target
//! byte for byte as it was, and says why.
//!
//! What this means at the edges:
//! - Symlinks are followed, and stay: `Workspace::resolve` hands over the real path, so writing
//!   through a symlink inside the workspace replaces the file it points to, never the link.
//! - The folder is opened through the workspace's descriptor (`beneath`), and the temporary file
//!   is created and renamed by name inside that open folder: a folder swapped for a symlink after
//!   the check is refused, so nothing is ever written outside the workspace.
//! - A file-size limit (`ulimit -f`, `EFBIG`) is reported as such, the file left as it was.
//! - The permission bits are kept (setuid, setgid and sticky included), and so are the owner and
//!   group where the process may set them (as root; the group for a member of it). Extended
//!   attributes and ACLs are not copied. A new file gets `0o666` less the umask (`0644` under the
//!   usual `022`), like any editor's.
//! - A file with several hard links gets a new inode: its other names keep the old content.

use super::open::{check_regular, io_error, used_error};
use super::path_error::PathError;
use super::workspace::swapped;
use super::{Workspace, beneath, pending};
use std::ffi::{OsStr, OsString};
use std::fs::{File, Metadata, Permissions};
use std::io::{self, Write};
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The mode a new file is created with, before the umask.
const NEW_FILE_MODE: u32 = 0o666;
/// The mode of a temporary file standing in for an existing one, until it takes that file's mode:
/// nobody else may read the content meanwhile.
const PRIVATE_MODE: u32 = 0o600;
/// The bits of a mode that are permissions (not the file type).
const PERMISSION_BITS: u32 = 0o7777;
/// How much of the target's name the temporary file's name repeats, in bytes: enough to tell
/// what it was for, short enough to stay under the 255-byte limit on a name.
const TEMP_NAME_STEM_BYTES: usize = 64;
/// The hex digits of the random part of a temporary file's name.
const TEMP_RANDOM_HEX: usize = 16;
/// How many random names to try before giving up on creating a temporary file.
const TEMP_NAME_ATTEMPTS: usize = 16;

/// What a write did besides putting the content in place.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Written {
    /// Set when the content is in place but the folder could not be synced.
    pub note: Option<String>,
    /// How many folders above the file the write created.
    pub created_folders: usize,
}

/// Replaces (or creates) the regular file at `path` (a resolved path in `workspace`) with
/// `content`, atomically; see the module doc.
pub(crate) fn write_atomically(
    workspace: &Workspace,
    path: &Path,
    display: &str,
    content: &[u8],
) -> Result<Written, PathError> {
    let (Some(folder), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(PathError::InvalidPath {
            path: display.to_owned(),
            reason: "it names no file".to_owned(),
        });
    };
    let name = Path::new(name);
    let relative = workspace.below(folder).map_err(|source| io_error(display, source))?;
    let root = workspace.dir();
    let made = beneath::make_folder(root, relative).map_err(|err| {
        if beneath::is_swapped(&err) {
            used_error(display, err)
        } else {
            write_failed(display, false, "cannot create its folder: ", err)
        }
    })?;
    let undo_folders = || beneath::remove_made(root, &made.created);
    let dir = made.fd.as_fd();
    // The folder was real when the path was resolved; one put in its place since (a symlink, a
    // renamed folder) would send the write elsewhere.
    if !beneath::is_at(dir, folder) {
        undo_folders();
        return Err(used_error(display, swapped()));
    }
    let target = match beneath::metadata(dir, name) {
        Ok(target) => target,
        Err(err) => {
            undo_folders();
            return Err(used_error(display, err));
        }
    };
    if let Some(meta) = &target
        && let Err(err) = check_regular(meta, display)
    {
        undo_folders();
        return Err(err);
    }
    let failed = |step, source| write_failed(display, target.is_some(), step, source);
    // Each name is noted outside the workspace before the file is made, so that a kill at any
    // point before the rename is cleaned up at the next start (`runtime::pending`).
    let noting = |temp: &Path| pending::note(workspace.pending_dir(), &relative.join(temp));
    let (mut file, temp, note) = create_temp(dir, name.as_os_str(), target.as_ref(), noting)
        .map_err(|err| {
            undo_folders();
            failed("cannot create a temporary file in its folder: ", err)
        })?;
    let written = fill(&mut file, target.as_ref(), content).and_then(|()| {
        drop(file);
        beneath::rename(dir, &temp, name)
    });
    if let Err(err) = written {
        let _ = beneath::remove_file(dir, &temp);
        drop(note);
        undo_folders();
        return Err(failed("", err));
    }
    drop(note);
    let note = rustix::fs::fsync(dir).err().map(|err| {
        format!(" (Its folder could not be synced, so the change may not survive a crash: {err}.)")
    });
    Ok(Written { note, created_folders: made.created.len() })
}

/// Why a write failed, and that the file was left as it was; a file-size limit (`EFBIG`) is
/// named as such.
fn write_failed(display: &str, existed: bool, step: &'static str, source: io::Error) -> PathError {
    let step = if source.raw_os_error() == Some(rustix::io::Errno::FBIG.raw_os_error()) {
        "the file would exceed the size limit: "
    } else {
        step
    };
    PathError::WriteFailed {
        path: display.to_owned(),
        step,
        source,
        left: if existed {
            format!("`{display}` was left as it was")
        } else {
            format!("`{display}` was not created")
        },
    }
}

/// Whether `name` is one [`create_temp`] makes, for any target.
pub(crate) fn is_keel_temp(name: &[u8]) -> bool {
    let Some(rest) = name.strip_prefix(b".").and_then(|rest| rest.strip_suffix(b".tmp")) else {
        return false;
    };
    let Some(at) = rest.len().checked_sub(TEMP_RANDOM_HEX) else { return false };
    let (stem, random) = rest.split_at(at);
    stem.ends_with(b".keel-") && random.iter().all(u8::is_ascii_hexdigit)
}

/// Whether `name` is one [`create_temp`] makes for a file whose name starts with `stem`.
fn is_temp_name(name: &[u8], stem: &[u8]) -> bool {
    let mut prefix = b".".to_vec();
    prefix.extend_from_slice(&stem[..stem.len().min(TEMP_NAME_STEM_BYTES)]);
    prefix.extend_from_slice(b".keel-");
    name.strip_prefix(prefix.as_slice()).and_then(|rest| rest.strip_suffix(b".tmp")).is_some_and(
        |random| random.len() == TEMP_RANDOM_HEX && random.iter().all(u8::is_ascii_hexdigit),
    )
}

/// Removes the temporary files a write to `path` (as the model names it) left behind when the
/// process was killed mid-write; returns how many. Only regular files named as [`create_temp`]
/// names them, in the target's own folder, are removed.
pub(crate) fn remove_leftover_temps(workspace: &Workspace, path: &str) -> usize {
    let Ok(target) = workspace.resolve_writable(path) else { return 0 };
    let (Some(folder), Some(name)) = (target.parent(), target.file_name()) else { return 0 };
    let Ok(dir) = workspace.open_folder(folder) else { return 0 };
    remove_temps_in(dir.as_fd(), |entry| is_temp_name(entry, name.as_bytes()))
}

/// Removes the regular files in the folder `dir` whose names `ours` accepts; returns how many.
pub(crate) fn remove_temps_in(dir: BorrowedFd<'_>, ours: impl Fn(&[u8]) -> bool) -> usize {
    let Ok(entries) = rustix::fs::Dir::read_from(dir) else { return 0 };
    let mut removed = 0;
    for entry in entries.flatten() {
        let file_name = Path::new(OsStr::from_bytes(entry.file_name().to_bytes()));
        if ours(file_name.as_os_str().as_bytes())
            && beneath::metadata(dir, file_name).ok().flatten().is_some_and(|meta| meta.is_file())
            && beneath::remove_file(dir, file_name).is_ok()
        {
            removed += 1;
        }
    }
    removed
}

/// Creates a new, empty file beside the target, in the folder `dir`, under an unused name:
/// `.NAME.keel-RANDOM.tmp`.
fn create_temp<N>(
    dir: BorrowedFd<'_>,
    name: &OsStr,
    target: Option<&Metadata>,
    note: impl Fn(&Path) -> N,
) -> io::Result<(File, PathBuf, N)> {
    let stem = &name.as_bytes()[..name.len().min(TEMP_NAME_STEM_BYTES)];
    let mode = if target.is_some() { PRIVATE_MODE } else { NEW_FILE_MODE };
    let mut last = None;
    for _ in 0..TEMP_NAME_ATTEMPTS {
        let mut temp_name = b".".to_vec();
        temp_name.extend_from_slice(stem);
        temp_name.extend_from_slice(format!(".keel-{:016x}.tmp", fastrand::u64(..)).as_bytes());
        let temp = PathBuf::from(OsString::from_vec(temp_name));
        let noted = note(&temp);
        match beneath::create_new(dir, &temp, mode) {
            Ok(file) => return Ok((file, temp, noted)),
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists => last = Some(err),
            Err(err) => return Err(err),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::from(io::ErrorKind::AlreadyExists)))
}

/// Gives the temporary file the target's owner and mode, then the content, and syncs it.
fn fill(file: &mut File, target: Option<&Metadata>, content: &[u8]) -> io::Result<()> {
    if let Some(meta) = target {
        let own = file.metadata()?;
        if (own.uid(), own.gid()) != (meta.uid(), meta.gid()) {
            // Only root may give a file away; a member of the group may still set the group.
            // Where neither is allowed the file is the writer's, as any editor would leave it.
            if std::os::unix::fs::fchown(&*file, Some(meta.uid()), Some(meta.gid())).is_err() {
                let _ = std::os::unix::fs::fchown(&*file, None, Some(meta.gid()));
            }
        }
        // After the owner: changing it clears the setuid and setgid bits.
        file.set_permissions(Permissions::from_mode(meta.mode() & PERMISSION_BITS))?;
    }
    file.write_all(content)?;
    file.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temporary_names_stay_short_and_hidden() {
        let dir = tempfile::tempdir().unwrap();
        let fd = beneath::open_root(dir.path()).unwrap();
        let folder = beneath::open_folder(fd.as_fd(), Path::new("")).unwrap();
        let long = "x".repeat(250);
        let (_file, temp, ()) =
            create_temp(folder.as_fd(), OsStr::new(&long), None, |_| ()).unwrap();
        let name = temp.file_name().unwrap().to_str().unwrap();
        assert!(name.starts_with(".xxx") && name.ends_with(".tmp"), "{name}");
        assert!(name.len() < 100, "{name}");
        assert!(is_temp_name(name.as_bytes(), long.as_bytes()));
        assert!(!is_temp_name(b".xxx.keel-zz.tmp", long.as_bytes()));
        assert!(is_keel_temp(name.as_bytes()));
        assert!(!is_keel_temp(b".a.keel-zz.tmp") && !is_keel_temp(b"a.txt"));
    }

    #[test]
    fn folders_it_created_are_removed_again_but_not_others() {
        let dir = tempfile::tempdir().unwrap();
        let root = beneath::open_root(dir.path()).unwrap();
        let made = beneath::make_folder(root.as_fd(), Path::new("a/b/c")).unwrap();
        assert_eq!(made.created.len(), 3);
        std::fs::write(dir.path().join("a/kept.txt"), "x").unwrap();
        beneath::remove_made(root.as_fd(), &made.created);
        assert!(!dir.path().join("a/b").exists());
        assert!(dir.path().join("a/kept.txt").exists());
        assert!(beneath::make_folder(root.as_fd(), Path::new("")).unwrap().created.is_empty());
    }
}
