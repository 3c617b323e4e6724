//! Child agents (`task`): a step of the work handed to a second conversation that starts with a
//! clean context — keel's child system prompt, the person's request, the board with the child's
//! item named, and the parent's prompt — and answers with its final report alone, so the
//! parent's context grows by that report and nothing of the child's tool output.
//!
//! A child is a [`Conversation`](super::conversation::Conversation) of its own (its own `State`
//! and `Link`) run by the same turn code over the same `Services`: its calls take the same road,
//! with the same approvals, sandbox and hooks. It is never wider than its parent: no `task`
//! (depth 1) and no `todo` (the parent keeps the board); an explorer only reads; a child of a
//! parent in plan mode runs under read-only rules. Its budget stops it (`max_child_rounds`,
//! `max_child_tokens`).
//!
//! - `spawn`: a child's conversation and channels, made from the parent's;
//! - `brief`: what its first request holds besides the system prompt;
//! - `rules`: the read-only rules a child may run under, and why;
//! - `run`: the parent's run stage for `task` calls — the board item started, the children run
//!   (explorers of one response together, at most `max_parallel_agents` at once) while the
//!   parent relays the person's answers and interrupts, the item completed on success;
//! - `watch`: what the parent learns from a running child's events, snapshots and log records;
//! - `report`: the answer the parent's model reads;
//! - `view`: a child as front ends see it ([`ChildAgent`]).

mod brief;
mod report;
mod rules;
mod run;
mod spawn;
mod view;
mod watch;

pub use rules::refusal;
pub use view::{ChildAgent, ChildStatus};

/// Model responses a child may take before keel stops it.
pub const DEFAULT_MAX_CHILD_ROUNDS: u32 = 30;
/// Input tokens a child's requests may take in all before keel stops it.
pub const DEFAULT_MAX_CHILD_TOKENS: u64 = 400_000;
/// Explorers that run at the same time.
pub const DEFAULT_MAX_PARALLEL_AGENTS: usize = 3;

/// How a conversation's children run.
#[derive(Debug, Clone, PartialEq)]
pub struct ChildSettings {
    /// keel's child system prompt, with the project's instructions.
    pub system_prompt: String,
    /// Each child's budget.
    pub budget: Budget,
    /// Explorers of one response that run at the same time (at least 1).
    pub max_parallel: usize,
}

impl Default for ChildSettings {
    fn default() -> Self {
        Self {
            system_prompt: crate::prompt::child_system_prompt(),
            budget: Budget::default(),
            max_parallel: DEFAULT_MAX_PARALLEL_AGENTS,
        }
    }
}

/// What a child may spend before keel stops it, whichever runs out first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// Model responses.
    pub rounds: u32,
    /// Input tokens, over all its requests.
    pub input_tokens: u64,
}

impl Default for Budget {
    fn default() -> Self {
        Self { rounds: DEFAULT_MAX_CHILD_ROUNDS, input_tokens: DEFAULT_MAX_CHILD_TOKENS }
    }
}
