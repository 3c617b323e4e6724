//! Sessions that survive restarts: the agent saves every change that matters on resume as it
//! happens, and a front end reopens a saved session to carry on.
//!
//! [`store`] says where a workspace's sessions live (outside it, in keel's state folder) and
//! names them; [`log`] is one open, locked log; [`record`] the format of a line, [`compaction`]
//! that of a compaction and how it applies to a history; `replay` turns
//! a log back into state and finds where a damaged one stops being valid; `recovery` answers the
//! calls a crash cut off; `migrate` moves logs an older keel left in the workspace. [`Journal`]
//! is the agent's side: whether the conversation is saved at all, the log created lazily at the
//! first record (so opening and quitting keel leaves no empty session behind), and a failure to
//! save reported once rather than at every record. Only `State` writes to it, so a change
//! cannot reach the history, the board or the reminder counter without reaching the log too.

pub mod compaction;
pub mod log;
mod migrate;
pub mod record;
mod recovery;
mod replay;
pub mod store;
mod valid_history;

pub use log::SessionLog;
pub use migrate::LEGACY_DIR;
pub use record::{CHILD_ID_PREFIX, NoteKind, Record};
pub use recovery::CUT_OFF;
pub(crate) use recovery::complete_cut_off_round;
pub use replay::{Restored, Shown};
pub use store::{SessionStore, check_id};

use crate::runtime::Workspace;
use crate::runtime::undo::{Shadow, UndoContext, UndoReport};
use std::path::PathBuf;
use std::time::SystemTime;
use thiserror::Error;
use tokio::sync::mpsc::UnboundedSender;

/// Why a session could not be opened or saved.
#[derive(Debug, Error)]
pub enum SessionError {
    #[error("no session {id} in {dir}")]
    NotFound { id: String, dir: PathBuf },
    #[error("no saved session for {0}: start one by running keel there")]
    NoneSaved(PathBuf),
    #[error(
        "`{0}` is not a session id (ids are letters, digits and dashes, such as \
         1718000000-abcd; `keel sessions` lists them)"
    )]
    InvalidId(String),
    #[error("session {id} is open in {}", holder(*.pid))]
    Locked { id: String, pid: Option<u32> },
    #[error("cannot tell where to keep sessions: neither XDG_STATE_HOME nor HOME is set")]
    NoStateDir,
    #[error("{} already holds the sessions of {other}; move it aside to save sessions here", .dir.display())]
    Collision { dir: PathBuf, other: String },
    #[error("session log {}: {source}", .path.display())]
    Io { path: PathBuf, source: std::io::Error },
    #[error("keel does not keep its state in {}: {why}", .path.display())]
    Untrusted { path: PathBuf, why: String },
    #[error(
        "{} is no longer the folder this session opened (a folder above it was moved or \
         replaced), so keel writes nothing there; look at it, then start keel again",
        .0.display()
    )]
    Replaced(PathBuf),
}

fn holder(pid: Option<u32>) -> String {
    match pid {
        Some(pid) => format!("keel process {pid}"),
        None => "another keel process".to_owned(),
    }
}

/// One line of `keel sessions`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionInfo {
    pub id: String,
    pub started_at: u64,
    /// When its log was last written.
    pub modified: SystemTime,
    pub first_prompt: String,
    pub done: usize,
    pub total: usize,
    /// Another process has it open: its pid (0 when it did not say).
    pub held_by: Option<u32>,
}

/// Where the agent saves the conversation.
#[derive(Debug, Default)]
pub(crate) struct Journal {
    /// The open log, once it has something in it.
    log: Option<SessionLog>,
    /// Where a new log is created at the first record; `None`: the session is not saved.
    store: Option<SessionStore>,
    /// Set once saving failed, so the person is told once, not at every record.
    failed: bool,
    /// A failure to save found where it could not be returned, until it is told.
    untold: Option<SessionError>,
    /// The id and start time the log will have, once hooks have named the session by them.
    planned: Option<(String, u64)>,
    /// A child agent's conversation: its records go to the parent, which keeps them with the
    /// session.
    forward: Option<UnboundedSender<Record>>,
}

impl Journal {
    /// Saves from the first record on to a new log in `store`.
    pub(crate) fn new_in(store: SessionStore) -> Self {
        Self {
            log: None,
            store: Some(store),
            failed: false,
            untold: None,
            planned: None,
            forward: None,
        }
    }

    /// Goes on saving to a reopened log.
    pub(crate) fn resume(log: SessionLog, store: SessionStore) -> Self {
        Self {
            log: Some(log),
            store: Some(store),
            failed: false,
            untold: None,
            planned: None,
            forward: None,
        }
    }

