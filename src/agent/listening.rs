//! The person heard while the agent waits on something of a turn's — the model's answer, a
//! summary, hooks, a command: a command that arrives meanwhile ([`during_turn`]), and what a
//! request reports as it streams ([`on_stream_event`]). Shared by the turn and by compaction's
//! summary request, so both hear the person the same way.

use crate::agent::command::Command;
use crate::agent::event::AgentEvent;
use crate::agent::services::Services;
use crate::agent::snapshot::Activity;
use crate::agent::state::{Outbox, State};
use crate::agent::{approval_switch, board_edits};
use crate::llm::StreamEvent;
use std::time::Instant;

/// Why a turn stopped before the model finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::agent) enum Stop {
    /// The person interrupted it.
    Interrupted,
    /// The front end is gone or asked to quit: end the worker.
    Quit,
}

/// Handles a command that arrives while a turn runs. Returns why the turn must stop, if it must.
pub(in crate::agent) fn during_turn(
    state: &mut State,
    outbox: &Outbox,
    services: &Services,
    command: Option<Command>,
) -> Option<Stop> {
    match command {
        None | Some(Command::Quit) => Some(Stop::Quit),
        Some(Command::Cancel) => Some(Stop::Interrupted),
        Some(Command::Submit(prompt)) => {
            state.queue(prompt);
            state.publish(outbox);
            None
        }
        Some(Command::EditBoard(edit)) => {
            board_edits::edit(state, outbox, &edit);
            None
        }
        Some(Command::PlanMode(on)) => {
            board_edits::plan_mode(state, outbox, on);
            None
        }
        Some(Command::Approval(mode)) => {
            approval_switch::switch(services, state, outbox, mode);
            None
        }
        Some(Command::ListSessions) => {
            state.list_sessions();
            state.publish(outbox);
            None
        }
        Some(
            Command::Resume(_)
            | Command::Shell(_)
            | Command::SwitchModel(_)
            | Command::ShowDiff
            | Command::ShowSandbox
            | Command::Clear
            | Command::Undo
            | Command::StartDemo
            | Command::PlayDemo
            | Command::Continue
            | Command::Compact
            | Command::ApprovePlan
            | Command::Hooks(_),
        ) => {
            state.emit(AgentEvent::Notice {
                text: "Wait for the turn to end, or press Esc to interrupt it first.".into(),
            });
            state.publish(outbox);
            None
        }
        Some(Command::Approve { .. }) => None,
    }
}

/// Shows what a request reports as it streams: its text (when `show_text`: the answer is to be
/// shown as it comes) and its retries. A delta costs what its own length does, however long the
/// answer has grown (see `streaming`).
pub(in crate::agent) fn on_stream_event(
    state: &mut State,
    outbox: &Outbox,
    show_text: bool,
    event: StreamEvent,
) {
    match event {
        StreamEvent::TextDelta(delta) => {
            if !show_text {
                return;
            }
            state.stream_text(&delta);
            state.set_activity(Activity::Thinking);
        }
        StreamEvent::Retrying { attempt, delay, reason } => {
            state.end_streaming();
            state.set_activity(Activity::Retrying {
                attempt,
                until: Instant::now() + delay,
                reason: reason.clone(),
            });
            state.emit(AgentEvent::Retry {
                attempt,
                delay_ms: u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
                reason,
            });
            state.flush(outbox);
        }
        StreamEvent::Sent(sent) => state.set_last_sent(sent),
    }
    state.publish(outbox);
}
