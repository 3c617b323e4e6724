//! The agent's state as a front end sees it: an immutable view, cheap to build and send.
//!
//! Every large part is shared, not copied: the history, the transcript and the text streaming in are
//! `imbl` vectors and the board is behind an `Arc`, so a snapshot of a 100,000-message session costs what one of ten does.
//! Front ends render the newest snapshot they have and drop the rest. A child agent (`task`) is
//! seen the same way: who it is, what it does now, what it has spent, and its conversation as it
//! last showed it ([`ChildAgent`]).

use super::reminder::Reminder;
use super::streaming::StreamingText;
use crate::board::Board;
use crate::llm::{RequestShape, SentRequest, WireFormat};
use crate::message::{History, Usage};
use crate::tools::bash::hint::SandboxHint;
use crate::tools::task::Kind;
use serde::Serialize;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long the person has waited on the turn running now, or waited on the last one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TurnClock {
    /// No turn has run in this conversation.
    #[default]
    None,
    Running {
        since: Instant,
    },
    Took(Duration),
}

impl TurnClock {
    /// The turn's time so far (running) or in all (over), as of `now`.
    pub fn elapsed(self, now: Instant) -> Option<Duration> {
        match self {
            Self::None => None,
            Self::Running { since } => Some(now.saturating_duration_since(since)),
            Self::Took(took) => Some(took),
        }
    }
}

/// What the agent is doing right now.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Activity {
    #[default]
    Idle,
    /// Waiting for, or reading, the model's answer.
    Thinking,
    /// A tool is running.
    RunningTool { name: String },
    /// A request failed and will be tried again at `until`.
    Retrying { attempt: u32, until: Instant, reason: String },
    /// Waiting for the person to allow or refuse a tool call.
    AwaitingApproval,
    /// Compacting the history to fit the model's context window (a summary may be on its way).
    Compacting,
}

/// How much of the model's context window the next request takes, as keel estimates it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ContextUse {
    pub tokens: u64,
    /// 0 until the agent knows it.
    pub window: u64,
}

impl ContextUse {
    /// The share of the window taken, in whole percent; `None` while the window is unknown.
    pub fn percent(&self) -> Option<u64> {
        (self.window > 0).then(|| self.tokens.saturating_mul(100) / self.window)
    }
}

/// One line of the conversation as the person reads it (the history is what the model reads).
#[derive(Debug, Clone, PartialEq)]
pub enum Entry {
    /// What the person typed.
    User { text: String },
    /// The model's text (Markdown).
    Assistant { text: String },
    /// The model's reasoning before its answer, shown folded; `redacted` when the provider
    /// encrypted some of it.
    Thinking { text: String, redacted: bool },
    /// A tool call, shown as one compact line; details live in the tool log under the same id.
    ToolCall { id: String, name: String, summary: String },
    /// keel reminded the model to update its board.
    Reminder { text: String },
    /// Something went wrong; the text says what to do.
    Error { text: String },
    /// A neutral note from keel (turn interrupted, conversation cleared, files restored, …).
    Notice { text: String },
}

/// How a tool call ended, or that it is still running.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolStatus {
    Running,
    Succeeded,
    Failed,
    /// The person said no.
    Declined,
    /// keel did not run it, without asking: why.
    Refused(Refusal),
    Interrupted,
}

/// Why keel refused a call without asking the person.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Plan mode: nothing may change until the plan is approved.
    PlanMode,
    /// No sandbox could be set up, and the person did not turn it off.
    NoSandbox,
    /// `--approval read-only`, or a child's read-only rules.
    ReadOnly,
    /// A PreToolUse hook blocked it, or asked for an approval no one was there to give.
    Hook,
}

impl Refusal {
    /// In a few words, for the tool's line: `refused: plan mode`.
    pub fn label(self) -> &'static str {
        match self {
            Self::PlanMode => "refused: plan mode",
            Self::NoSandbox => "refused: no sandbox",
            Self::ReadOnly => "refused: read-only",
            Self::Hook => "refused: hook",
        }
    }
}

/// How a call's line in the conversation is marked: how it ended when it did not succeed, and
/// what the sandbox had to do with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallMark {
    pub status: ToolStatus,
    pub hint: Option<SandboxHint>,
    /// Why the board refused an update: the first line of its answer.
    pub reason: Option<Arc<str>>,
}

