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
//! The `task` tool's run hands its decoded call to [`Children::run`] through the conversation's
//! handle (`turn::road::seat`); the parent's run stage owns the parent's state, and takes in
//! what the children tell it ([`news`]).
//!
//! - `spawn`: a child's conversation and channels, made from the parent's;
//! - `brief`: what its first request holds besides the system prompt;
//! - `rules`: the read-only rules a child may run under, and why;
//! - `per_response`: the children one response may start (`max_children_per_response`);
//! - `places`: how many run at once (`max_parallel_agents`), in the order they asked;
//! - `item`: the board item a child does, started and completed;
//! - `run`: one child run to its end — its place, its item started, the person's interrupt
//!   passed on, its item completed on success;
//! - `watch`: what a child's run hears from it, and learns;
//! - `news`: what the parent's run stage learns from its children, approvals included;
//! - `report`: the answer the parent's model reads;
//! - `settings`: how a conversation's children run, and their budget.

mod brief;
pub(super) mod item;
pub(super) mod news;
pub(super) mod per_response;
mod places;
mod report;
mod rules;
mod run;
pub(super) mod settings;
mod spawn;
mod watch;

use crate::agent::config::AgentConfig;
use crate::agent::services::Services;
use crate::agent::turn::Stop;
use crate::agent::turn::bounds::Bounds;
use crate::agent::turn::road::seat::Told;
use crate::llm::Provider;
use crate::tools::ToolSet;
pub use rules::{UNDER_PLAN_MODE, refusal};
pub use settings::{
    Budget, ChildSettings, DEFAULT_MAX_CHILD_ROUNDS, DEFAULT_MAX_CHILD_TOKENS,
    DEFAULT_MAX_CHILDREN_PER_RESPONSE, DEFAULT_MAX_PARALLEL_AGENTS,
};
use std::sync::{Arc, OnceLock};
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

/// The children of one run stage of a conversation (one `task` call, or the explorers of one
/// response together): what they are made from, the places they run in, where they tell the
/// parent what happens, and the person's interrupt.
pub(in crate::agent) struct Children<'a> {
    /// The parent's settings: its children's (`ChildSettings`, their budget) among them.
    config: &'a AgentConfig,
    provider: Option<&'a Arc<Provider>>,
    /// The parent's tools, of which a child gets its share.
    toolset: &'a ToolSet,
    /// The parent's turn's bounds, shared with the children.
    bounds: &'a Arc<Bounds>,
    services: &'a Services,
    places: places::Places,
    /// The parent's run stage.
    told: UnboundedSender<Told>,
    /// Fires when the person interrupts the parent's turn, or keel quits ([`Children::cut`]).
    cancel: CancellationToken,
    cut: OnceLock<Stop>,
}

impl<'a> Children<'a> {
    /// The children of a conversation with `config`, its model, tools and turn's bounds, over
    /// `services`; they tell the parent's run stage on `told`, and stop when `cancel` fires.
    pub fn new(
        (config, provider, toolset): (&'a AgentConfig, Option<&'a Arc<Provider>>, &'a ToolSet),
        bounds: &'a Arc<Bounds>,
        services: &'a Services,
        told: UnboundedSender<Told>,
        cancel: CancellationToken,
    ) -> Self {
        let places = places::Places::new(config.children.max_parallel);
        Self {
            config,
            provider,
            toolset,
            bounds,
            services,
            places,
            told,
            cancel,
            cut: OnceLock::new(),
        }
    }

    /// The parent's turn stops (`why`): the children running are told, the ones waiting never
    /// start.
    pub fn cut(&self, why: Stop) {
        let _ = self.cut.set(why);
        self.cancel.cancel();
    }
}
