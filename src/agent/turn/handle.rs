//! What a call (and the services it asks for) touches of a turn: a [`Handle`] on its
//! conversation — the turn's borrowed parts a call may read or change: its settings, model and
//! tool set, the state (history, board), undo's group, the bounds, the inbox for the person's
//! interrupts, the outbox — and the workspace's services it may use ([`Shared`]). The road's
//! stages, undo's snapshots, the hooks' firing and the workspace's watches are functions of
//! these parts, not of the whole turn, so each says what it needs and can be run without a
//! model.

use crate::agent::children;
use crate::agent::command::Command;
use crate::agent::config::AgentConfig;
use crate::agent::event::AgentEvent;
use crate::agent::services::Services;
use crate::agent::snapshot::{ToolRun, ToolStatus};
use crate::agent::state::{Outbox, State};
use crate::agent::turn::Turn;
use crate::agent::turn::bounds::Bounds;
use crate::agent::turn::road::Rules;
use crate::agent::turn::round::running;
use crate::agent::turn::undo::UndoGroup;
use crate::llm::Provider;
use crate::runtime::change::FileDiff;
use crate::runtime::sandbox::Mode as SandboxMode;
use crate::tools::{ToolCall, ToolOutcome, ToolSet, Tools};
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::mpsc::UnboundedReceiver;

/// A handle on one conversation, for the length of a call or a service's errand: what of the
/// turn's parts they touch.
pub(in crate::agent) struct Handle<'t> {
    pub config: &'t AgentConfig,
    /// The model, shared with the conversation's children.
    pub provider: Option<&'t Arc<Provider>>,
    pub toolset: &'t ToolSet,
    pub state: &'t mut State,
    pub undo: &'t mut UndoGroup,
    /// The bounds of the prompt's turn: its own, or a child's parent's.
    pub bounds: &'t Arc<Bounds>,
    pub inbox: &'t mut UnboundedReceiver<Command>,
    pub outbox: &'t Outbox,
}

/// The workspace's services a call may use: shared by every conversation over the workspace.
#[derive(Clone, Copy)]
pub(in crate::agent) struct Shared<'t> {
    pub services: &'t Services,
    /// The services' tools.
    pub tools: &'t Tools,
}

/// A conversation's handle with the workspace's services: what a service's errand needs.
pub(in crate::agent) type Parts<'t> = (Handle<'t>, Shared<'t>);

impl<'a> Turn<'a> {
    /// The turn's handle on its conversation, and the workspace's services it borrows.
    pub(in crate::agent) fn parts(&mut self) -> (Handle<'_>, Shared<'a>) {
        let handle = Handle {
            config: self.config,
            provider: self.provider,
            toolset: self.toolset,
            state: self.state,
            undo: self.undo,
            bounds: self.bounds,
            inbox: self.inbox,
            outbox: self.outbox,
        };
        (handle, Shared { services: self.services, tools: self.tools })
    }
}

impl<'t> Handle<'t> {
    /// The same handle, borrowed for a shorter errand.
    pub fn reborrow(&mut self) -> Handle<'_> {
        Handle { state: self.state, undo: self.undo, inbox: self.inbox, ..*self }
    }

    /// Tells of something that happened (`State::emit`), and sends it to the front ends at once.
    pub fn emit(&mut self, event: AgentEvent) {
        self.state.emit(event);
        self.state.flush(self.outbox);
    }

    /// The read-only rules this conversation's calls are held to at this moment, if any: its own
    /// plan mode; a child's tool set's (an explorer, or a child started under plan mode); or, for
    /// a child, its parent's plan mode as the parent said it last (`turn::bounds`), so that the
    /// person's Shift+Tab reaches a running child at its next call.
    pub fn read_only_rules(&self) -> Option<Rules<'t>> {
        if let Some(why) = self.toolset.read_only() {
            return Some(Rules::Child(why));
        }
        if self.config.is_child() && self.bounds.plan_mode() {
            return Some(Rules::Child(children::UNDER_PLAN_MODE));
        }
        self.state.view().plan_mode.then_some(Rules::PlanMode)
    }

    /// Tells of a call keel takes up (its line in the conversation, `tool_start` for `-p`) before
    /// it runs — for a call the workspace is snapshotted for, once the snapshot is recorded, so a
    /// printing front end that sees it knows undo covers what it does.
    pub fn take_up(&mut self, call: &ToolCall) {
        self.emit(AgentEvent::ToolStart {
            id: call.id.clone(),
            name: call.name.clone(),
            input: call.input.clone(),
            summary: crate::visible::one_line(&call.summary()),
        });
    }

    /// Updates the tool pane (`in_pane`: board updates stay out of it, the board itself is
    /// pinned beside it) and tells printing front ends how a call on `tools` ended.
    pub fn record_result(
        &mut self,
        tools: &Tools,
        call: &ToolCall,
        in_pane: bool,
        status: ToolStatus,
        outcome: &ToolOutcome,
        started: Instant,
    ) {
        let duration = started.elapsed();
        self.state.mark_call(call, status, &outcome.for_model);
        if let Some(tally) = &outcome.tally {
            self.state.note_tally(&call.id, tally);
        }
        if in_pane {
            self.state.update_tool(ToolRun {
                status,
                exit_code: outcome.exit_code,
                duration: Some(duration),
                output: outcome.for_display.as_str().into(),
                ..running(call, started, "")
            });
        }
        self.emit(AgentEvent::ToolEnd {
            id: call.id.clone(),
            name: call.name.clone(),
            is_error: outcome.is_error,
            exit_code: outcome.exit_code,
            duration_ms: u64::try_from(duration.as_millis()).unwrap_or(u64::MAX),
            duration_us: u64::try_from(duration.as_micros()).unwrap_or(u64::MAX),
            output: outcome.for_model.clone(),
            tally: outcome.tally.clone(),
            diff: outcome
                .changes
                .first()
                .map(|change| FileDiff::of_change(tools.workspace(), change)),
        });
    }
}

impl Shared<'_> {
    /// The tools as a call runs them under `rules` ([`Handle::read_only_rules`]): under
    /// read-only rules (plan mode, a child's), commands run in a read-only sandbox.
    pub fn tools_for(&self, rules: Option<Rules<'_>>) -> Tools {
        if rules.is_some() {
            self.tools.confined_to(SandboxMode::ReadOnly)
        } else {
            self.tools.clone()
        }
    }
}

/// The tools as the conversation's calls run them now ([`Shared::tools_for`] its read-only
/// rules).
pub(in crate::agent) fn tools_for_call((conv, shared): Parts<'_>) -> Tools {
    shared.tools_for(conv.read_only_rules())
}
