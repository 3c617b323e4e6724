//! Replaying a session log into the state it records, and finding where it stops being valid.
//!
//! Records are applied in order while each one keeps the history one a model will accept: every
//! tool call answered by exactly one result in the message after it, no result without its call,
//! no answer from the model while results are owed. The first record that does not parse, or
//! that would break that, ends the valid prefix: what came before is loaded, and what follows is
//! reported (and set aside by the log, see `log`) rather than skipped over — skipping a record
//! in the middle is how a history ends up with calls that have no result, which an API refuses
//! for good. A last line cut off mid-write (the process was killed) just ends the log.

use super::compaction::{Compaction, apply_masks};
use super::record::{CHILD_ID_PREFIX, NoteKind, Record, decode_change};
use super::valid_history::check_message;
use crate::agent::reminder::ReminderCounts;
use crate::agent::steps_done::Step;
use crate::board::Board;
use crate::message::{ContentBlock, Message, Usage};
use crate::runtime::undo::{ObjectId, UndoStack};
use std::io::BufRead;

/// One thing the conversation showed, in order: a message, the line where the model's view was
/// compacted, or a line kept beside the history (an answer cut off, a turn interrupted). The
/// history a compaction shortened is still shown whole.
#[derive(Debug, Clone, PartialEq)]
pub enum Shown {
    Message(Message),
    Compacted(String),
    Note(NoteKind, String),
}

/// What a session log held.
#[derive(Debug, Clone, Default)]
pub struct Restored {
    /// The history as the model gets it (compacted, if it was).
    pub history: Vec<Message>,
    /// Everything the conversation showed, compactions notwithstanding.
    pub transcript: Vec<Shown>,
    /// The context window a server stated in the newest compaction it caused.
    pub learned_window: Option<u64>,
    pub board: Board,
    pub reminder: ReminderCounts,
    /// The person's board changes not yet told to the model.
    pub board_edits: Vec<String>,
    /// keel's notes not yet sent to the model (an undo, a command the person ran).
    pub model_notes: Vec<String>,
    pub steps: Vec<Step>,
    /// Each board item's last check, by item id.
    pub checks: std::collections::BTreeMap<String, crate::agent::check_record::CheckRecord>,
    pub undo: UndoStack,
    /// Results already logged for the calls of the last round, when that round was cut off
    /// before its results went into the history.
    pub answered: Vec<ContentBlock>,
    /// The tokens the session's answers used, as its `usage` records add up.
    pub usage: Usage,
    /// Whether the log recorded usage at all (logs written before it did not).
    pub usage_recorded: bool,
    /// Things the person should know (a cut-off or repaired log, records skipped).
    pub warnings: Vec<String>,
    /// The highest number of the child agents the log holds (`a3`: 3), so that a child started
    /// after the resume takes an id of its own.
    pub children_started: u32,
}

/// Where a log stops being valid, and what lies beyond.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Damage {
    /// The first line not loaded, from 1.
    pub line: usize,
    pub reason: String,
    /// Whole lines from there on.
    pub lines: usize,
    /// Of those, how many were messages.
    pub messages: usize,
}

/// The outcome of a replay.
#[derive(Debug, Default)]
pub(super) struct Replayed {
    pub restored: Restored,
    /// The start time the first record gives (0 if none).
    pub started_at: u64,
    /// Bytes of the valid prefix.
    pub valid_len: usize,
    /// The valid prefix's last record had its newline cut off.
    pub missing_newline: bool,
    /// The log ended mid-record.
    pub cut_off: bool,
    pub damage: Option<Damage>,
}

/// Replays a log's bytes, up to the end of its longest valid prefix.
#[cfg(test)]
pub(super) fn replay(bytes: &[u8]) -> Replayed {
    // Reading from memory cannot fail.
    replay_from(bytes).unwrap_or_default()
}

