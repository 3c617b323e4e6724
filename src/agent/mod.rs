//! The agent: its worker (a tokio task) owns the conversation and runs the loop of model requests
//! and tool calls.
//!
//! A front end starts it with [`spawn`] (or [`spawn_with_session`]) and talks to it only through
//! the returned [`AgentHandle`]: [`Command`]s in, [`Snapshot`]s (for drawing) and
//! [`AgentEvent`]s (for printing) out. The first snapshot is sent as soon as the worker starts.
//! That contract, and [`journal`] for reopening saved sessions, is all that is public here; how a
//! turn runs (`turn`, `approval`, `reminder`, `state`) is the worker's own.
//! The rules it keeps are written down in `docs/architecture.md` and `docs/board.md`.

mod approval;
mod approval_switch;
mod board_edits;
mod check_record;
mod children;
mod command;
mod compaction;
mod config;
mod conversation;
mod event;
pub mod journal;
mod listening;
mod mentions;
mod plan_mode;
mod reminder;
mod services;
mod snapshot;
mod state;
mod steps_done;
mod streaming;
mod turn;
mod undo_note;
mod worker;

pub use check_record::{CheckEnd, CheckRecord, STALE_AFTER};
pub use children::{
    Budget, ChildSettings, DEFAULT_MAX_CHILD_ROUNDS, DEFAULT_MAX_CHILD_TOKENS,
    DEFAULT_MAX_CHILDREN_PER_RESPONSE, DEFAULT_MAX_PARALLEL_AGENTS,
};
pub use command::{Command, Decision};
pub use config::{
    AgentConfig, ApprovalMode, DEFAULT_CHECK_TIMEOUT_SECS, DEFAULT_COMPACT_AT,
    DEFAULT_CONTEXT_WINDOW, DEFAULT_MAX_ROUNDS, DEFAULT_MAX_TOKENS, DEFAULT_NAG_MESSAGE,
    DEFAULT_NAG_THRESHOLD,
};
pub use event::INTERRUPTED;
pub use event::{AgentEvent, TurnOutcome, check_time};
pub use reminder::{NagThreshold, Reminder, ReminderCounts};
pub use snapshot::{
    Activity, ApprovalRequest, Asking, CallMark, ChildAgent, ChildStatus, ContextUse, Entry,
    HandedBack, Refusal, SessionList, Snapshot, ToolRun, ToolStatus, TurnClock, TurnDiff,
};
pub use streaming::StreamingText;
pub use turn::{CONFIGURE_HELP, GO_ON, NO_PROVIDER_HELP};

use crate::llm::Provider;
use crate::tools::Tools;
use journal::{Journal, Restored, SessionLog, SessionStore};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// The front end's side of the agent's worker. A front end that does not draw drops `snapshots`,
/// one that does not print drops `events`: the agent then builds nothing for them.
#[derive(Debug)]
pub struct AgentHandle {
    pub commands: mpsc::UnboundedSender<Command>,
    pub snapshots: mpsc::UnboundedReceiver<Snapshot>,
    pub events: mpsc::UnboundedReceiver<AgentEvent>,
    pub task: JoinHandle<()>,
}

/// Starts the agent's worker, saving nothing. With no provider (no key configured) every prompt is
/// answered with an error that says how to configure one.
pub fn spawn(config: AgentConfig, provider: Option<Provider>, tools: Tools) -> AgentHandle {
    spawn_with_session(config, provider, tools, Sessions::Off)
}

/// Whether and how the agent saves the conversation (see [`journal`]).
// Made once per run and moved once: the size of the reopened session does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum Sessions {
    /// Nothing is saved.
    Off,
    /// A new session log in the store, created at the first record.
    New(SessionStore),
    /// Take over a session reopened from the store and go on saving to it.
    Resume(SessionStore, SessionLog, Restored),
}

/// Starts the agent's worker, saving the conversation as `sessions` says.
pub fn spawn_with_session(
    config: AgentConfig,
    provider: Option<Provider>,
    tools: Tools,
    sessions: Sessions,
) -> AgentHandle {
    let (commands, inbox) = mpsc::unbounded_channel();
    let (snapshot_tx, snapshots) = mpsc::unbounded_channel();
    let (event_tx, events) = mpsc::unbounded_channel();
    let outbox = state::Outbox { snapshots: snapshot_tx, events: event_tx, asks: None };
    let workspace = tools.workspace().clone();
    let mut agent = worker::Agent::new(config, provider, tools, outbox, inbox);
    match sessions {
        Sessions::Off => {}
        Sessions::New(store) => agent.conversation.state.save_to(Journal::new_in(store)),
        Sessions::Resume(store, log, restored) => {
            let conversation = &mut agent.conversation;
            conversation.state.save_to(Journal::resume(log, store));
            if let Some(window) = restored.learned_window {
                conversation.meter.learn_window(window);
            }
            conversation.state.restore(restored, &workspace);
        }
    }
    let task = tokio::spawn(agent.run());
    AgentHandle { commands, snapshots, events, task }
}