/// One tool call for the tool pane.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolRun {
    pub id: String,
    pub name: String,
    /// The command, or the path, in one line.
    pub summary: String,
    pub status: ToolStatus,
    pub exit_code: Option<i32>,
    pub started: Instant,
    pub duration: Option<Duration>,
    /// The output so far (while running: the newest part), as the person should see it.
    pub output: Arc<str>,
}

/// What the person is asked to allow, for the box's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Asking {
    /// A command to run in the sandbox.
    #[default]
    Command,
    /// A command that would run unconfined: no sandbox can be set up.
    UnconfinedCommand,
    /// A change to a file.
    Change,
    /// An MCP tool's call; `read_only` when its server marks the tool so.
    Call { read_only: bool },
    /// The demo, where no sandbox can be set up, asks to run its own commands unconfined.
    DemoUnconfined,
}

/// A tool call waiting for the person's yes or no.
#[derive(Debug, Clone, PartialEq)]
pub struct ApprovalRequest {
    pub id: String,
    pub tool: String,
    pub asking: Asking,
    /// What would run, whole: the command exactly as `bash -c` receives it, or the path.
    pub detail: String,
    /// For file changes: a unified diff of what would change.
    pub diff: Option<String>,
    /// What an "always" answer would cover, in words; `None`: this call cannot be allowed always.
    pub always: Option<String>,
    /// For commands: the sandbox it runs in, in words (`sandbox: read-only · no network`).
    pub sandbox: Option<String>,
    /// The child agent whose call it is, in words (`child a2 · Run the tests · item #3`);
    /// `None` for the conversation's own.
    pub agent: Option<String>,
    /// For an item's check: the item, in words (`#3 Fix the parser`), whose completion waits
    /// for it.
    pub check: Option<String>,
}

/// Queued prompts handed back to the front end when the person interrupts the turn, to edit
/// or drop: `count` grows with every hand-back, so a front end takes each one once.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HandedBack {
    pub count: u64,
    pub prompts: imbl::Vector<String>,
}

/// The agent's state at one moment. `Default` is an agent with nothing to show yet.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    /// Grows by one with every snapshot sent; front ends redraw when it changes.
    pub seq: u64,
    /// The history exactly as the model receives it (in keel's neutral form; see `wire_format`).
    pub history: History,
    pub transcript: imbl::Vector<Entry>,
    pub board: Arc<Board>,
    pub tools: imbl::Vector<Arc<ToolRun>>,
    /// How the calls that did not succeed ended, and those the sandbox had a hand in, by id —
    /// board updates included — for the conversation to mark their lines.
    pub call_marks: imbl::HashMap<String, CallMark>,
    /// The changes applied writes and edits made, by call id (from their `tool_end`), for the
    /// conversation to fold under their lines and the pager to show whole.
    pub call_diffs: imbl::HashMap<String, Arc<crate::runtime::change::FileDiff>>,
    /// What the searches found, by call id (`12 matches in 3 files`), for the conversation and
    /// the tool pane to show beside their calls.
    pub call_tallies: imbl::HashMap<String, Arc<str>>,
    /// The assistant text streaming in right now, not yet part of the history.
    pub streaming: Option<StreamingText>,
    pub activity: Activity,
    /// The turn's time, for the status bar.
    pub turn_clock: TurnClock,
    pub usage: Usage,
    /// The next request's share of the context window.
    pub context: ContextUse,
    /// The reminder's counts and setting (see [`Snapshot::is_stale`]).
    pub reminder: Reminder,
    /// The model may read, not change (`--plan`, Shift+Tab).
    pub plan_mode: bool,
    /// A plan-mode turn ended with a plan on the board, waiting for the person's approval.
    pub plan_ready: bool,
    pub provider: Arc<str>,
    pub model: Arc<str>,
    pub wire_format: WireFormat,
    pub system_prompt: Arc<str>,
    /// What each request carries besides the system prompt and the history.
    pub request: RequestShape,
    /// How many of the person's board edits the agent has taken (made or refused), for a front
    /// end to tell which of the edits it sent the board shows yet.
    pub board_edits_taken: u64,
    /// The last request body sent in this conversation, byte for byte, for the inspector.
    pub last_sent: Option<SentRequest>,
    /// Prompts submitted while a turn ran, sent one by one when it ends.
    pub queued: imbl::Vector<String>,
    /// The prompts that were queued when the person last interrupted a turn.
    pub handed_back: HandedBack,
    pub pending_approval: Option<Arc<ApprovalRequest>>,
    /// The sandbox commands run in, for the status bar (`sandbox: workspace · no network`, or
    /// `sandbox: unavailable`); `None` when the person turned it off.
    pub sandbox: Option<Arc<str>>,
    /// The MCP servers, their state and tools (for `/mcp` and the status bar).
    pub mcp: Arc<[crate::tools::mcp::ServerView]>,
    /// The newest undoable prompt's changes, as `/diff` last asked for them.
    pub turn_diff: Option<Arc<TurnDiff>>,
    /// The hooks configured and the newest runs (for `/hooks`).
    pub hooks: Arc<crate::hooks::HooksView>,
    /// The saved sessions as last listed (`Command::ListSessions`), for the session picker.
    pub sessions: Option<Arc<SessionList>>,
    /// The child agents (`task`) of this conversation, running and done, oldest first.
    pub children: imbl::Vector<Arc<ChildAgent>>,
    /// Each board item's last check, by item id.
    pub checks: imbl::HashMap<String, Arc<crate::agent::check_record::CheckRecord>>,
}