/// Replays a log read line by line from `reader`, up to the end of its longest valid prefix:
/// only the record being applied is held, never the whole log.
pub(super) fn replay_from(mut reader: impl BufRead) -> std::io::Result<Replayed> {
    let mut state = Replay::default();
    let mut replayed = Replayed::default();
    let mut offset = 0;
    let mut line_number = 0;
    let mut buffer = Vec::new();
    loop {
        buffer.clear();
        let read = reader.read_until(b'\n', &mut buffer)?;
        if read == 0 {
            break;
        }
        line_number += 1;
        let whole = buffer.last() == Some(&b'\n');
        let line = if whole { &buffer[..buffer.len() - 1] } else { &buffer[..] };
        let next = offset + read;
        if line.iter().all(u8::is_ascii_whitespace) {
            offset = next;
            replayed.valid_len = offset;
            continue;
        }
        let applied = serde_json::from_slice::<Record>(line)
            .map_err(|err| format!("not a record: {err}"))
            .and_then(|record| match record {
                Record::Start { started_at, .. } => {
                    replayed.started_at = started_at;
                    Ok(())
                }
                Record::Unknown => {
                    state.unknown.skip(line, line_number);
                    Ok(())
                }
                record => state.apply(record),
            });
        match (applied, whole) {
            (Ok(()), _) => {
                offset = next;
                replayed.valid_len = offset;
                replayed.missing_newline = !whole;
            }
            (Err(_), false) => {
                replayed.cut_off = true;
                break;
            }
            (Err(reason), true) => {
                replayed.damage = Some(describe_rest(line, reader, line_number, reason)?);
                break;
            }
        }
    }
    if let Some(note) = state.unknown.note() {
        state.restored.warnings.push(note);
    }
    replayed.restored = state.restored;
    Ok(replayed)
}

/// Counts what the lines from the damaged one (`first`) on hold, reading the rest line by line.
fn describe_rest(
    first: &[u8],
    mut rest: impl BufRead,
    line: usize,
    reason: String,
) -> std::io::Result<Damage> {
    let is_message = |line: &[u8]| {
        serde_json::from_slice::<Record>(line)
            .is_ok_and(|record| matches!(record, Record::Message { .. }))
    };
    let (mut lines, mut messages) = (1, usize::from(is_message(first)));
    let mut buffer = Vec::new();
    loop {
        buffer.clear();
        if rest.read_until(b'\n', &mut buffer)? == 0 {
            break;
        }
        let text = buffer.strip_suffix(b"\n").unwrap_or(&buffer);
        if !text.is_empty() {
            lines += 1;
            messages += usize::from(is_message(text));
        }
    }
    Ok(Damage { line, reason, lines, messages })
}

/// The state being rebuilt, and the calls that still owe a result.
#[derive(Default)]
struct Replay {
    restored: Restored,
    /// The ids of the newest answer's tool calls while their results are not in the history.
    open_calls: Vec<String>,
    unknown: Skipped,
}

/// Records of kinds this keel does not know, skipped: how many, the first line, their kinds.
#[derive(Default)]
struct Skipped {
    count: usize,
    first_line: usize,
    kinds: Vec<String>,
}

/// Kinds named in the note about skipped records, at most.
const KINDS_NAMED: usize = 3;
/// Characters of a kind's name shown in the note, at most.
const KIND_CHARS: usize = 40;

impl Skipped {
    fn skip(&mut self, line: &[u8], number: usize) {
        if self.count == 0 {
            self.first_line = number;
        }
        self.count += 1;
        let kind = serde_json::from_slice::<serde_json::Value>(line)
            .ok()
            .and_then(|value| Some(value.get("type")?.as_str()?.chars().take(KIND_CHARS).collect()))
            .unwrap_or_default();
        if self.kinds.len() < KINDS_NAMED && !self.kinds.contains(&kind) {
            self.kinds.push(kind);
        }
    }

    /// What the person is told, if anything was skipped.
    fn note(&self) -> Option<String> {
        let records = match self.count {
            0 => return None,
            1 => "1 record".to_owned(),
            n => format!("{n} records"),
        };
        let kinds: Vec<String> =
            self.kinds.iter().map(|kind| format!("`{}`", crate::visible::one_line(kind))).collect();
        Some(format!(
            "Skipped {records} of a kind this keel does not know ({}; the first on line {}): \
             a newer keel wrote them. Everything else in the log was loaded.",
            kinds.join(", "),
            self.first_line
        ))
    }
}