    /// A child agent's journal: every record is handed to `parent`, which saves it with the
    /// session; a child takes no snapshots of its own (its parent's turn does).
    pub(crate) fn forwarding(parent: UnboundedSender<Record>) -> Self {
        Self { forward: Some(parent), ..Self::default() }
    }

    /// The same policy for a new conversation: saved, to a new log, if this one was.
    pub(crate) fn restart(&self) -> Self {
        match &self.store {
            Some(store) => Self::new_in(store.clone()),
            None => Self::default(),
        }
    }

    /// Appends a record. Returns the error the first time saving fails; later records are
    /// dropped quietly (the person has been told).
    pub(crate) fn record(&mut self, record: &Record) -> Result<(), SessionError> {
        if let Some(parent) = &self.forward {
            // A parent gone is a child being dropped: nothing of it is kept any more.
            let _ = parent.send(record.clone());
            return Ok(());
        }
        if self.failed {
            return Ok(());
        }
        let result = match self.open_log() {
            Ok(Some(log)) => log.append(record),
            Ok(None) => return Ok(()),
            Err(err) => Err(err),
        };
        if result.is_err() {
            self.failed = true;
        }
        result
    }

    /// The shadow repository this session snapshots the workspace into, its log created if it
    /// was not yet (its id names the snapshot index). `None` when the session is not saved.
    pub(crate) fn shadow_for_snapshot(&mut self) -> Option<Shadow> {
        if self.failed {
            return None;
        }
        match self.open_log() {
            Ok(log) => {
                let id = log?.id().to_owned();
                self.store.as_ref().map(|store| store.shadow(&id))
            }
            Err(err) => {
                self.failed = true;
                self.untold = Some(err);
                None
            }
        }
    }

    /// A failure to save that has not been told yet (found while opening the log for a
    /// snapshot).
    pub(crate) fn take_untold(&mut self) -> Option<SessionError> {
        self.untold.take()
    }

    /// Where this conversation's sessions are saved; `None` when nothing is saved.
    pub(crate) fn store(&self) -> Option<&SessionStore> {
        self.store.as_ref()
    }

    /// The id of the log open now (none before the first record).
    pub(crate) fn id(&self) -> Option<&str> {
        self.log.as_ref().map(SessionLog::id)
    }

    /// The session's id as hooks are told it — the log's, or the one the log will have — and
    /// where its log is or will be (`None` when the session is not saved).
    pub(crate) fn for_hooks(&mut self) -> (String, Option<PathBuf>) {
        if let Some(log) = &self.log {
            return (log.id().to_owned(), Some(log.path().to_owned()));
        }
        let (id, _) = self.planned.get_or_insert_with(log::plan).clone();
        let path = self.store.as_ref().map(|store| store.log_path(&id));
        (id, path)
    }

    /// The shadow repository of the log already open, for undo.
    pub(crate) fn shadow(&self) -> Option<Shadow> {
        Some(self.store.as_ref()?.shadow(self.log.as_ref()?.id()))
    }

    fn open_log(&mut self) -> Result<Option<&mut SessionLog>, SessionError> {
        if self.log.is_none() {
            let Some(store) = &self.store else { return Ok(None) };
            self.log = Some(store.create_planned(self.planned.clone())?);
        }
        Ok(self.log.as_mut())
    }
}

/// `keel undo`: puts back what the last prompt that changed files changed — in the session
/// written last, or the newest one before it that has something to undo — and saves that it
/// did, so the next undo steps further back.
pub fn undo_newest(
    store: &SessionStore,
    workspace: &Workspace,
) -> Result<UndoReport, SessionError> {
    let mut warnings = Vec::new();
    for id in store.newest_first()? {
        let (mut log, mut restored) = store.open(&id)?;
        warnings.append(&mut restored.warnings);
        let shadow = store.shadow(&id);
        if restored.undo.awaits_end() {
            // Cut off by a crash: its end is what the workspace holds now.
            if let Ok(after) = shadow.snapshot() {
                log.append(&Record::TurnEnd { snapshot: after.as_str().to_owned() })?;
                restored.undo.end_turn(after);
            }
        }
        if restored.undo.is_empty() {
            continue;
        }
        let mut report = restored.undo.undo(UndoContext { workspace, shadow: Some(&shadow) });
        if report.undid {
            log.append(&Record::Undo)?;
        }
        // The model hears of it with its next request, when the session is continued.
        if let Some(text) = crate::agent::undo_note::note(&report) {
            log.append(&Record::ModelNote { text })?;
        }
        warnings.append(&mut report.notes);
        report.notes = warnings;
        return Ok(report);
    }
    Ok(UndoReport { notes: warnings, ..UndoReport::default() })
}
