//! Child agents (`task`): a step of the work handed to a second conversation that starts with a
//! clean context — keel's child system prompt, the person's request, the board with the child's
//! item named, and the parent's prompt — and answers with its final report alone, so the
//! parent's context grows by that report and nothing of the child's tool output.
//!
//! A child is a [`Conversation`](super::conversation::Conversation) of its own (its own `State`
//! and `Link`) run by the same turn code over the same `Services`: its calls take the same road,
//! with the same approvals, sandbox and hooks. It is never wider than its parent: no `task`
//! (depth 1) and no `todo` (the parent keeps the board); an explorer only reads; a child of a
//! parent in plan mode runs under read-only rules — and one whose parent turns plan mode on while
//! it runs, from its next call (`turn::bounds`). Its budget stops it (`max_child_rounds`,
//! `max_child_tokens`), and so does its parent's: its responses count against the prompt's
//! `--max-rounds`. One response starts at most `max_children_per_response` children.
//!
//! - `spawn`: a child's conversation and channels, made from the parent's;
//! - `brief`: what its first request holds besides the system prompt;
//! - `rules`: the read-only rules a child may run under, and why;
//! - `per_response`: the children one response may start (`max_children_per_response`);
//! - `run`: the parent's run stage for `task` calls — the board item started, the children run
//!   (explorers of one response together, at most `max_parallel_agents` at once) while the
//!   parent relays the person's answers and interrupts, the item completed on success;
//! - `watch`: what the parent learns from a running child's events, snapshots and log records;
//! - `report`: the answer the parent's model reads;
//! - `settings`: how a conversation's children run, and their budget.

mod brief;
mod per_response;
mod report;
mod rules;
mod run;
pub(super) mod settings;
mod spawn;
mod watch;

pub use rules::{UNDER_PLAN_MODE, refusal};
pub use settings::{
    Budget, ChildSettings, DEFAULT_MAX_CHILD_ROUNDS, DEFAULT_MAX_CHILD_TOKENS,
    DEFAULT_MAX_CHILDREN_PER_RESPONSE, DEFAULT_MAX_PARALLEL_AGENTS,
};
