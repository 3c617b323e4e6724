//! What a child's run hears from its child, and learns: its events (passed on to the parent
//! under its id, and read for what it does now, what it has done, what it spent and how it
//! ended), its snapshots (its conversation for the screen), its session log's records (kept
//! with the session's, and the file changes among them carried back to the `task` call for
//! undo), and the approvals it asks for.

use super::spawn::Ends;
use crate::agent::event::{AgentEvent, TurnOutcome};
use crate::agent::journal::Record;
use crate::agent::snapshot::{ApprovalRequest, ChildStatus, Snapshot};
use crate::message::Usage;
use crate::runtime::change::FileChange;
use crate::tools::ToolCall;
use crate::tools::task::Delegation;
use std::sync::Arc;
use std::time::Instant;

/// A child its run watches, and what it has learned of it.
#[derive(Debug)]
pub(super) struct Child {
    /// Its id (`a1`, `a2`, …).
    pub id: String,
    /// The `task` call it answers.
    pub call: ToolCall,
    pub delegation: Delegation,
    /// When it started.
    pub started: Instant,
    pub status: ChildStatus,
    /// One line per call it finished: what ran and how it ended.
    pub did: Vec<String>,
    /// Its calls taken up and not ended yet: (id, line).
    pub running: Vec<(String, String)>,
    /// How its turn ended, once it has.
    pub ended: Option<Ended>,
    pub changes: Vec<FileChange>,
    pub rounds: u32,
    pub usage: Usage,
}

/// How a child's turn ended, as its `result` event told.
#[derive(Debug, Clone)]
pub(super) struct Ended {
    pub outcome: TurnOutcome,
    /// Its last answer: the report.
    pub text: String,
    pub error: Option<String>,
}

/// One thing heard from a child.
#[derive(Debug)]
pub(super) enum Heard {
    Event(AgentEvent),
    Snapshot(Box<Snapshot>),
    Record(Record),
    /// An approval it waits for.
    Asks(Arc<ApprovalRequest>),
}

impl Child {
    pub fn new(id: String, call: ToolCall, delegation: Delegation) -> Self {
        Self {
            id,
            call,
            delegation,
            started: Instant::now(),
            status: ChildStatus::Running,
            did: Vec::new(),
            running: Vec::new(),
            ended: None,
            changes: Vec::new(),
            rounds: 0,
            usage: Usage::default(),
        }
    }

    /// What it does now and has done, in lines, for the parent's tool pane.
    pub fn progress(&self) -> String {
        let mut lines: Vec<String> =
            self.did.iter().map(|line| format!("{}: {line}", self.id)).collect();
        lines.extend(self.running.iter().map(|(_, line)| format!("{}: {line} …", self.id)));
        lines.join("\n")
    }

    /// What one of its log records tells: a file it changed, for undo.
    pub fn learn_record(&mut self, record: &Record) {
        if let Some(change) = record.file_change() {
            self.changes.push(change);
        }
    }

    /// What one of its events tells of it: what it runs, what it did, what it spent, how it
    /// ended. `true` when its progress changed.
    pub fn learn(&mut self, event: &AgentEvent) -> bool {
        match event {
            AgentEvent::ToolStart { id, name, summary, .. } => {
                self.running.push((id.clone(), format!("{name} {summary}")));
            }
            AgentEvent::ToolEnd { id, is_error, exit_code, output, .. } => {
                let at = self.running.iter().position(|(running, _)| running == id);
                let line = at.map(|at| self.running.remove(at).1).unwrap_or_default();
                let first = output.lines().next().unwrap_or_default();
                let how = match exit_code {
                    Some(code) => format!("exit {code}"),
                    None if *is_error => format!("failed: {}", crate::visible::one_line(first)),
                    None => "done".to_owned(),
                };
                self.did.push(format!("{line} → {how}"));
            }
            AgentEvent::Usage { .. } => {
                self.rounds += 1;
                self.usage.add(event.usage().unwrap_or_default());
            }
            AgentEvent::Result { outcome, text, error, .. } => {
                self.ended =
                    Some(Ended { outcome: *outcome, text: text.clone(), error: error.clone() });
            }
            _ => return false,
        }
        true
    }
}

/// The next thing a child says, from its channels; `None` once they are all closed.
pub(super) async fn next_heard(ends: &mut Ends) -> Option<Heard> {
    tokio::select! {
        biased;
        Some(record) = ends.records.recv() => Some(Heard::Record(record)),
        Some(event) = ends.events.recv() => Some(Heard::Event(event)),
        Some(request) = ends.asks.recv() => Some(Heard::Asks(request)),
        Some(snapshot) = recv_snapshot(&mut ends.snapshots) => Some(Heard::Snapshot(Box::new(snapshot))),
        else => None,
    }
}

/// The next snapshot, where the child sends them; never, where it does not.
async fn recv_snapshot(
    snapshots: &mut Option<tokio::sync::mpsc::UnboundedReceiver<Snapshot>>,
) -> Option<Snapshot> {
    match snapshots {
        Some(snapshots) => snapshots.recv().await,
        None => None,
    }
}

/// What a child has queued besides, taken without waiting: what remains once its turn is over.
pub(super) fn drain(ends: &mut Ends) -> Vec<Heard> {
    let mut heard = Vec::new();
    while let Ok(record) = ends.records.try_recv() {
        heard.push(Heard::Record(record));
    }
    while let Ok(event) = ends.events.try_recv() {
        heard.push(Heard::Event(event));
    }
    if let Some(snapshots) = &mut ends.snapshots {
        while let Ok(snapshot) = snapshots.try_recv() {
            heard.push(Heard::Snapshot(Box::new(snapshot)));
        }
    }
    heard
}
