//! The agent task: owns the conversation and runs the loop of model requests and tool calls.
//!
//! A front end starts it with [`spawn`] (or [`spawn_with_session`]) and talks to it only through
//! the returned [`AgentHandle`]: [`Command`]s in, [`Snapshot`]s (for drawing) and
//! [`AgentEvent`]s (for printing) out. The first snapshot is sent as soon as the task starts.
//! That contract, and [`journal`] for reopening saved sessions, is all that is public here; how a
//! turn runs (`turn`, `approval`, `reminder`, `state`) is the task's own.
//! The rules it keeps are written down in `docs/architecture.md` and `docs/board.md`.

mod approval;
mod board_edits;
mod children;
mod command;
mod compaction;
mod context;
mod conversation;
mod event;
pub mod journal;
mod mentions;
mod plan_mode;
mod reminder;
mod services;
mod snapshot;
mod state;
mod steps_done;
mod streaming;
mod task;
mod turn;
mod undo_note;

pub use children::{
    Budget, ChildAgent, ChildSettings, ChildStatus, DEFAULT_MAX_CHILD_ROUNDS,
    DEFAULT_MAX_CHILD_TOKENS, DEFAULT_MAX_PARALLEL_AGENTS,
};
pub use command::{Command, Decision};
pub use event::INTERRUPTED;
pub use event::{AgentEvent, TurnOutcome};
pub use plan_mode::{APPROVED as PLAN_APPROVED, is_note as is_plan_note, note as plan_note};
pub use reminder::{NagThreshold, Reminder, ReminderCounts};
pub use snapshot::{
    Activity, ApprovalRequest, Asking, CallMark, ContextUse, Entry, HandedBack, Refusal,
    SessionList, Snapshot, ToolRun, ToolStatus, TurnClock, TurnDiff,
};
pub use streaming::StreamingText;
pub use turn::{CONFIGURE_HELP, GO_ON, NO_PROVIDER_HELP};

use crate::llm::Provider;
use crate::tools::Tools;
use journal::{Journal, Restored, SessionLog, SessionStore};
use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// The reminder keel adds when the model has not touched its board for a while. It asks for the
/// update alongside the next step: a response spent on the board alone costs a whole request.
pub const DEFAULT_NAG_MESSAGE: &str = "<reminder>Update your todos in the same response as your \
next step's tool call, not in a response of its own.</reminder>";
/// Tool rounds without a `todo` call before the reminder is added.
pub const DEFAULT_NAG_THRESHOLD: u32 = reminder::DEFAULT_THRESHOLD;
/// Model responses one user turn may take before keel stops it.
pub const DEFAULT_MAX_ROUNDS: u32 = 100;
/// Output tokens asked for per response.
pub const DEFAULT_MAX_TOKENS: u32 = 8192;
/// Tokens of context window assumed for a model keel does not know (`config::window` knows the
/// families' own).
pub const DEFAULT_CONTEXT_WINDOW: u32 = 128_000;
/// The share of the context window, less `max_tokens`, at which keel compacts the history.
pub const DEFAULT_COMPACT_AT: f64 = 0.8;

/// When keel asks before running a tool that changes something.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum ApprovalMode {
    /// Ask before `bash`, `write_file` and `edit_file`.
    #[default]
    #[value(help = "Ask before commands and file changes")]
    Ask,
    /// Run everything inside the workspace without asking.
    #[value(help = "Run everything inside the workspace")]
    Auto,
    /// Refuse every write and command.
    #[value(help = "Refuse every command and write")]
    ReadOnly,
}

/// How the agent behaves; fixed for the life of the task.
#[derive(Debug, Clone)]
pub struct AgentConfig {
    pub system_prompt: String,
    pub max_tokens: u32,
    /// Anthropic extended thinking's budget of tokens; `None` leaves it off.
    pub thinking_budget: Option<u32>,
    /// `Fixed(0)` turns the reminder off.
    pub nag_threshold: NagThreshold,
    pub nag_message: String,
    pub max_rounds: u32,
    pub approval: ApprovalMode,
    /// The model's context window in tokens (a server's "too long" answer corrects it).
    pub context_window: u32,
    /// Whether `context_window` is keel's figure for the model rather than one set.
    pub context_window_assumed: bool,
    /// The share of the window less `max_tokens` at which the history is compacted.
    pub compact_at: f64,
    /// Whether the model has the board at all (`--no-todo` takes the tool and the reminder away).
    pub board: bool,
    /// Start in plan mode (`--plan`): the model may read, not change, and ends with a board.
    pub plan: bool,
    /// The providers `/model` may switch to, and the windows of models.
    pub routes: crate::llm::Routes,
    /// The workspace's hooks, handed to its services: every conversation goes through them.
    pub hooks: std::sync::Arc<crate::hooks::Hooks>,
    /// How the conversation's child agents (`task`) run.
    pub children: ChildSettings,
    /// A budget that stops a turn in place of `max_rounds`: a child agent's own.
    pub budget: Option<Budget>,
}

impl AgentConfig {
    /// Whether these are a child agent's settings: a child's conversation carries its own budget.
    pub fn is_child(&self) -> bool {
        self.budget.is_some()
    }
}

impl Default for AgentConfig {
    fn default() -> Self {
        Self {
            system_prompt: String::new(),
            max_tokens: DEFAULT_MAX_TOKENS,
            thinking_budget: None,
            nag_threshold: NagThreshold::default(),
            nag_message: DEFAULT_NAG_MESSAGE.to_owned(),
            max_rounds: DEFAULT_MAX_ROUNDS,
            approval: ApprovalMode::Auto,
            context_window: DEFAULT_CONTEXT_WINDOW,
            context_window_assumed: true,
            compact_at: DEFAULT_COMPACT_AT,
            board: true,
            plan: false,
            routes: crate::llm::Routes::default(),
            hooks: std::sync::Arc::default(),
            children: ChildSettings::default(),
            budget: None,
        }
    }
}

/// The front end's side of the agent task. A front end that does not draw drops `snapshots`,
/// one that does not print drops `events`: the agent then builds nothing for them.
#[derive(Debug)]
pub struct AgentHandle {
    pub commands: mpsc::UnboundedSender<Command>,
    pub snapshots: mpsc::UnboundedReceiver<Snapshot>,
    pub events: mpsc::UnboundedReceiver<AgentEvent>,
    pub task: JoinHandle<()>,
}

/// Starts the agent task, saving nothing. With no provider (no key configured) every prompt is
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

/// Starts the agent task, saving the conversation as `sessions` says.
pub fn spawn_with_session(
    config: AgentConfig,
    provider: Option<Provider>,
    tools: Tools,
    sessions: Sessions,
) -> AgentHandle {
    let (commands, inbox) = mpsc::unbounded_channel();
    let (snapshot_tx, snapshots) = mpsc::unbounded_channel();
    let (event_tx, events) = mpsc::unbounded_channel();
    let outbox = state::Outbox { snapshots: snapshot_tx, events: event_tx };
    let workspace = tools.workspace().clone();
    let mut agent = task::Agent::new(config, provider, tools, outbox, inbox);
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
