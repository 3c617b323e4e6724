//! A child's conversation, made from its parent's: the same model, approval mode and sandbox;
//! keel's child system prompt; its budget, and the parent's turn's bounds (`turn::bounds`: the
//! responses left to the prompt, the parent's plan mode now); no board of its own; the
//! parent's tools less `task` and `todo` (an explorer's, less everything that does not read);
//! a journal that hands every record to the parent; and the channels the parent holds the other
//! ends of, the approvals it asks for among them.

use super::Children;
use super::news::Start;
use super::rules::{EXPLORER, UNDER_PLAN_MODE};
use crate::agent::command::Command;
use crate::agent::config::AgentConfig;
use crate::agent::conversation::{Conversation, Link};
use crate::agent::event::AgentEvent;
use crate::agent::journal::{Journal, Record};
use crate::agent::reminder::NagThreshold;
use crate::agent::snapshot::{ApprovalRequest, Snapshot};
use crate::agent::state::{ModelLabel, Outbox, State};
use crate::tools::task::{Delegation, Kind};
use std::sync::Arc;
use tokio::sync::mpsc::{self, UnboundedReceiver, UnboundedSender};

/// The parent's ends of a child's channels.
#[derive(Debug)]
pub(super) struct Ends {
    /// The child's inbox: the person's answers and interrupts, relayed.
    pub commands: UnboundedSender<Command>,
    pub events: UnboundedReceiver<AgentEvent>,
    /// `None` where no front end draws: the child builds no snapshots then.
    pub snapshots: Option<UnboundedReceiver<Snapshot>>,
    /// Its session log's records, to keep with the parent's.
    pub records: UnboundedReceiver<Record>,
    /// The approvals it asks for.
    pub asks: UnboundedReceiver<Arc<ApprovalRequest>>,
}

impl Children<'_> {
    /// A child conversation for `delegation`, made as the parent stood at its `start`, its link,
    /// and the parent's ends of its channels.
    pub(super) fn spawn(
        &self,
        delegation: &Delegation,
        start: &Start,
    ) -> (Conversation, Link, Ends) {
        let explore = delegation.kind() == Kind::Explore;
        let read_only =
            if explore { Some(EXPLORER) } else { start.plan_mode.then_some(UNDER_PLAN_MODE) };
        let toolset = self.toolset.for_child(explore, read_only.map(str::to_owned));
        let config = self.child_config();
        let label = ModelLabel {
            provider: &start.provider,
            model: &start.model,
            wire_format: start.wire_format,
        };
        let mut state = State::new(&config.system_prompt, NagThreshold::Fixed(0), false, label);
        let (records_tx, records) = mpsc::unbounded_channel();
        state.save_to(Journal::forwarding(records_tx));
        state.set_sandbox(start.sandbox.clone());
        let (commands, inbox) = mpsc::unbounded_channel();
        let (event_tx, events) = mpsc::unbounded_channel();
        let (snapshot_tx, snapshots) = mpsc::unbounded_channel();
        let (asks_tx, asks) = mpsc::unbounded_channel();
        // Nobody draws the parent: its children need not build what would be drawn.
        let snapshots = start.drawn.then_some(snapshots);
        let outbox = Outbox { snapshots: snapshot_tx, events: event_tx, asks: Some(asks_tx) };
        let mut conversation = Conversation::new(config, self.provider.cloned(), toolset, state);
        // Its parent's bounds: its responses count against the parent's turn, and the parent's
        // plan mode holds it at each call.
        conversation.bounds = Arc::clone(self.bounds);
        (conversation, Link { inbox, outbox }, Ends { commands, events, snapshots, records, asks })
    }

    /// A child's settings: the parent's model settings and approval mode, keel's child system
    /// prompt, no board and no reminder, and its budget in place of the round limit.
    pub(super) fn child_config(&self) -> AgentConfig {
        let parent = self.config;
        let budget = parent.children.budget;
        AgentConfig {
            system_prompt: parent.children.system_prompt.clone(),
            max_tokens: parent.max_tokens,
            thinking_budget: parent.thinking_budget,
            nag_threshold: NagThreshold::Fixed(0),
            nag_message: String::new(),
            max_rounds: budget.rounds,
            approval: parent.approval,
            context_window: parent.context_window,
            context_window_assumed: parent.context_window_assumed,
            compact_at: parent.compact_at,
            board: false,
            plan: false,
            children: parent.children.clone(),
            budget: Some(budget),
            routes: parent.routes.clone(),
            hooks: parent.hooks.clone(),
            check_timeout: parent.check_timeout,
        }
    }
}
