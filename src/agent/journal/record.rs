//! One line of a session log: what was recorded, as JSON.
//!
//! Records are only ever appended. A resumed session replays them in order (`replay`), so each
//! one says what changed, never how to undo it: a message appended, the board replaced, a turn
//! begun, the workspace snapshot taken before its first command, a tool call answered, a file
//! changed, the history compacted, the tokens an answer used, a line shown beside the history.
//!
//! A record of a kind this keel does not know (a newer keel wrote it) is read as
//! [`Record::Unknown`] and skipped, with a note to the person: every record this keel does know
//! is still checked as it is applied, so skipping one can never leave a history a model would
//! refuse. A record of a known kind that does not parse is damage (see `replay`).

use super::compaction::Compaction;
use crate::agent::reminder::ReminderCounts;
use crate::agent::steps_done::Step;
use crate::board::BoardItem;
use crate::message::{Message, Usage};
use crate::runtime::change::FileChange;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// One line of a session log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Record {
    /// The first line: when the session began.
    Start { id: String, started_at: u64 },
    /// A message appended to the history.
    Message { message: Message },
    /// The board after a valid update.
    Board { items: Vec<BoardItem> },
    /// The reminder's counts after they changed: the rounds since the last `todo` call and the
    /// model's rhythm, together.
    Reminder { counts: ReminderCounts },
    /// A prompt's turn began to change the workspace (undo groups changes by prompt). Logs
    /// written before snapshots waited for a command carry the snapshot taken before the prompt.
    Turn {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        snapshot: Option<String>,
    },
    /// The turn's first command is about to run: the workspace snapshot taken just before it
    /// (absent: none could be taken, so what the command changes is beyond undo).
    BeforeCommands {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        snapshot: Option<String>,
    },
    /// A turn that ran a command ended (or was cut off and picked up again); the workspace
    /// snapshot after it.
    TurnEnd { snapshot: String },
    /// One tool call of the running round was answered. The round's results go into the history
    /// together once the round is over; until then these keep each finished call's answer, so a
    /// crash mid-round loses none.
    ToolResult { tool_use_id: String, content: String, is_error: bool },
    /// A file a tool changed, with its contents before (absent: it did not exist) and after.
    Change {
        path: PathBuf,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        before: Option<String>,
        after: String,
        /// How many folders above the file the change created.
        #[serde(default, skip_serializing_if = "is_zero")]
        folders: usize,
    },
    /// The newest turn that changed files was undone.
    Undo,
    /// The history was compacted to fit the model's context window.
    Compaction(Compaction),
    // The board's own bookkeeping (see `agent::steps_done`, `board::edit`).
    /// The person changed the board (the `Board` record holds the result); the model is told
    /// in its next request.
    BoardEdit { change: String },
    /// The person's changes so far were told to the model.
    BoardEditsTold,
    /// A note keel owes the model, sent with its next request: what an undo put back, the
    /// output of a command the person ran (`!`).
    ModelNote { text: String },
    /// The notes owed so far were sent.
    ModelNotesTold,
    /// A write or an edit the model made, for the repeated-step answer.
    Step { step: Step },
    /// Board item `item`'s check ended as `record` says (docs/board.md, "Checks").
    Check { item: String, record: crate::agent::check_record::CheckRecord },
    /// The tokens one answer of the model used (a summary request's too): what the status
    /// line's counts and cost add up, so a resumed session shows what it has cost so far.
    /// `{"type":"usage","input_tokens":…,"output_tokens":…,"cache_read_tokens":…,
    /// "cache_write_tokens":…}`; logs written before it have none.
    Usage(Usage),
    /// A line the conversation showed that is not in the history, kept so that a resumed
    /// session shows it too: the part of an answer an interrupt cut off, the note that a turn
    /// was interrupted, the error that ended one. The model never sees it.
    /// `{"type":"note","kind":"cut_answer"|"notice"|"error","text":…}`.
    Note { kind: NoteKind, text: String },
    // Read from logs an older keel wrote, never written: it kept the reminder's counts in two
    // records. Replaying them gives the counts one `Reminder` record would.
    /// The rounds since the last `todo` call alone.
    Rounds { rounds_since_todo: u32 },
    /// The rest of the counts (`since_todo` absent, so left as the last `Rounds` set it).
    Pace { pace: ReminderCounts },
    /// A record of child agent `agent`'s conversation (`task`), kept with the session. Replay
    /// counts a child's usage into the session's and leaves the rest to it: the parent's own
    /// records say what the child changed.
    Agent { agent: String, record: Box<Record> },
    /// A record of a kind this keel does not know; never written.
    #[serde(other, skip_serializing)]
    Unknown,
}

/// How a child agent's id begins: `a1`, `a2`, … in the order the session's children started.
pub const CHILD_ID_PREFIX: &str = "a";

/// What a [`Record::Note`] showed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NoteKind {
    /// The part of the model's answer on screen when the person interrupted it.
    CutAnswer,
    Notice,
    Error,
}

impl Record {
    /// The record of a file change, contents in base64 (files need not be text).
    pub fn change(change: &FileChange) -> Self {
        Self::Change {
            path: change.path.clone(),
            before: change.before.as_ref().map(|bytes| BASE64.encode(bytes)),
            after: BASE64.encode(&change.after),
            folders: change.created_folders,
        }
    }
}

impl Record {
    /// The file change a `Change` record holds; `None` for any other record, or contents that
    /// are not base64.
    pub fn file_change(&self) -> Option<FileChange> {
        match self {
            Self::Change { path, before, after, folders } => {
                decode_change(path.clone(), before.as_deref(), after, *folders)
            }
            _ => None,
        }
    }
}

fn is_zero(count: &usize) -> bool {
    *count == 0
}

/// Decodes a `Change` record's contents; `None` when either is not base64.
pub(super) fn decode_change(
    path: PathBuf,
    before: Option<&str>,
    after: &str,
    created_folders: usize,
) -> Option<FileChange> {
    let after = BASE64.decode(after).ok()?;
    let before = match before {
        Some(text) => Some(BASE64.decode(text).ok()?),
        None => None,
    };
    Some(FileChange { path, before, after, created_folders })
}
