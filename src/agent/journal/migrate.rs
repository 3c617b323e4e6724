//! Moving the session logs an older keel kept in the workspace (`.keel/sessions/`) out of it.
//!
//! Each log is read once, written to the workspace's folder in keel's state (synced), and only
//! then removed from the workspace; the emptied `.keel/sessions/` goes, and so does `.keel/` if
//! nothing else (a `config.toml`) is in it. Only regular files reached through real folders are
//! moved: a `.keel` or `sessions` that is a symlink, or a log that is one, stays where it is. A
//! log is not trusted for being moved — what undo does with its records is checked path by path
//! against the workspace like any other.

use super::SessionError;
use super::log::LOG_EXTENSION;
use super::store::{SessionStore, check_id};
use std::fs::{self, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// Where an older keel kept sessions, relative to the workspace.
pub const LEGACY_DIR: &str = ".keel/sessions";
const KEEL_DIR: &str = ".keel";
const LOG_MODE: u32 = 0o600;

impl SessionStore {
    /// Moves the workspace's old session logs into the store. Returns what the person should be
    /// told (nothing when there was nothing to move).
    pub fn adopt_legacy_logs(&self) -> Result<Vec<String>, SessionError> {
        let keel = self.workspace().join(KEEL_DIR);
        let legacy = self.workspace().join(LEGACY_DIR);
        let real_dir = |path: &Path| fs::symlink_metadata(path).is_ok_and(|meta| meta.is_dir());
        if !real_dir(&keel) || !real_dir(&legacy) {
            return Ok(Vec::new());
        }
        let entries = fs::read_dir(&legacy)
            .map_err(|source| SessionError::Io { path: legacy.clone(), source })?;
        let mut moved = 0;
        let mut notes = Vec::new();
        let mut sessions = None;
        for entry in entries.flatten() {
            let path = entry.path();
            let (Some(id), Some(LOG_EXTENSION)) = (
                path.file_stem().and_then(|stem| stem.to_str()),
                path.extension().and_then(|ext| ext.to_str()),
            ) else {
                continue;
            };
            let shown = format!("{LEGACY_DIR}/{id}.{LOG_EXTENSION}");
            if check_id(id).is_err() || !fs::symlink_metadata(&path).is_ok_and(|m| m.is_file()) {
                notes.push(format!("left {shown} where it is: it is not a session log keel wrote"));
                continue;
            }
            let dir = match &sessions {
                Some(dir) => dir,
                None => sessions.insert(self.prepare()?),
            };
            let target = dir.join(format!("{id}.{LOG_EXTENSION}"));
            match copy_new(&path, &target) {
                Ok(()) => {
                    fs::remove_file(&path)
                        .map_err(|source| SessionError::Io { path: path.clone(), source })?;
                    moved += 1;
                }
                Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => notes.push(format!(
                    "left {shown} where it is: a session {id} is already saved in {}",
                    dir.display()
                )),
                Err(source) => return Err(SessionError::Io { path: target, source }),
            }
        }
        // Only empty folders go; anything else in them stays.
        let _ = fs::remove_dir(&legacy);
        let _ = fs::remove_dir(&keel);
        if moved > 0 {
            let logs = if moved == 1 {
                "1 session log".to_owned()
            } else {
                format!("{moved} session logs")
            };
            notes.insert(
                0,
                format!(
                    "moved {logs} from {LEGACY_DIR} in the workspace to {}: keel keeps its \
                     state outside the workspace now",
                    self.sessions_dir().display()
                ),
            );
        }
        Ok(notes)
    }
}

/// Copies the regular file `from` to a new file `to` and syncs it; never overwrites, never
/// follows a symlink or waits on a FIFO swapped in.
fn copy_new(from: &Path, to: &Path) -> std::io::Result<()> {
    let mut source = OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
        .open(from)?;
    if !source.metadata()?.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut source, &mut bytes)?;
    let mut file = OpenOptions::new().write(true).create_new(true).mode(LOG_MODE).open(to)?;
    let written = file.write_all(&bytes).and_then(|()| file.sync_all());
    if written.is_err() {
        let _ = fs::remove_file(to);
    }
    written
}
