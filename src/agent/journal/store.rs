//! Where a workspace's sessions live: outside it, under keel's state folder.
//!
//! keel keeps its state in `$XDG_STATE_HOME/keel/` (by default `~/.local/state/keel/`), one
//! folder per workspace under `workspaces/`, named after the workspace's canonical path so a
//! person can tell which is which (`home-ann-src-app-1f2e3d4c5b6a7988`: the path made safe for a
//! file name, cut to its end if long, and a hash of the whole path). The folder holds a
//! `workspace` file naming the path (a second path landing on the same name is refused, not
//! mixed in), `sessions/` with one log per session, and `shadow.git`, the repository the
//! workspace snapshots are kept in. Everything is created readable by its owner only.
//!
//! Session ids are what `keel sessions` prints (`1718000000-abcd`): letters, digits, `-` and `_`,
//! so an id never names a path; anything else is refused before a file is opened.

use super::log::{LOG_EXTENSION, SessionLog};
use super::replay::Restored;
use super::{SessionError, SessionInfo};
use crate::runtime::programs;
use crate::runtime::undo::Shadow;
use crate::runtime::undo::shadow::create_private_dir;
use crate::state_home::{Identity, checked, state_dir};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::SystemTime;

const WORKSPACES_DIR: &str = "workspaces";
/// The program undo's snapshots run.
const GIT: &str = "git";
const SESSIONS_DIR: &str = "sessions";
const SHADOW_DIR: &str = "shadow.git";
/// The file in a workspace's folder that names the workspace.
const WORKSPACE_FILE: &str = "workspace";
/// The folder of notes of temporary files in flight (`runtime::pending`).
const PENDING_DIR: &str = "pending";
/// The private index a session snapshots through, inside the shadow repository.
const INDEX_PREFIX: &str = "keel-index-";
/// How much of the workspace's path the folder name keeps, in characters (its end).
const NAME_MAX_CHARS: usize = 64;
/// The longest session id accepted.
const ID_MAX_CHARS: usize = 64;

/// Refuses anything that is not a session id.
pub fn check_id(id: &str) -> Result<(), SessionError> {
    let fits = !id.is_empty()
        && id.len() <= ID_MAX_CHARS
        && id.bytes().all(|byte| byte.is_ascii_alphanumeric() || byte == b'-' || byte == b'_');
    if fits { Ok(()) } else { Err(SessionError::InvalidId(id.to_owned())) }
}

/// One workspace's sessions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionStore {
    state: PathBuf,
    dir: PathBuf,
    workspace: PathBuf,
    /// The `git` undo's snapshots run, found outside what commands may write, or why none is.
    git: Result<PathBuf, String>,
    /// The workspace's folder as it was first prepared: later uses check it is the same.
    identity: OnceLock<Identity>,
}

impl SessionStore {
    /// The sessions of `workspace` (a canonical path) under the state folder `state`.
    pub fn new(state: &Path, workspace: &Path) -> Self {
        let dir = state.join(WORKSPACES_DIR).join(folder_name(workspace));
        let git = programs::find(GIT.as_ref(), &[workspace.to_owned()]);
        let identity = OnceLock::new();
        Self { state: state.to_owned(), dir, workspace: workspace.to_owned(), git, identity }
    }

    /// The same store, its `git` found outside `writable` too: every folder commands may write
    /// (the workspace and the person's `writable_roots`).
    pub fn commands_write(self, writable: &[PathBuf]) -> Self {
        Self { git: programs::find(GIT.as_ref(), writable), ..self }
    }

    /// The sessions of `workspace` in the state folder the environment names.
    pub fn from_env(workspace: &Path) -> Result<Self, SessionError> {
        let env = |name: &str| std::env::var(name).ok();
        let state = state_dir(&env).ok_or(SessionError::NoStateDir)?;
        Ok(Self::new(&state, workspace))
    }

