//! Everything that happens in a conversation, told once: the one vocabulary of the agent.
//!
//! The agent emits each happening as an [`AgentEvent`] (`State::emit`). The conversation the
//! screen shows is derived from them ([`AgentEvent::entry`]), and `keel -p` prints the same
//! events — as progress lines, or serialised one per line by `--output-format json`, whose schema
//! the README documents, so the field names here are a public contract.

use super::journal::compaction::{self, Trigger};
use super::snapshot::Entry;
use crate::board::BoardItem;
use crate::llm::StopReason;
use crate::message::Usage;
use serde::Serialize;

/// The line the conversation shows for an interrupted turn.
pub const INTERRUPTED_NOTE: &str = "Interrupted.";
/// The result the model gets for a tool call the person interrupted.
pub const INTERRUPTED: &str = "interrupted by user";

/// Something the agent did or saw.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AgentEvent {
    /// The person's prompt, as the turn takes it up.
    Prompt { text: String },
    /// The board changed (a valid `todo` update or the person's edit), or a plan-mode turn
    /// ended with this plan.
    Todo {
        items: Vec<BoardItem>,
        done: usize,
        total: usize,
        /// Rounds since the item in progress last changed (0 with none in progress).
        rounds_in_progress: u32,
    },
    /// keel takes up one of the model's tool calls: it runs next, or — the turn interrupted, or
    /// the call cut at the output limit — is answered at once without running. Its `ToolEnd`
    /// follows either way.
    ToolStart {
        id: String,
        name: String,
        input: serde_json::Value,
        /// The command or path on one line, every hidden character made visible
        /// (`crate::visible::one_line`), as the approval box would show it.
        summary: String,
    },
    /// A tool call ended.
    ToolEnd {
        id: String,
        name: String,
        is_error: bool,
        exit_code: Option<i32>,
        duration_ms: u64,
        /// The same, in microseconds.
        duration_us: u64,
        /// What the model was given (already capped).
        output: String,
        /// The change an applied `write_file` or `edit_file` made, as a unified diff with its
        /// counts; absent for other calls and for a write or an edit that changed nothing.
        #[serde(skip_serializing_if = "Option::is_none")]
        diff: Option<crate::runtime::change::FileDiff>,
        /// What a search (`grep`, `glob`) found, in a few words (`12 matches in 3 files`);
        /// `null` for other tools.
        tally: Option<String>,
    },
    /// keel runs an item's check before completing it (docs/board.md, "Checks").
    CheckStart { item: String, command: String },
    /// An item's check ended: `passed` on exit 0, when the item may be completed; `output` is
    /// the tail of what it printed.
    CheckEnd {
        item: String,
        command: String,
        passed: bool,
        exit_code: Option<i32>,
        /// How it ended in words: `exit 0`, `exit 1`, `timed out after 300 s`, ….
        exit: String,
        duration_ms: u64,
        output: String,
        /// Failed runs of this item's check in a row (0 once one passes).
        failures_in_row: u32,
    },
    /// keel added the reminder to the next request.
    Reminder {
        text: String,
        rounds_since_todo: u32,
        /// The threshold it was due at (with `--nag-threshold auto`, the one the rhythm gave).
        threshold: u32,
    },
    /// The model's reasoning before its answer (one per model response that had any);
    /// `redacted` when the provider encrypted some of it.
    Thinking { text: String, redacted: bool },
    /// A complete text answer from the model (one per model response that had text).
    AssistantText { text: String },
    /// The part of an answer shown before the person interrupted it. It never enters the
    /// history the model is sent.
    InterruptedText { text: String },
    /// A note from keel for the person: a conversation cleared, files restored, a session
    /// resumed, a command that must wait for the turn to end.
    Notice { text: String },
    /// Something went wrong that did not end the turn (a turn's own failure is its `result`'s
    /// `error`); the text says what to do.
    Error { text: String },
    /// Token counts of one model response, and the running totals.
    Usage {
        input_tokens: u64,
        output_tokens: u64,
        total_input_tokens: u64,
        total_output_tokens: u64,
        /// Of `input_tokens`, read from the provider's prompt cache.
        cache_read_tokens: u64,
        /// Of `input_tokens`, written to the provider's prompt cache.
        cache_write_tokens: u64,
        /// Why this response stopped (`max_tokens`: cut at the output limit).
        stop_reason: StopReason,
    },
    /// The session log could not be written: from here on nothing is saved, so undo and
    /// `--continue` will miss it. Sent once.
    NotSaved { reason: String },
    /// A request failed and will be tried again.
    Retry { attempt: u32, delay_ms: u64, reason: String },
    /// keel compacted the history to fit the model's context window.
    Compaction {
        /// `threshold` (the estimate passed `compact_at`), `refused` (the server said the
        /// prompt is too long) or `request` (`/compact`).
        trigger: Trigger,
        /// The estimate of the next request before and after, in tokens.
        tokens_before: u64,
        tokens_after: u64,
        /// Old tool results and inputs replaced by one-line stubs.
        masked: usize,
        /// Messages replaced by the summary (0: masking was enough).
        summarised: usize,
        /// Why the summary request failed, when keel listed what ran instead.
        #[serde(skip_serializing_if = "Option::is_none")]
        summary_error: Option<String>,
        /// The context window keel compacted for, in tokens.
        window: u64,
    },
    /// A hook ran (`crate::hooks`). One that blocked or failed shows a line.
    Hook {
        /// The event it ran at: `PreToolUse`, `Stop`, `TaskCompleted`, …
        event: crate::hooks::Event,
        /// Its command, on one line, every hidden character made visible.
        command: String,
        /// `ok`, `blocked` or `failed`.
        outcome: crate::hooks::Outcome,
        /// Why it blocked or how it failed; empty when it let things go on.
        #[serde(skip_serializing_if = "String::is_empty")]
        text: String,
        /// The tool call it ran for (PreToolUse, PostToolUse).
        #[serde(skip_serializing_if = "Option::is_none")]
        tool_use_id: Option<String>,
        duration_ms: u64,
    },
    /// A child agent (`task`) starts: its id, which every event of its own carries as `agent`.
    AgentStart {
        agent: String,
        /// The `task` call that started it.
        call_id: String,
        /// `general` or `explore`.
        kind: String,
        label: String,
        /// The board item it does, if any.
        item: Option<String>,
    },
    /// A child agent ended: `done`, `failed`, `stopped` (its budget ran out) or `interrupted`.
    AgentEnd {
        agent: String,
        status: super::snapshot::ChildStatus,
        /// Its model responses and the tokens they took.
        rounds: u32,
        input_tokens: u64,
        output_tokens: u64,
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
    /// Something that happened in child agent `agent`'s own conversation. `-p`'s JSON prints
    /// `event` with `"agent"` added, never this wrapper.
    Child { agent: String, event: Box<AgentEvent> },
    /// The turn ended.
    Result {
        /// `success`, `error`, `max_rounds`, `interrupted` or `max_tokens`.
        outcome: TurnOutcome,
        /// The model's last text answer.
        text: String,
        rounds: u32,
        done: usize,
        total: usize,
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<String>,
        /// Why the last response stopped; `null` when the turn made no request.
        stop_reason: Option<StopReason>,
    },
}

