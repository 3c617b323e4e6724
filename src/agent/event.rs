//! Discrete things that happened, for front ends that print rather than draw (`keel -p`).
//!
//! Serialised one per line by `--output-format json`; the README documents the schema, so the
//! field names here are a public contract.

use crate::board::BoardItem;
use crate::llm::StopReason;
use serde::Serialize;

/// Something the agent did or saw.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AgentEvent {
    /// The board changed (a valid `todo` update or the person's edit), or a plan-mode turn
    /// ended with this plan.
    Todo {
        items: Vec<BoardItem>,
        done: usize,
        total: usize,
        /// Rounds since the item in progress last changed (0 with none in progress).
        rounds_in_progress: u32,
    },
    /// A tool call is about to run.
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
        /// What the model was given (already capped).
        output: String,
    },
    /// keel added the reminder to the next request.
    Reminder {
        text: String,
        rounds_since_todo: u32,
        /// The threshold it was due at (with `--nag-threshold auto`, the one the rhythm gave).
        threshold: u32,
    },
    /// A complete text answer from the model (one per model response that had text).
    AssistantText { text: String },
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
        trigger: String,
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
