//! Everything the agent task owns, and the one place it changes.
//!
//! Each mutation goes through a method here so the snapshot front ends see, the events headless
//! mode prints and the session log all stay in step with the history.

use super::event::AgentEvent;
use super::snapshot::{Activity, ApprovalRequest, Entry, Snapshot, ToolRun};
use crate::llm::WireFormat;
use crate::message::{History, Message, Usage};
use crate::todo::TodoBoard;
use std::sync::Arc;
use tokio::sync::mpsc::UnboundedSender;

/// Where snapshots and events go. A closed receiver is not an error: a front end may listen to
/// only one of the two.
#[derive(Debug, Clone)]
pub struct Outbox {
    pub snapshots: UnboundedSender<Snapshot>,
    pub events: UnboundedSender<AgentEvent>,
}

impl Outbox {
    pub fn event(&self, event: AgentEvent) {
        let _ = self.events.send(event);
    }
}

/// The conversation and everything around it.
#[derive(Debug, Clone)]
pub struct State {
    seq: u64,
    pub history: History,
    pub transcript: imbl::Vector<Entry>,
    pub board: Arc<TodoBoard>,
    pub tools: imbl::Vector<Arc<ToolRun>>,
    pub streaming: Option<Arc<str>>,
    pub activity: Activity,
    pub usage: Usage,
    pub rounds_since_todo: u32,
    pub nag_threshold: u32,
    pub provider: Arc<str>,
    pub model: Arc<str>,
    pub wire_format: WireFormat,
    pub system_prompt: Arc<str>,
    pub queued: imbl::Vector<String>,
    pub pending_approval: Option<Arc<ApprovalRequest>>,
}

impl State {
    pub fn new(
        system_prompt: &str,
        nag_threshold: u32,
        provider: &str,
        model: &str,
        wire_format: WireFormat,
    ) -> Self {
        Self {
            seq: 0,
            history: History::new(),
            transcript: imbl::Vector::new(),
            board: Arc::new(TodoBoard::default()),
            tools: imbl::Vector::new(),
            streaming: None,
            activity: Activity::Idle,
            usage: Usage::default(),
            rounds_since_todo: 0,
            nag_threshold,
            provider: provider.into(),
            model: model.into(),
            wire_format,
            system_prompt: system_prompt.into(),
            queued: imbl::Vector::new(),
            pending_approval: None,
        }
    }

    /// The current state as an immutable view: pointer copies, whatever the history's length.
    pub fn snapshot(&mut self) -> Snapshot {
        self.seq += 1;
        Snapshot {
            seq: self.seq,
            history: self.history.clone(),
            transcript: self.transcript.clone(),
            board: Arc::clone(&self.board),
            tools: self.tools.clone(),
            streaming: self.streaming.clone(),
            activity: self.activity.clone(),
            usage: self.usage,
            rounds_since_todo: self.rounds_since_todo,
            nag_threshold: self.nag_threshold,
            provider: Arc::clone(&self.provider),
            model: Arc::clone(&self.model),
            wire_format: self.wire_format,
            system_prompt: Arc::clone(&self.system_prompt),
            queued: self.queued.clone(),
            pending_approval: self.pending_approval.clone(),
        }
    }

    /// Sends the current state to the front end.
    pub fn publish(&mut self, outbox: &Outbox) {
        let snapshot = self.snapshot();
        let _ = outbox.snapshots.send(snapshot);
    }

    pub fn note(&mut self, entry: Entry) {
        self.transcript.push_back(entry);
    }

    pub fn push_message(&mut self, message: Message) {
        self.history.push_back(message);
    }

    /// Replaces the tool run with the same id (searching from the newest).
    pub fn update_tool(&mut self, run: ToolRun) {
        let found = self
            .tools
            .iter()
            .rposition(|existing| existing.id == run.id);
        match found {
            Some(index) => {
                self.tools.set(index, Arc::new(run));
            }
            None => self.tools.push_back(Arc::new(run)),
        }
    }

    /// A new conversation: history, board, tool log and counters emptied.
    pub fn clear(&mut self) {
        self.history = History::new();
        self.transcript = imbl::Vector::new();
        self.board = Arc::new(TodoBoard::default());
        self.tools = imbl::Vector::new();
        self.streaming = None;
        self.usage = Usage::default();
        self.rounds_since_todo = 0;
        self.queued = imbl::Vector::new();
        self.pending_approval = None;
    }
}