    /// The workspace's folder in the state folder.
    /// Where writes in this workspace note their temporary files in flight.
    pub fn pending_dir(&self) -> PathBuf {
        self.dir.join(PENDING_DIR)
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn workspace(&self) -> &Path {
        &self.workspace
    }

    /// Where the logs are.
    pub fn sessions_dir(&self) -> PathBuf {
        self.dir.join(SESSIONS_DIR)
    }

    /// Starts a new session.
    pub fn create(&self) -> Result<SessionLog, SessionError> {
        SessionLog::create(&self.prepare()?, None)
    }

    /// Starts the new session whose id and start time were `planned` before.
    pub(super) fn create_planned(
        &self,
        planned: Option<(String, u64)>,
    ) -> Result<SessionLog, SessionError> {
        SessionLog::create(&self.prepare()?, planned)
    }

    /// Where session `id`'s log is, or will be.
    pub fn log_path(&self, id: &str) -> PathBuf {
        self.sessions_dir().join(format!("{id}.{LOG_EXTENSION}"))
    }

    /// Reopens session `id` and replays it, repairing a damaged log.
    pub fn open(&self, id: &str) -> Result<(SessionLog, Restored), SessionError> {
        check_id(id)?;
        SessionLog::open(&self.prepare()?, id)
    }

    /// What session `id` holds, read without taking it over: no lock, no repair. For looking
    /// at a session another process may have open.
    pub fn peek(&self, id: &str) -> Result<Restored, SessionError> {
        check_id(id)?;
        let path = self.sessions_dir().join(format!("{id}.{LOG_EXTENSION}"));
        if !std::fs::symlink_metadata(&path).is_ok_and(|meta| meta.is_file()) {
            return Err(SessionError::NotFound { id: id.to_owned(), dir: self.sessions_dir() });
        }
        let io = |source| SessionError::Io { path: path.clone(), source };
        let file = std::fs::File::open(&path).map_err(io)?;
        Ok(super::replay::replay_from(std::io::BufReader::new(file)).map_err(io)?.restored)
    }

    /// Reopens the session whose log was written last.
    pub fn open_newest(&self) -> Result<(SessionLog, Restored), SessionError> {
        let newest = self.newest_first()?.into_iter().next();
        let id = newest.ok_or_else(|| SessionError::NoneSaved(self.workspace.clone()))?;
        self.open(&id)
    }

    /// The ids of the saved sessions, the one whose log was written last first (by the log's
    /// own modification time, not anything written inside it).
    pub fn newest_first(&self) -> Result<Vec<String>, SessionError> {
        let mut logs = self.logs()?;
        logs.sort_by(|a, b| (b.1, &b.0).cmp(&(a.1, &a.0)));
        Ok(logs.into_iter().map(|(id, _, _)| id).collect())
    }

    /// The saved sessions, the one written last at the end.
    pub fn list(&self) -> Result<Vec<SessionInfo>, SessionError> {
        let mut sessions = Vec::new();
        for (id, modified, path) in self.logs()? {
            // Read line by line: a large log is never held whole.
            let Ok(file) = std::fs::File::open(&path) else { continue };
            let Ok(replayed) = super::replay::replay_from(std::io::BufReader::new(file)) else {
                continue;
            };
            let restored = replayed.restored;
            let first_prompt = restored
                .history
                .iter()
                .find(|message| message.is_typed_by_user())
                .map(crate::message::Message::text)
                .unwrap_or_default();
            let held_by = path.parent().and_then(|dir| super::log::holder(dir, &id));
            sessions.push(SessionInfo {
                held_by,
                id,
                started_at: replayed.started_at,
                modified,
                first_prompt,
                done: restored.board.done(),
                total: restored.board.total(),
            });
        }
        sessions.sort_by(|a, b| (a.modified, &a.id).cmp(&(b.modified, &b.id)));
        Ok(sessions)
    }

    /// The shadow repository the workspace is snapshotted into, through session `id`'s index.
    pub fn shadow(&self, id: &str) -> Shadow {
        let git_dir = self.dir.join(SHADOW_DIR);
        let index = git_dir.join(format!("{INDEX_PREFIX}{id}"));
        let mut shadow =
            Shadow::new(git_dir, self.workspace.clone(), index).with_git_found(&self.git);
        if let Some(identity) = self.identity.get() {
            shadow = shadow.kept_in(&self.dir, *identity);
        }
        // keel's own state inside the workspace (say, a workspace that is the home folder) is
        // never snapshotted: it would snapshot the snapshots.
        match self.state.strip_prefix(&self.workspace).ok().and_then(Path::to_str) {
            Some(relative) if !relative.is_empty() => shadow.excluding(relative.to_owned()),
            _ => shadow,
        }
    }

    /// Creates the folders (owner only) and claims the workspace's folder; returns the sessions
    /// folder.
    pub(super) fn prepare(&self) -> Result<PathBuf, SessionError> {
        let sessions = self.sessions_dir();
        create_private_dir(&sessions)
            .map_err(|source| SessionError::Io { path: sessions.clone(), source })?;
        for folder in [&self.state, &self.dir] {
            checked(folder).map_err(|why| SessionError::Untrusted { path: folder.clone(), why })?;
        }
        let identity = checked(&self.dir)
            .map_err(|why| SessionError::Untrusted { path: self.dir.clone(), why })?;
        if *self.identity.get_or_init(|| identity) != identity {
            return Err(SessionError::Replaced(self.dir.clone()));
        }
        let claim = self.dir.join(WORKSPACE_FILE);
        let ours = self.workspace.as_os_str().as_encoded_bytes();
        match std::fs::read(&claim) {
            Ok(named) if named == ours => {}
            Ok(named) => {
                return Err(SessionError::Collision {
                    dir: self.dir.clone(),
                    other: String::from_utf8_lossy(&named).into_owned(),
                });
            }
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                std::fs::write(&claim, ours)
                    .map_err(|source| SessionError::Io { path: claim.clone(), source })?;
            }
            Err(source) => return Err(SessionError::Io { path: claim, source }),
        }
        Ok(sessions)
    }

