//! What a resumed session shows besides its conversation: the tool pane rebuilt from the
//! history's calls and results (each marked as it ended: done, failed, declined, refused,
//! interrupted or cut off, and so are their lines in the conversation; a search with what it found,
//! read back from its answer's last line), and one line saying it was resumed (the token counts
//! and cost come back from the log's `usage` records; a log too old to have them says that they
//! count from the resume). Lines kept beside the history — an answer cut off, a
//! turn interrupted or failed — come back from the log's notes in their places.
//!
//! The log keeps what the model read of each result, not the longer output the person saw, so a
//! resumed tool pane shows that; a call's exit code and time were not kept and are not shown.
//! A round a crash cut off is told (`cut_off_notice`) and its writes' leftovers cleared.

use super::State;
use crate::agent::approval::{self, DECLINED};
use crate::agent::event::{AgentEvent, INTERRUPTED};
use crate::agent::journal::{CUT_OFF, NoteKind, Record};
use crate::agent::plan_mode;
use crate::agent::snapshot::{Entry, Refusal, ToolRun, ToolStatus};
use crate::message::{ContentBlock, Message, Role};
use crate::runtime::{Workspace, atomic};
use crate::tools::{Effect, ToolCall};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

impl State {
    /// Rebuilds the tool pane from the history and says the session was resumed;
    /// `usage_recorded`: the log had the tokens its answers used.
    pub(super) fn show_resumed(&mut self, usage_recorded: bool) {
        if self.view.history.is_empty() {
            return;
        }
        let history = self.view.history.clone();
        let mut results: HashMap<&str, (&str, bool)> = HashMap::new();
        for block in history.iter().flat_map(|message| &message.content) {
            if let ContentBlock::ToolResult { tool_use_id, content, is_error } = block {
                results.insert(tool_use_id, (content, *is_error));
            }
        }
        let now = Instant::now();
        let mut calls = 0;
        for block in history.iter().flat_map(|message| &message.content) {
            let Some(call) = ToolCall::from_block(block) else { continue };
            let (output, is_error) = results.get(call.id.as_str()).copied().unwrap_or(("", true));
            let status = ended(output, is_error);
            self.mark_call(&call, status, output);
            if call.effect() == Some(Effect::Reads)
                && status == ToolStatus::Succeeded
                && let Some(tally) = crate::tools::search::tally_of(output)
            {
                self.note_tally(&call.id, &tally);
            }
            if !call.effect().is_none_or(Effect::shown_in_tool_pane) {
                continue;
            }
            calls += 1;
            self.view.tools.push_back(Arc::new(ToolRun {
                status,
                id: call.id.clone(),
                name: call.name.clone(),
                summary: call.summary(),
                exit_code: None,
                started: now,
                duration: None,
                output: output.into(),
            }));
        }
        let messages = history.len();
        let board = &self.view.board;
        let board = if board.is_empty() {
            String::new()
        } else {
            format!(", the board at {}/{}", board.done(), board.items().len())
        };
        // A log with no answer yet has no tokens to record.
        let answered = history.iter().any(|message| message.role == Role::Assistant);
        let usage = if usage_recorded || !answered {
            ""
        } else {
            " Tokens and cost count from here: this log did not record them."
        };
        self.emit(AgentEvent::Notice {
            text: format!("Resumed: {messages} messages and {calls} tool calls{board}.{usage}"),
        });
    }
}

/// How a call ended, from the result the model got.
fn ended(output: &str, is_error: bool) -> ToolStatus {
    if output == DECLINED {
        ToolStatus::Declined
    } else if is_error && output.starts_with(plan_mode::REFUSED) {
        ToolStatus::Refused(Refusal::PlanMode)
    } else if is_error && output.starts_with(approval::NO_SANDBOX) {
        ToolStatus::Refused(Refusal::NoSandbox)
    } else if is_error && output.starts_with(approval::READ_ONLY) {
        ToolStatus::Refused(Refusal::ReadOnly)
    } else if output.starts_with(INTERRUPTED) || output.starts_with(CUT_OFF) {
        ToolStatus::Interrupted
    } else if is_error {
        ToolStatus::Failed
    } else {
        ToolStatus::Succeeded
    }
}

/// The log's record of a line kept beside the history; `None` for entries the history holds.
pub(super) fn note_record(entry: &Entry) -> Option<Record> {
    let (kind, text) = match entry {
        Entry::Assistant { text } => (NoteKind::CutAnswer, text),
        Entry::Notice { text } => (NoteKind::Notice, text),
        Entry::Error { text } => (NoteKind::Error, text),
        _ => return None,
    };
    Some(Record::Note { kind, text: text.clone() })
}

/// The conversation line a note record stands for.
pub(super) fn note_entry(kind: NoteKind, text: String) -> Entry {
    match kind {
        NoteKind::CutAnswer => Entry::Assistant { text },
        NoteKind::Notice => Entry::Notice { text },
        NoteKind::Error => Entry::Error { text },
    }
}

/// The transcript lines one history message stands for.
pub(super) fn entries_of(message: &Message) -> Vec<Entry> {
    let mut entries = Vec::new();
    if message.role == Role::Assistant {
        // As the turn showed it: the model's reasoning (folded) before its answer.
        let (text, redacted) = message.thinking();
        if !text.is_empty() || redacted {
            entries.push(Entry::Thinking { text, redacted });
        }
    }
    let blocks = message.content.iter().filter_map(|block| match (message.role, block) {
        (Role::User, ContentBlock::Text { text }) => Some(Entry::User { text: text.clone() }),
        (Role::Assistant, ContentBlock::Text { text }) if !text.is_empty() => {
            Some(Entry::Assistant { text: text.clone() })
        }
        (_, ContentBlock::ToolUse { .. }) => ToolCall::from_block(block).map(|call| {
            Entry::ToolCall { summary: call.summary(), id: call.id, name: call.name.to_string() }
        }),
        (_, ContentBlock::Reminder { text }) => Some(Entry::Reminder { text: text.clone() }),
        _ => None,
    });
    entries.extend(blocks);
    entries
}

/// What the person is told about a round a crash cut off.
pub(super) fn cut_off_notice(kept: usize, cut_off: &[ToolCall]) -> String {
    let finished = match kept {
        0 => "No call of it had finished".to_owned(),
        1 => "1 call had finished and keeps its result".to_owned(),
        n => format!("{n} calls had finished and keep their results"),
    };
    if cut_off.is_empty() {
        return format!("keel stopped at the end of a round of tool calls. {finished}.");
    }
    let names: Vec<String> = cut_off.iter().map(ToolCall::summary).collect();
    format!(
        "keel stopped in the middle of a round of tool calls. {finished}; the model is told the \
         rest may be partly done, to check before repeating: {}",
        names.join(", ")
    )
}

/// Removes the temporary file a write cut off by a crash may have left beside its target.
pub(super) fn clear_leftovers(workspace: &Workspace, call: &ToolCall) {
    if call.effect() == Some(Effect::WritesFiles)
        && let Some(path) = call.input.get("path").and_then(serde_json::Value::as_str)
    {
        atomic::remove_leftover_temps(workspace, path);
    }
}