impl AgentEvent {
    /// The tokens of one model response, when this is its `Usage`.
    pub fn usage(&self) -> Option<Usage> {
        match *self {
            Self::Usage {
                input_tokens,
                output_tokens,
                cache_read_tokens,
                cache_write_tokens,
                ..
            } => Some(Usage { input_tokens, output_tokens, cache_read_tokens, cache_write_tokens }),
            _ => None,
        }
    }

    /// How `compaction` is told, on a window of `window` tokens.
    pub fn compaction(compaction: &compaction::Compaction, window: u64) -> Self {
        Self::Compaction {
            trigger: compaction.trigger,
            tokens_before: compaction.tokens_before,
            tokens_after: compaction.tokens_after,
            masked: compaction.masked(),
            summarised: compaction.summarised,
            summary_error: compaction.summary_error.clone(),
            window,
        }
    }

    /// The line the conversation shows for this happening, if it shows one. The screen's
    /// entries come from here alone, so the person and `keel -p` are told the same things.
    pub fn entry(&self) -> Option<Entry> {
        let text = |text: &String| text.clone();
        Some(match self {
            Self::Prompt { text: prompt } => Entry::User { text: text(prompt) },
            Self::Thinking { text: thinking, redacted } => {
                Entry::Thinking { text: text(thinking), redacted: *redacted }
            }
            Self::AssistantText { text: answer } | Self::InterruptedText { text: answer } => {
                Entry::Assistant { text: text(answer) }
            }
            Self::ToolStart { id, name, summary, .. } => {
                Entry::ToolCall { id: id.clone(), name: name.clone(), summary: summary.clone() }
            }
            Self::Reminder { text: reminder, .. } => Entry::Reminder { text: text(reminder) },
            Self::CheckEnd { item, command, passed, exit, duration_ms, .. } => {
                let took = check_time(*duration_ms);
                let command = crate::visible::one_line(command);
                Entry::Notice {
                    text: if *passed {
                        format!("✓ check #{item} {command} · {took}")
                    } else {
                        format!("✗ check #{item} {command} · {exit} · {took}")
                    },
                }
            }
            Self::Notice { text: note } => Entry::Notice { text: text(note) },
            Self::Error { text: error } | Self::NotSaved { reason: error } => {
                Entry::Error { text: text(error) }
            }
            Self::Compaction {
                trigger,
                tokens_before,
                tokens_after,
                masked,
                summarised,
                summary_error,
                ..
            } => {
                let summary = (*summarised > 0).then_some((*summarised, summary_error.is_some()));
                let tokens = (*tokens_before, *tokens_after);
                Entry::Notice { text: compaction::note(*trigger, tokens, *masked, summary) }
            }
            Self::Hook { event, command, outcome, text: said, .. } => {
                let line = |verb: &str| format!("{event} hook `{command}` {verb}: {said}");
                match outcome {
                    crate::hooks::Outcome::Blocked => Entry::Notice { text: line("blocked") },
                    crate::hooks::Outcome::Failed => Entry::Error { text: line("failed") },
                    crate::hooks::Outcome::Ok => return None,
                }
            }
            Self::Result { error: Some(error), .. } => Entry::Error { text: text(error) },
            Self::Result { outcome: TurnOutcome::Interrupted, .. } => {
                Entry::Notice { text: INTERRUPTED_NOTE.to_owned() }
            }
            // A child's lines are its own conversation's; its call's line is the parent's.
            Self::AgentStart { .. } | Self::AgentEnd { .. } | Self::Child { .. } => return None,
            Self::Todo { .. }
            | Self::CheckStart { .. }
            | Self::ToolEnd { .. }
            | Self::Usage { .. }
            | Self::Retry { .. }
            | Self::Result { .. } => return None,
        })
    }
}