/// What the newest prompt that changed files changed (what undo would revert), for `/diff`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TurnDiff {
    /// Grows by one with every `/diff`, so a front end shows each answer once.
    pub asked: u64,
    /// A diff a file.
    pub diffs: Vec<crate::runtime::change::FileDiff>,
    /// How far it reaches, when not everything could be shown.
    pub notes: Vec<String>,
}

/// This workspace's saved sessions, as `Command::ListSessions` found them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionList {
    /// Grows by one with every listing, so a front end can tell a new answer from the last.
    pub listed: u64,
    /// The sessions, the one written last first.
    pub sessions: Vec<crate::agent::journal::SessionInfo>,
    /// The id of the session open now, if it has been saved yet.
    pub current: Option<String>,
    /// Why there is no list: sessions are not saved in this run, or reading them failed.
    pub error: Option<String>,
}

impl Snapshot {
    /// Whether the item in progress has stood still past twice the reminder's threshold.
    pub fn is_stale(&self) -> bool {
        self.board.in_progress().is_some() && self.reminder.is_stale()
    }
}

/// How a child stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChildStatus {
    Running,
    /// It answered: its item, if it has one, is completed.
    Done,
    /// It ended in an error (the model's server, a request that does not fit).
    Failed,
    /// Its budget ran out.
    Stopped,
    /// The person interrupted it, or keel is quitting.
    Interrupted,
}

impl ChildStatus {
    /// The status in one word, as `-p` and the screen say it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::Done => "done",
            Self::Failed => "failed",
            Self::Stopped => "stopped",
            Self::Interrupted => "interrupted",
        }
    }
}

/// One child agent of a conversation.
#[derive(Debug, Clone)]
pub struct ChildAgent {
    /// `a1`, `a2`, …: unique in the conversation; its events carry it as `agent`.
    pub id: Arc<str>,
    /// The `task` call that started it.
    pub call_id: Arc<str>,
    /// Its name for the person: the call's description, or its prompt's first words.
    pub label: Arc<str>,
    /// The board item it does.
    pub item: Option<Arc<str>>,
    pub kind: Kind,
    pub status: ChildStatus,
    /// The call it runs now, in one line (`bash: cargo test`).
    pub tool: Option<String>,
    /// Model responses so far.
    pub rounds: u32,
    /// The tokens its responses took.
    pub usage: Usage,
    /// Its conversation as it last showed it (its transcript, its last request); `None` until
    /// it shows one, and where no front end draws.
    pub view: Option<Box<Snapshot>>,
}

impl ChildAgent {
    pub fn is_running(&self) -> bool {
        self.status == ChildStatus::Running
    }

    /// The child in words, for the approval box and `-p`: `child a2 · Run the tests · item #3`.
    pub fn describe(&self) -> String {
        let mut words = format!("child {} · {}", self.id, self.label);
        if let Some(item) = &self.item {
            words.push_str(&format!(" · item #{item}"));
        }
        words
    }
}
