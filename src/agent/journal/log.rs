//! The session log on disk: an append-only file of JSON records per conversation.
//!
//! Every conversation is written as it happens to `.keel/sessions/<id>.jsonl` in the workspace,
//! one JSON record per line, each written straight through to the file: messages, board updates,
//! the reminder counter and the records undo needs. Reopening replays the log. A log cut off
//! mid-line (the process was killed while writing) loads up to its last whole record, says so, and
//! is trimmed there so new records follow a whole line.

use crate::agent::reminder::Pace;
use crate::agent::steps::Step;
use crate::message::{ContentBlock, Message, Role};
use crate::todo::{SUPERSEDED, TodoBoard, TodoItem};
use crate::tools::FileChange;
use crate::tools::undo::UndoStack;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde::{Deserialize, Serialize};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};
use thiserror::Error;

/// Where sessions live, relative to the workspace.
pub const SESSIONS_DIR: &str = ".keel/sessions";
const LOG_EXTENSION: &str = "jsonl";

/// One line of a session log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Record {
    /// The first line: when the session began.
    Start { id: String, started_at: u64 },
    /// A message appended to the history.
    Message { message: Message },
    /// The board after a valid update.
    Board { items: Vec<TodoItem> },
    /// The reminder counter after a round.
    Rounds { rounds_since_todo: u32 },
    /// A user turn began (undo groups changes by turn).
    Turn,
    /// A file a tool changed, with its contents before (absent: it did not exist) and after.
    Change {
        path: PathBuf,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        before: Option<String>,
        after: String,
    },
    /// The last turn's changes were undone.
    Undo,
    // The board's own bookkeeping (see `agent::reminder`, `agent::steps`, `todo::edit`).
    /// The reminder's rhythm and the drift count after a round.
    Pace { pace: Pace },
    /// The person changed the board (the `Board` record holds the result); the model is told
    /// in its next request.
    BoardEdit { change: String },
    /// The person's changes so far were told to the model.
    BoardEditsTold,
    /// A write or an edit the model made, for the repeated-step answer.
    Step { step: Step },
    /// A board answer in the history that a later update replaced became `todo::SUPERSEDED`.
    Superseded { message: usize, block: usize },
}

impl Record {
    /// The record of a file change, contents in base64 (files need not be text).
    pub fn change(change: &FileChange) -> Self {
        Self::Change {
            path: change.path.clone(),
            before: change.before.as_ref().map(|bytes| BASE64.encode(bytes)),
            after: BASE64.encode(&change.after),
        }
    }
}

/// Why a session could not be opened.
#[derive(Debug, Error)]
pub enum SessionError {
    #[error("no session {id} in {dir}")]
    NotFound { id: String, dir: PathBuf },
    #[error("no saved session in {0}: start one by running keel here")]
    NoneSaved(PathBuf),
    #[error("session log {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
}

/// What a session log held.
#[derive(Debug, Clone, Default)]
pub struct Restored {
    pub history: Vec<Message>,
    pub board: TodoBoard,
    pub rounds_since_todo: u32,
    pub pace: Pace,
    /// The person's board changes not yet told to the model.
    pub board_edits: Vec<String>,
    pub steps: Vec<Step>,
    pub undo: UndoStack,
    /// Things the person should know (a cut-off log, records that did not parse).
    pub warnings: Vec<String>,
}

/// One line of `keel sessions`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionInfo {
    pub id: String,
    pub started_at: u64,
    pub first_prompt: String,
    pub done: usize,
    pub total: usize,
}

/// An open session log, appended to as the conversation goes.
#[derive(Debug)]
pub struct SessionLog {
    id: String,
    path: PathBuf,
    file: File,
}

impl SessionLog {
    /// Starts a new session in `workspace`.
    pub fn create(workspace: &Path) -> Result<Self, SessionError> {
        let dir = workspace.join(SESSIONS_DIR);
        std::fs::create_dir_all(&dir)
            .map_err(|source| SessionError::Io { path: dir.clone(), source })?;
        let started_at = now();
        let id = new_id(started_at);
        let path = dir.join(format!("{id}.{LOG_EXTENSION}"));
        let file = OpenOptions::new()
            .create_new(true)
            .append(true)
            .open(&path)
            .map_err(|source| SessionError::Io { path: path.clone(), source })?;
        let mut log = Self { id: id.clone(), path, file };
        log.append(&Record::Start { id, started_at })?;
        Ok(log)
    }

