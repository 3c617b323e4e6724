//! Sessions that survive restarts: the agent saves every change that matters on resume as it
//! happens, and a front end reopens a saved session to carry on.
//!
//! [`log`] is the file format (one JSON record per line, replayed on open). [`Journal`] is the
//! agent's side: whether the conversation is saved at all, the log created lazily at the first
//! record (so opening and quitting keel leaves no empty session behind), and a failure to save
//! reported once rather than at every record. Only `State` writes to it, so a change cannot reach
//! the history, the board or the reminder counter without reaching the log too.

pub mod log;

pub use log::{Record, Restored, SessionError, SessionInfo, SessionLog, list};

use crate::tools::undo::UndoReport;
use std::path::{Path, PathBuf};

/// Where the agent saves the conversation.
#[derive(Debug, Default)]
pub(crate) struct Journal {
    /// The open log, once it has something in it.
    log: Option<SessionLog>,
    /// The workspace whose sessions folder gets a new log at the first record; `None`: the
    /// session is not saved.
    root: Option<PathBuf>,
    /// Set once saving failed, so the person is told once, not at every record.
    failed: bool,
}

impl Journal {
    /// Saves from the first record on to a new log in `workspace`.
    pub(crate) fn new_in(workspace: &Path) -> Self {
        Self { log: None, root: Some(workspace.to_owned()), failed: false }
    }

    /// Goes on saving to a reopened log.
    pub(crate) fn resume(log: SessionLog, workspace: &Path) -> Self {
        Self { log: Some(log), root: Some(workspace.to_owned()), failed: false }
    }

    /// The same policy for a new conversation in `workspace`: saved if this one was.
    pub(crate) fn restart_in(&self, workspace: &Path) -> Self {
        if self.root.is_some() { Self::new_in(workspace) } else { Self::default() }
    }

    /// Appends a record. Returns the error the first time saving fails; later records are
    /// dropped quietly (the person has been told).
    pub(crate) fn record(&mut self, record: &Record) -> Result<(), SessionError> {
        if self.failed {
            return Ok(());
        }
        let result = match (&mut self.log, &self.root) {
            (Some(log), _) => log.append(record),
            (None, Some(root)) => SessionLog::create(root).and_then(|mut log| {
                let appended = log.append(record);
                self.log = Some(log);
                appended
            }),
            (None, None) => return Ok(()),
        };
        if result.is_err() {
            self.failed = true;
        }
        result
    }
}

/// `keel undo`: restores the files of the newest session's last turn that changed any, and saves
/// that it did so the next undo steps further back.
pub fn undo_newest(workspace: &Path) -> Result<UndoReport, SessionError> {
    let (mut log, mut restored) = SessionLog::open_newest(workspace)?;
    let report = restored.undo.undo();
    if !report.restored.is_empty() || !report.skipped.is_empty() {
        log.append(&Record::Undo)?;
    }
    Ok(report)
}