impl Replay {
    fn apply(&mut self, record: Record) -> Result<(), String> {
        let restored = &mut self.restored;
        match record {
            Record::Start { .. } | Record::Unknown => {}
            Record::Message { message } => {
                self.open_calls = check_message(&message, &self.open_calls)?;
                self.restored.answered.clear();
                self.restored.transcript.push(Shown::Message(message.clone()));
                self.restored.history.push(message);
            }
            Record::Compaction(compaction) => self.compact(compaction)?,
            Record::Board { items } => restored.board = Board::from_items(items),
            Record::Reminder { counts } => restored.reminder = counts,
            Record::Turn { snapshot } => {
                let before = snapshot.as_deref().map(object_id).transpose()?;
                restored.undo.begin_turn(before);
            }
            Record::BeforeCommands { snapshot } => {
                let before = snapshot.as_deref().map(object_id).transpose()?;
                restored.undo.before_commands(before);
            }
            Record::TurnEnd { snapshot } => restored.undo.end_turn(object_id(&snapshot)?),
            Record::ToolResult { tool_use_id, content, is_error } => {
                let owed = self.open_calls.contains(&tool_use_id);
                let again = restored.answered.iter().any(|block| {
                    matches!(block, ContentBlock::ToolResult { tool_use_id: id, .. } if *id == tool_use_id)
                });
                if !owed || again {
                    return Err(format!("a result for tool call {tool_use_id}, which owes none"));
                }
                restored.answered.push(ContentBlock::ToolResult { tool_use_id, content, is_error });
            }
            Record::Change { path, before, after, folders } => {
                let change = decode_change(path, before.as_deref(), &after, folders)
                    .ok_or_else(|| "a file change whose contents are not base64".to_owned())?;
                restored.undo.record([change]);
            }
            Record::Undo => {
                restored.undo.forget_last();
            }
            Record::Rounds { rounds_since_todo } => {
                restored.reminder.since_todo = rounds_since_todo
            }
            Record::Pace { pace } => {
                restored.reminder =
                    ReminderCounts { since_todo: restored.reminder.since_todo, ..pace };
            }
            Record::BoardEdit { change } => restored.board_edits.push(change),
            Record::BoardEditsTold => restored.board_edits.clear(),
            Record::ModelNote { text } => restored.model_notes.push(text),
            Record::ModelNotesTold => restored.model_notes.clear(),
            Record::Step { step } => restored.steps.push(step),
            Record::Check { item, record } => {
                restored.checks.insert(item, record);
            }
            Record::Note { kind, text } => restored.transcript.push(Shown::Note(kind, text)),
            Record::Usage(usage) => {
                restored.usage.add(usage);
                restored.usage_recorded = true;
            }
            // What a child spent is the session's; the rest of its log is its own.
            Record::Agent { agent, record } => {
                let number = agent.strip_prefix(CHILD_ID_PREFIX).and_then(|n| n.parse().ok());
                restored.children_started = restored.children_started.max(number.unwrap_or(0));
                if let Record::Usage(usage) = *record {
                    restored.usage.add(usage);
                }
            }
        }
        Ok(())
    }
}

impl Replay {
    /// Applies a compaction, checking that the history it leaves is one a model accepts. Nothing
    /// changes when it would not.
    fn compact(&mut self, compaction: Compaction) -> Result<(), String> {
        if !self.open_calls.is_empty() {
            return Err("a compaction while tool results were owed".to_owned());
        }
        let mut history = match &compaction.history {
            Some(history) => {
                let mut open = Vec::new();
                for message in history {
                    open = check_message(message, &open)
                        .map_err(|why| format!("a compacted history with {why}"))?;
                }
                if !open.is_empty() {
                    return Err("a compacted history whose last tool calls are unanswered".into());
                }
                history.clone()
            }
            None => self.restored.history.clone(),
        };
        apply_masks(&mut history, &compaction.masks)?;
        self.restored.history = history;
        self.restored.answered.clear();
        if compaction.learned_window.is_some() {
            self.restored.learned_window = compaction.learned_window;
        }
        self.restored.transcript.push(Shown::Compacted(compaction.note()));
        Ok(())
    }
}

fn object_id(text: &str) -> Result<ObjectId, String> {
    ObjectId::parse(text).ok_or_else(|| format!("a snapshot id that is not one: {text:?}"))
}

#[cfg(test)]
mod tests;