/// A check's time as its lines say it: milliseconds below a second (`31ms`), tenths of a second
/// above (`2.1s`).
pub fn check_time(duration_ms: u64) -> String {
    const MS_PER_SECOND: u64 = 1_000;
    const MS_PER_TENTH: u64 = 100;
    const TENTHS_PER_SECOND: u64 = 10;
    if duration_ms < MS_PER_SECOND {
        return format!("{duration_ms}ms");
    }
    let tenths = duration_ms / MS_PER_TENTH;
    format!("{}.{}s", tenths / TENTHS_PER_SECOND, tenths % TENTHS_PER_SECOND)
}

/// How a turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TurnOutcome {
    Success,
    Error,
    MaxRounds,
    Interrupted,
    /// The answer was still cut off at the output limit after every continuation.
    MaxTokens,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::journal::compaction::{Compaction, Mask};

    fn compaction(history: bool, summary_error: Option<&str>) -> Compaction {
        let mask = Mask::Result { id: "t1".into(), content: "elided".into() };
        Compaction {
            trigger: Trigger::Refused,
            tokens_before: 35_300,
            tokens_after: 9_000,
            masks: vec![mask],
            history: history.then(Vec::new),
            summarised: if history { 12 } else { 0 },
            summary_error: summary_error.map(str::to_owned),
            learned_window: None,
        }
    }

    /// The event `compaction` is told as, and the line a replay shows for it: the same.
    #[test]
    fn a_compaction_reads_the_same_as_it_happens_and_when_replayed() {
        for compaction in
            [compaction(false, None), compaction(true, None), compaction(true, Some("x"))]
        {
            let event = AgentEvent::compaction(&compaction, 64_000);
            assert_eq!(event.entry(), Some(Entry::Notice { text: compaction.note() }));
        }
        assert!(compaction(true, Some("x")).note().contains("12 messages listed (no summary)"));
    }

    #[test]
    fn a_turns_end_shows_its_error_or_its_interruption_and_nothing_else() {
        let end = |outcome, error: Option<&str>| AgentEvent::Result {
            outcome,
            text: "last words".into(),
            rounds: 1,
            done: 0,
            total: 0,
            error: error.map(str::to_owned),
            stop_reason: None,
        };
        let error = Some(Entry::Error { text: "down".into() });
        assert_eq!(end(TurnOutcome::Error, Some("down")).entry(), error);
        let interrupted = Some(Entry::Notice { text: INTERRUPTED_NOTE.into() });
        assert_eq!(end(TurnOutcome::Interrupted, None).entry(), interrupted);
        assert_eq!(end(TurnOutcome::Success, None).entry(), None, "its text was shown already");
    }

    #[test]
    fn what_only_printing_front_ends_need_shows_no_line() {
        let usage = AgentEvent::Usage {
            input_tokens: 1,
            output_tokens: 1,
            total_input_tokens: 1,
            total_output_tokens: 1,
            cache_read_tokens: 0,
            cache_write_tokens: 0,
            stop_reason: StopReason::EndTurn,
        };
        assert_eq!([check_time(31), check_time(999), check_time(2_149)], ["31ms", "999ms", "2.1s"]);
        let retry = AgentEvent::Retry { attempt: 1, delay_ms: 10, reason: "429".into() };
        let todo = AgentEvent::Todo { items: Vec::new(), done: 0, total: 0, rounds_in_progress: 0 };
        for event in [usage, retry, todo] {
            assert_eq!(event.entry(), None, "{event:?}");
        }
        let saved = AgentEvent::NotSaved { reason: "disk full".into() };
        assert_eq!(saved.entry(), Some(Entry::Error { text: "disk full".into() }));
    }

    #[test]
    fn a_usage_event_gives_the_responses_tokens_and_no_other_does() {
        let usage = AgentEvent::Usage {
            input_tokens: 120,
            output_tokens: 7,
            total_input_tokens: 900,
            total_output_tokens: 40,
            cache_read_tokens: 100,
            cache_write_tokens: 20,
            stop_reason: StopReason::EndTurn,
        };
        let tokens = Usage {
            input_tokens: 120,
            output_tokens: 7,
            cache_read_tokens: 100,
            cache_write_tokens: 20,
        };
        assert_eq!(usage.usage(), Some(tokens));
        assert_eq!(AgentEvent::Notice { text: "x".into() }.usage(), None);
    }
}
