//! Everything the agent task owns, and the one place it changes.
//!
//! Each mutation goes through a method here so the snapshot front ends see, the events headless
//! mode prints and the session log all stay in step with the history.

use super::event::AgentEvent;
use super::snapshot::{Activity, ApprovalRequest, Entry, Snapshot, ToolRun};
use crate::llm::WireFormat;
use crate::message::{ContentBlock, History, Message, Role, Usage};
use crate::session::{Record, Restored, SessionLog};
use crate::todo::TodoBoard;
use std::path::{Path, PathBuf};
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
#[derive(Debug)]
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
    /// Where the session is saved as it happens, once it has something to save.
    journal: Option<SessionLog>,
    /// The workspace whose `.keel/sessions` gets a new log at the first record; `None`: the
    /// session is not saved.
    journal_root: Option<PathBuf>,
    /// Set once saving failed, so the person is told once, not at every record.
    journal_failed: bool,
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
            journal: None,
            journal_root: None,
            journal_failed: false,
        }
    }

    /// Saves the conversation from its first record on to a new log in `workspace`; a
    /// conversation that never starts leaves no file behind.
    pub fn save_new_session_in(&mut self, workspace: &Path) {
        self.journal = None;
        self.journal_root = Some(workspace.to_owned());
        self.journal_failed = false;
    }

    /// Goes on saving to a reopened log.
    pub fn set_journal(&mut self, journal: SessionLog, workspace: &Path) {
        self.journal = Some(journal);
        self.journal_root = Some(workspace.to_owned());
        self.journal_failed = false;
    }

    /// Whether the conversation is being saved.
    pub fn is_saved(&self) -> bool {
        self.journal_root.is_some()
    }

    /// Appends a record to the session log; a failure is told to the person once.
    pub fn record(&mut self, record: &Record) {
        if self.journal_failed {
            return;
        }
        let result = match (&mut self.journal, &self.journal_root) {
            (Some(journal), _) => journal.append(record),
            (None, Some(root)) => SessionLog::create(root).and_then(|mut journal| {
                let appended = journal.append(record);
                self.journal = Some(journal);
                appended
            }),
            (None, None) => return,
        };
        if let Err(err) = result {
            if !self.journal_failed {
                self.journal_failed = true;
                self.transcript.push_back(Entry::Error {
                    text: format!("The session is no longer being saved: {err}"),
                });
            }
        }
    }

    /// Takes over a saved session: its history, board and counter, and a transcript rebuilt from
    /// the history. A tool call left without its result gets one saying it was interrupted.
    pub fn restore(&mut self, restored: &Restored, interrupted: &str) {
        self.history = restored.history.iter().cloned().collect();
        self.board = Arc::new(restored.board.clone());
        self.rounds_since_todo = restored.rounds_since_todo;
        self.transcript = imbl::Vector::new();
        for message in &restored.history {
            self.transcript.extend(entries_of(message));
        }
        for warning in &restored.warnings {
            self.transcript.push_back(Entry::Notice { text: warning.clone() });
        }
        if let Some(last) = self.history.last().filter(|message| message.role == Role::Assistant) {
            let results: Vec<ContentBlock> = last
                .tool_uses()
                .map(|(id, _, _)| ContentBlock::ToolResult {
                    tool_use_id: id.to_owned(),
                    content: interrupted.to_owned(),
                    is_error: true,
                })
                .collect();
            if !results.is_empty() {
                self.push_message(Message { role: Role::User, content: results });
                self.transcript.push_back(Entry::Notice {
                    text: "The last tool calls were interrupted when keel stopped.".into(),
                });
            }
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

    /// Sends the current state to the front end, if one listens.
    pub fn publish(&mut self, outbox: &Outbox) {
        if outbox.snapshots.is_closed() {
            return;
        }
        let snapshot = self.snapshot();
        let _ = outbox.snapshots.send(snapshot);
    }

    pub fn note(&mut self, entry: Entry) {
        self.transcript.push_back(entry);
    }

    /// Appends to the history and saves it.
    pub fn push_message(&mut self, message: Message) {
        self.record(&Record::Message { message: message.clone() });
        self.history.push_back(message);
    }

    /// Replaces the board after a valid update and saves it.
    pub fn set_board(&mut self, board: Arc<crate::todo::TodoBoard>) {
        self.record(&Record::Board { items: board.items().to_vec() });
        self.board = board;
    }

    /// Sets the reminder counter and saves it.
    pub fn set_rounds_since_todo(&mut self, rounds: u32) {
        if rounds != self.rounds_since_todo {
            self.rounds_since_todo = rounds;
            self.record(&Record::Rounds { rounds_since_todo: rounds });
        }
    }

    /// Replaces the tool run with the same id (searching from the newest).
    pub fn update_tool(&mut self, run: ToolRun) {
        let found = self.tools.iter().rposition(|existing| existing.id == run.id);
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

/// The transcript lines one history message stands for.
fn entries_of(message: &Message) -> Vec<Entry> {
    message
        .content
        .iter()
        .filter_map(|block| match (message.role, block) {
            (Role::User, ContentBlock::Text { text }) => Some(Entry::User { text: text.clone() }),
            (Role::Assistant, ContentBlock::Text { text }) if !text.is_empty() => {
                Some(Entry::Assistant { text: text.clone() })
            }
            (_, ContentBlock::ToolUse { id, name, input }) => Some(Entry::ToolCall {
                id: id.clone(),
                name: name.clone(),
                summary: super::turn::call_summary(name, input),
            }),
            (_, ContentBlock::Reminder { text }) => Some(Entry::Reminder { text: text.clone() }),
            _ => None,
        })
        .collect()
}
