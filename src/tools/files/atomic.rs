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
//! - The permission bits are kept (setuid, setgid and sticky included), and so are the owner and
//!   group where the process may set them (as root; the group for a member of it). Extended
//!   attributes and ACLs are not copied. A new file gets `0o666` less the umask (`0644` under the
//!   usual `022`), like any editor's.
//! - A file with several hard links gets a new inode: its other names keep the old content.

use super::open::{check_regular, existing};
use crate::tools::{ToolError, Workspace};
use std::ffi::{OsStr, OsString};
use std::fs::{self, File, Metadata, OpenOptions, Permissions};
use std::io::{self, Write};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
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

/// Replaces (or creates) the regular file at `path` with `content`, atomically; see the module
/// doc.
pub(crate) fn write_atomically(
    path: &Path,
    display: &str,
    content: &[u8],
) -> Result<Written, ToolError> {
    let (Some(folder), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(ToolError::InvalidPath {
            path: display.to_owned(),
            reason: "it names no file".to_owned(),
        });
    };
    let target = existing(path, display)?;
    if let Some(meta) = &target {
        check_regular(meta, display)?;
    }
    let failed = |step: &'static str, source: io::Error| ToolError::WriteFailed {
        path: display.to_owned(),
        step,
        source,
        left: if target.is_some() {
            format!("`{display}` was left as it was")
        } else {
            format!("`{display}` was not created")
        },
    };
    let created =
        create_folders(folder).map_err(|err| failed("cannot create its folder: ", err))?;
    let undo_folders = || remove_folders(&created);
    // The folder was real when the path was resolved; a symlink put in its place since would
    // send the write elsewhere.
    if folder.canonicalize().ok().as_deref() != Some(folder) {
        undo_folders();
        return Err(ToolError::InvalidPath {
            path: display.to_owned(),
            reason: "its folder was replaced (by a symlink?) after the path was checked, so \
                     nothing was written; try again"
                .to_owned(),
        });
    }
    let (mut file, temp) = create_temp(folder, name, target.as_ref()).map_err(|err| {
        undo_folders();
        failed("cannot create a temporary file in its folder: ", err)
    })?;
    let written = fill(&mut file, target.as_ref(), content).and_then(|()| {
        drop(file);
        fs::rename(&temp, path)
    });
    if let Err(err) = written {
        let _ = fs::remove_file(&temp);
        undo_folders();
        return Err(failed("", err));
    }
    let note = sync_folder(folder).err().map(|err| {
        format!(" (Its folder could not be synced, so the change may not survive a crash: {err}.)")
    });
    Ok(Written { note, created_folders: created.len() })
}

/// Removes the temporary files a write to `path` (as the model names it) left behind when the
/// process was killed mid-write; returns how many. Only regular files named as [`create_temp`]
/// names them, in the target's own folder, are removed.
pub(crate) fn remove_leftover_temps(workspace: &Workspace, path: &str) -> usize {
    let Ok(target) = workspace.resolve_writable(path) else { return 0 };
    let (Some(folder), Some(name)) = (target.parent(), target.file_name()) else { return 0 };
    let stem = &name.as_bytes()[..name.len().min(TEMP_NAME_STEM_BYTES)];
    let mut prefix = b".".to_vec();
    prefix.extend_from_slice(stem);
    prefix.extend_from_slice(b".keel-");
    let Ok(entries) = fs::read_dir(folder) else { return 0 };
    let mut removed = 0;
    for entry in entries.flatten() {
        let file_name = entry.file_name();
        let Some(random) = file_name
            .as_bytes()
            .strip_prefix(prefix.as_slice())
            .and_then(|rest| rest.strip_suffix(b".tmp"))
        else {
            continue;
        };
        let ours = random.len() == TEMP_RANDOM_HEX && random.iter().all(u8::is_ascii_hexdigit);
        if ours
            && fs::symlink_metadata(entry.path()).is_ok_and(|meta| meta.is_file())
            && fs::remove_file(entry.path()).is_ok()
        {
            removed += 1;
        }
    }
    removed
}

/// Creates `folder` and its missing parents; returns the ones it created, deepest first. On
/// failure, removes what it created.
fn create_folders(folder: &Path) -> io::Result<Vec<PathBuf>> {
    let missing: Vec<PathBuf> = folder
        .ancestors()
        .take_while(|at| fs::symlink_metadata(at).is_err())
        .map(Path::to_path_buf)
        .collect();
    if missing.is_empty() {
        return Ok(missing);
    }
    match fs::create_dir_all(folder) {
        Ok(()) => Ok(missing),
        Err(err) => {
            remove_folders(&missing);
            Err(err)
        }
    }
}

/// Removes folders this write created, deepest first; a folder something else has put a file in
/// since is left.
fn remove_folders(created: &[PathBuf]) {
    for folder in created {
        let _ = fs::remove_dir(folder);
    }
}

/// Creates a new, empty file beside the target under an unused name:
/// `.NAME.keel-RANDOM.tmp`.
fn create_temp(
    folder: &Path,
    name: &OsStr,
    target: Option<&Metadata>,
) -> io::Result<(File, PathBuf)> {
    let stem = &name.as_bytes()[..name.len().min(TEMP_NAME_STEM_BYTES)];
    let mode = if target.is_some() { PRIVATE_MODE } else { NEW_FILE_MODE };
    let mut last = None;
    for _ in 0..TEMP_NAME_ATTEMPTS {
        let mut temp_name = b".".to_vec();
        temp_name.extend_from_slice(stem);
        temp_name.extend_from_slice(format!(".keel-{:016x}.tmp", fastrand::u64(..)).as_bytes());
        let temp = folder.join(OsString::from_vec(temp_name));
        match OpenOptions::new().write(true).create_new(true).mode(mode).open(&temp) {
            Ok(file) => return Ok((file, temp)),
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

/// Makes a rename in `folder` durable.
fn sync_folder(folder: &Path) -> io::Result<()> {
    File::open(folder)?.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temporary_names_stay_short_and_hidden() {
        let dir = tempfile::tempdir().unwrap();
        let long = "x".repeat(250);
        let (_file, temp) = create_temp(dir.path(), OsStr::new(&long), None).unwrap();
        let name = temp.file_name().unwrap().to_str().unwrap();
        assert!(name.starts_with(".xxx") && name.ends_with(".tmp"), "{name}");
        assert!(name.len() < 100, "{name}");
    }

    #[test]
    fn folders_it_created_are_removed_again_but_not_others() {
        let dir = tempfile::tempdir().unwrap();
        let created = create_folders(&dir.path().join("a/b/c")).unwrap();
        assert_eq!(created.len(), 3);
        fs::write(dir.path().join("a/kept.txt"), "x").unwrap();
        remove_folders(&created);
        assert!(!dir.path().join("a/b").exists());
        assert!(dir.path().join("a/kept.txt").exists());
        assert!(create_folders(dir.path()).unwrap().is_empty());
    }
}
