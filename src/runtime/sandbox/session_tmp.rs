//! The session's `/tmp`: a private folder keel owns in its state folder, bound at `/tmp` for every
//! command of the session, so that what one command downloads or unpacks there the next finds;
//! never the host's `/tmp`, and never another session's. It goes when the session ends.
//!
//! Each lives in `STATE/tmp/`, locked (`flock`) by its session for as long as it runs: one whose
//! lock is free belongs to a keel that ended without removing it (killed), and the next session
//! to start removes it.

use nix::fcntl::{Flock, FlockArg};
use std::fs::File;
use std::path::{Path, PathBuf};

/// The folder of every session's `/tmp` in keel's state folder.
const TMP_FOLDER: &str = "tmp";
/// A fresh name's random part, in characters.
const NAME_CHARS: usize = 12;
/// Folders a command made unreadable are opened up before they are removed.
const OPENED_UP: u32 = 0o700;

/// A session's `/tmp`, removed when dropped.
#[derive(Debug)]
pub struct SessionTmp {
    path: PathBuf,
    _lock: Flock<File>,
}

impl SessionTmp {
    /// Makes a new session's `/tmp` in keel's state folder `state`, removing those sessions that
    /// ended left.
    pub fn create(state: &Path) -> std::io::Result<Self> {
        let folder = state.join(TMP_FOLDER);
        crate::runtime::undo::shadow::create_private_dir(&folder)?;
        sweep(&folder);
        let name: String =
            std::iter::repeat_with(fastrand::alphanumeric).take(NAME_CHARS).collect();
        let path = folder.join(format!("{}-{name}", std::process::id()));
        crate::runtime::undo::shadow::create_private_dir(&path)?;
        let lock = Flock::lock(File::open(&path)?, FlockArg::LockExclusiveNonblock)
            .map_err(|(_, errno)| std::io::Error::from(errno))?;
        Ok(Self { path, _lock: lock })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for SessionTmp {
    fn drop(&mut self) {
        remove(&self.path);
    }
}

/// Removes every session's `/tmp` in `folder` whose session has ended.
fn sweep(folder: &Path) {
    let Ok(entries) = std::fs::read_dir(folder) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(file) = File::open(&path) else { continue };
        if let Ok(_ended) = Flock::lock(file, FlockArg::LockExclusiveNonblock) {
            remove(&path);
        }
    }
}

/// Removes `path` and all in it; folders a command made unreadable are opened up first.
fn remove(path: &Path) {
    if std::fs::remove_dir_all(path).is_ok() {
        return;
    }
    open_up(path);
    let _ = std::fs::remove_dir_all(path);
}

fn open_up(folder: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let _ = std::fs::set_permissions(folder, std::fs::Permissions::from_mode(OPENED_UP));
    let Ok(entries) = std::fs::read_dir(folder) else { return };
    for entry in entries.flatten() {
        if entry.file_type().is_ok_and(|kind| kind.is_dir()) {
            open_up(&entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_session_has_its_own_and_an_ended_ones_goes() {
        let state = tempfile::tempdir().unwrap();
        let one = SessionTmp::create(state.path()).unwrap();
        let two = SessionTmp::create(state.path()).unwrap();
        assert_ne!(one.path(), two.path());
        std::fs::create_dir_all(one.path().join("locked/deeper")).unwrap();
        std::fs::set_permissions(
            one.path().join("locked"),
            std::os::unix::fs::PermissionsExt::from_mode(0o000),
        )
        .unwrap();
        let kept = one.path().to_path_buf();
        drop(one);
        assert!(!kept.exists(), "removed as the session ends");
        // One a killed keel left, unlocked: the next session removes it.
        let left = state.path().join(TMP_FOLDER).join("1-left");
        std::fs::create_dir(&left).unwrap();
        let three = SessionTmp::create(state.path()).unwrap();
        assert!(!left.exists());
        assert!(two.path().exists() && three.path().exists(), "live ones stay");
    }
}