    /// Reopens session `id` of `workspace` and replays it.
    pub fn open(workspace: &Path, id: &str) -> Result<(Self, Restored), SessionError> {
        let dir = workspace.join(SESSIONS_DIR);
        let path = dir.join(format!("{id}.{LOG_EXTENSION}"));
        if !path.is_file() {
            return Err(SessionError::NotFound { id: id.to_owned(), dir });
        }
        let io = |source| SessionError::Io { path: path.clone(), source };
        let bytes = std::fs::read(&path).map_err(io)?;
        let (restored, whole_len) = replay(&bytes);
        let file = OpenOptions::new().append(true).open(&path).map_err(io)?;
        if whole_len < bytes.len() {
            file.set_len(u64::try_from(whole_len).unwrap_or(u64::MAX)).map_err(io)?;
        }
        Ok((Self { id: id.to_owned(), path, file }, restored))
    }

    /// Reopens the newest session of `workspace`.
    pub fn open_newest(workspace: &Path) -> Result<(Self, Restored), SessionError> {
        let newest = list(workspace)?
            .into_iter()
            .max_by(|a, b| (a.started_at, &a.id).cmp(&(b.started_at, &b.id)))
            .ok_or_else(|| SessionError::NoneSaved(workspace.join(SESSIONS_DIR)))?;
        Self::open(workspace, &newest.id)
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes one record as one line, straight through to the file.
    pub fn append(&mut self, record: &Record) -> Result<(), SessionError> {
        let io = |source| SessionError::Io { path: self.path.clone(), source };
        let mut line = serde_json::to_vec(record).map_err(|err| io(err.into()))?;
        line.push(b'\n');
        self.file.write_all(&line).map_err(io)?;
        self.file.flush().map_err(io)
    }
}

/// Replays a log's bytes. Returns what it held and the length of its whole lines.
fn replay(bytes: &[u8]) -> (Restored, usize) {
    let mut restored = Restored::default();
    let mut whole_len = 0;
    let mut rest = bytes;
    while !rest.is_empty() {
        let Some(end) = rest.iter().position(|&byte| byte == b'\n') else {
            restored.warnings.push(
                "the session log was cut off mid-record (keel was stopped while writing); \
                 loaded everything up to the last whole record"
                    .to_owned(),
            );
            break;
        };
        let line = &rest[..end];
        rest = &rest[end + 1..];
        whole_len += end + 1;
        match serde_json::from_slice::<Record>(line) {
            Ok(record) => apply(&mut restored, record),
            Err(err) if !line.iter().all(u8::is_ascii_whitespace) => {
                restored
                    .warnings
                    .push(format!("skipped a session record that did not parse: {err}"));
            }
            Err(_) => {}
        }
    }
    (restored, whole_len)
}

fn apply(restored: &mut Restored, record: Record) {
    match record {
        Record::Start { .. } => {}
        Record::Message { message } => restored.history.push(message),
        Record::Board { items } => restored.board = TodoBoard::from_items(items),
        Record::Rounds { rounds_since_todo } => restored.rounds_since_todo = rounds_since_todo,
        Record::Turn => restored.undo.begin_turn(),
        Record::Change { path, before, after } => {
            let decode = |text: &str| BASE64.decode(text).ok();
            if let Some(after) = decode(&after) {
                let before = before.as_deref().and_then(decode);
                restored.undo.record([FileChange { path, before, after }]);
            }
        }
        Record::Undo => {
            restored.undo.forget_last();
        }
        Record::Pace { pace } => restored.pace = pace,
        Record::BoardEdit { change } => restored.board_edits.push(change),
        Record::BoardEditsTold => restored.board_edits.clear(),
        Record::Step { step } => restored.steps.push(step),
        Record::Superseded { message, block } => {
            let answer = restored.history.get_mut(message).and_then(|m| m.content.get_mut(block));
            if let Some(ContentBlock::ToolResult { content, .. }) = answer {
                SUPERSEDED.clone_into(content);
            }
        }
    }
}

/// The sessions saved in `workspace`, oldest first.
pub fn list(workspace: &Path) -> Result<Vec<SessionInfo>, SessionError> {
    let dir = workspace.join(SESSIONS_DIR);
    let entries = match std::fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => return Err(SessionError::Io { path: dir, source }),
    };
    let mut sessions = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().and_then(|ext| ext.to_str()) != Some(LOG_EXTENSION) {
            continue;
        }
        let Some(id) = path.file_stem().and_then(|stem| stem.to_str()).map(str::to_owned) else {
            continue;
        };
        let Ok(bytes) = std::fs::read(&path) else { continue };
        let (restored, _) = replay(&bytes);
        let started_at = bytes
            .split(|&byte| byte == b'\n')
            .next()
            .and_then(|line| serde_json::from_slice::<Record>(line).ok())
            .and_then(|record| match record {
                Record::Start { started_at, .. } => Some(started_at),
                _ => None,
            })
            .unwrap_or_default();
        let first_prompt = restored
            .history
            .iter()
            .find(|message| message.role == Role::User && message.is_typed_by_user())
            .map(Message::text)
            .unwrap_or_default();
        sessions.push(SessionInfo {
            id,
            started_at,
            first_prompt,
            done: restored.board.done(),
            total: restored.board.total(),
        });
    }
    sessions.sort_by(|a, b| (a.started_at, &a.id).cmp(&(b.started_at, &b.id)));
    Ok(sessions)
}

fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |elapsed| elapsed.as_secs())
}

/// A sortable, unique id: the start time, then a few random characters.
fn new_id(started_at: u64) -> String {
    const SUFFIX_LEN: usize = 4;
    let suffix: String = std::iter::repeat_with(fastrand::lowercase).take(SUFFIX_LEN).collect();
    format!("{started_at}-{suffix}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_log_replays_to_the_same_state() {
        let dir = tempfile::tempdir().unwrap();
        let mut log = SessionLog::create(dir.path()).unwrap();
        let mut board = TodoBoard::default();
        board.update(&json!({"items": [{"id": "1", "text": "a", "status": "completed"}]})).unwrap();
        log.append(&Record::Turn).unwrap();
        log.append(&Record::Message { message: Message::user_text("hello") }).unwrap();
        log.append(&Record::Board { items: board.items().to_vec() }).unwrap();
        log.append(&Record::Rounds { rounds_since_todo: 2 }).unwrap();
        let id = log.id().to_owned();
        drop(log);

        let (_, restored) = SessionLog::open(dir.path(), &id).unwrap();
        assert_eq!(restored.history, vec![Message::user_text("hello")]);
        assert_eq!(restored.board, board);
        assert_eq!(restored.rounds_since_todo, 2);
        assert!(restored.warnings.is_empty());

        let sessions = list(dir.path()).unwrap();
        assert_eq!(sessions.len(), 1);
        assert_eq!(
            (sessions[0].first_prompt.as_str(), sessions[0].done, sessions[0].total),
            ("hello", 1, 1)
        );
    }

    #[test]
    fn a_log_cut_mid_line_loads_up_to_its_last_whole_record_and_is_trimmed() {
        let dir = tempfile::tempdir().unwrap();
        let mut log = SessionLog::create(dir.path()).unwrap();
        log.append(&Record::Message { message: Message::user_text("kept") }).unwrap();
        let path = log.path().to_owned();
        let id = log.id().to_owned();
        drop(log);
        let mut file = OpenOptions::new().append(true).open(&path).unwrap();
        file.write_all(br#"{"type":"message","message":{"role":"us"#).unwrap();
        drop(file);

        let (mut log, restored) = SessionLog::open(dir.path(), &id).unwrap();
        assert_eq!(restored.history.len(), 1);
        assert!(restored.warnings[0].contains("cut off"));
        log.append(&Record::Message { message: Message::user_text("next") }).unwrap();
        drop(log);
        let (_, restored) = SessionLog::open(dir.path(), &id).unwrap();
        assert_eq!(restored.history.len(), 2);
        assert!(restored.warnings.is_empty());
    }

    #[test]
    fn the_newest_session_is_found_and_a_missing_one_is_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(SessionLog::open_newest(dir.path()), Err(SessionError::NoneSaved(_))));
        // Logs started a second apart (two created now would share their second): the newer
        // one's id sorts first as text, so only the start time can tell them apart.
        let sessions = dir.path().join(SESSIONS_DIR);
        std::fs::create_dir_all(&sessions).unwrap();
        for (id, started_at) in [("10-aaaa", 10), ("9-zzzz", 9)] {
            let start =
                serde_json::to_string(&Record::Start { id: id.into(), started_at }).unwrap();
            std::fs::write(sessions.join(format!("{id}.{LOG_EXTENSION}")), start + "\n").unwrap();
        }
        let (log, _) = SessionLog::open_newest(dir.path()).unwrap();
        assert_eq!(log.id(), "10-aaaa");
        let created = SessionLog::create(dir.path()).unwrap().id().to_owned();
        assert_eq!(SessionLog::open_newest(dir.path()).unwrap().0.id(), created);
        assert!(
            SessionLog::open(dir.path(), "nope")
                .unwrap_err()
                .to_string()
                .contains("no session nope")
        );
    }

    #[test]
    fn undo_records_survive_a_restart() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.txt");
        std::fs::write(&file, "after").unwrap();
        let mut log = SessionLog::create(dir.path()).unwrap();
        log.append(&Record::Turn).unwrap();
        log.append(&Record::change(&FileChange {
            path: file.clone(),
            before: Some(b"before".to_vec()),
            after: b"after".to_vec(),
        }))
        .unwrap();
        let id = log.id().to_owned();
        drop(log);
        let (_, mut restored) = SessionLog::open(dir.path(), &id).unwrap();
        let report = restored.undo.undo();
        assert_eq!(report.restored, vec![file.clone()]);
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "before");
    }
}