    /// Every log: id, modification time, path. Only regular files with a valid id count.
    fn logs(&self) -> Result<Vec<(String, SystemTime, PathBuf)>, SessionError> {
        let dir = self.sessions_dir();
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(source) => return Err(SessionError::Io { path: dir, source }),
        };
        let mut logs = Vec::new();
        for entry in entries.flatten() {
            let path = entry.path();
            if path.extension().and_then(|ext| ext.to_str()) != Some(LOG_EXTENSION) {
                continue;
            }
            let Some(id) = path.file_stem().and_then(|stem| stem.to_str()) else { continue };
            let Ok(meta) = std::fs::symlink_metadata(&path) else { continue };
            if check_id(id).is_err() || !meta.is_file() {
                continue;
            }
            let modified = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
            logs.push((id.to_owned(), modified, path));
        }
        Ok(logs)
    }
}

/// The folder name for a workspace: its path made safe for a file name (the end kept if long),
/// then a hash of the whole path, so two paths never share a folder by accident.
fn folder_name(workspace: &Path) -> String {
    let path = workspace.as_os_str().as_encoded_bytes();
    let readable: String = String::from_utf8_lossy(path)
        .trim_start_matches('/')
        .chars()
        .map(|c| match c {
            '/' => '-',
            c if c.is_ascii_alphanumeric() || c == '.' || c == '-' => c,
            _ => '_',
        })
        .collect();
    let kept: Vec<char> = readable.chars().collect();
    let tail: String = kept[kept.len().saturating_sub(NAME_MAX_CHARS)..].iter().collect();
    let tail = tail.trim_start_matches('.');
    let stem = if tail.is_empty() { "root" } else { tail };
    format!("{stem}-{:016x}", fnv1a(path))
}

/// The 64-bit FNV-1a hash: small, and stable across Rust versions (unlike `DefaultHasher`).
fn fnv1a(bytes: &[u8]) -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    bytes.iter().fold(OFFSET, |hash, &byte| (hash ^ u64::from(byte)).wrapping_mul(PRIME))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folder_names_are_readable_distinct_and_stable() {
        let a = folder_name(Path::new("/home/ann/src/my app"));
        assert!(a.starts_with("home-ann-src-my_app-"), "{a}");
        let b = folder_name(Path::new("/w/my-app.v2"));
        assert!(b.starts_with("w-my-app.v2-"), "{b}");
        assert_ne!(a, folder_name(Path::new("/home/ann/src/my_app")), "sanitising alone collides");
        assert_eq!(a, folder_name(Path::new("/home/ann/src/my app")));
        // The hash is FNV-1a's, written out: a workspace's folder never moves between versions.
        assert_eq!(folder_name(Path::new("/")), "root-af63a24c860189fe");
        let long = format!("/{}", "d/".repeat(200));
        assert!(folder_name(Path::new(&long)).len() <= NAME_MAX_CHARS + 17);
        assert!(!folder_name(Path::new("/.hidden")).starts_with('.'));
    }

    #[test]
    fn only_plain_ids_are_accepted() {
        for good in ["1718000000-abcd", "a_b-C9"] {
            assert!(check_id(good).is_ok(), "{good}");
        }
        for bad in ["../../x", "a/b", ".hidden", "", "x.jsonl", "a b", &"x".repeat(65)] {
            assert!(matches!(check_id(bad), Err(SessionError::InvalidId(_))), "{bad}");
        }
    }

    #[test]
    fn a_state_folder_put_in_the_place_of_the_one_opened_is_never_used() {
        let state = tempfile::tempdir().unwrap();
        let work = tempfile::tempdir().unwrap();
        let store = SessionStore::new(&state.path().join("keel"), work.path());
        store.prepare().unwrap();
        let moved = state.path().join("keel-moved");
        std::fs::rename(state.path().join("keel"), &moved).unwrap();
        store.prepare().unwrap_err();
        let shadow = store.shadow("1-a");
        let err = shadow.snapshot().unwrap_err().to_string();
        assert!(err.contains("no longer the folder this session opened"), "{err}");
        assert!(matches!(store.prepare(), Err(SessionError::Replaced(_))));
    }

    #[test]
    fn a_second_workspace_on_the_same_folder_is_refused() {
        let state = tempfile::tempdir().unwrap();
        let store = SessionStore::new(state.path(), Path::new("/w/one"));
        store.prepare().unwrap();
        std::fs::write(store.dir().join(WORKSPACE_FILE), "/w/other").unwrap();
        assert!(matches!(store.prepare(), Err(SessionError::Collision { .. })));
    }
}
