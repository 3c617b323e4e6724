//! What the parent hears from a running child, and learns: its events (relayed to the front
//! ends under its id, and read for what it does now, what it has done, what it spent and how it
//! ended), its snapshots (its conversation for the screen, and the approval it waits for) and its
//! session log's records (kept with the session's, and the file changes among them carried back
//! to the parent's call for undo).

use super::spawn::Ends;
use crate::agent::command::Command;
use crate::agent::event::{AgentEvent, TurnOutcome};
use crate::agent::journal::Record;
use crate::agent::snapshot::ChildStatus;
use crate::agent::snapshot::Snapshot;
use crate::agent::snapshot::{Activity, ApprovalRequest};
use crate::agent::turn::Turn;
use crate::agent::turn::round::running;
use crate::message::Usage;
use crate::runtime::change::FileChange;
use crate::tools::ToolCall;
use crate::tools::task::Delegation;
use std::future::{Future, poll_fn};
use std::sync::Arc;
use std::task::Poll;
use std::time::Instant;

/// What separates a child's id from its call's in the id of an approval it asks for.
const ASKING_SEPARATOR: char = ':';

/// A child the parent runs, and what it has learned of it.
#[derive(Debug)]
pub(super) struct Child {
    /// Its id, once it starts (`a1`, `a2`, …).
    pub id: String,
    /// The `task` call it answers.
    pub call: ToolCall,
    pub delegation: Delegation,
    pub ends: Ends,
    /// When it started; `None` while it waits for a place among the explorers running.
    pub started: Option<Instant>,
    pub status: ChildStatus,
    /// One line per call it finished: what ran and how it ended.
    pub did: Vec<String>,
    /// Its calls taken up and not ended yet: (id, line).
    pub running: Vec<(String, String)>,
    /// How its turn ended, once it has.
    pub ended: Option<Ended>,
    pub changes: Vec<FileChange>,
    /// The approval it waits for, as it asked.
    pub asking: Option<Arc<ApprovalRequest>>,
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
pub(super) enum Heard {
    Event(AgentEvent),
    Snapshot(Box<Snapshot>),
    Record(Record),
}

impl Child {
    pub fn new(call: ToolCall, delegation: Delegation, ends: Ends) -> Self {
        Self {
            id: String::new(),
            call,
            delegation,
            ends,
            started: None,
            status: ChildStatus::Running,
            did: Vec::new(),
            running: Vec::new(),
            ended: None,
            changes: Vec::new(),
            asking: None,
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

    /// What it has queued besides, taken without waiting: what remains once its turn is over.
    pub fn drain(&mut self) -> Vec<Heard> {
        let ends = &mut self.ends;
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
}

/// The next thing any of `children` says, with the child's index.
pub(super) fn next_heard(children: &mut [Child]) -> impl Future<Output = (usize, Heard)> + '_ {
    poll_fn(move |cx| {
        for (index, child) in children.iter_mut().enumerate() {
            let ends = &mut child.ends;
            if let Poll::Ready(Some(record)) = ends.records.poll_recv(cx) {
                return Poll::Ready((index, Heard::Record(record)));
            }
            if let Poll::Ready(Some(event)) = ends.events.poll_recv(cx) {
                return Poll::Ready((index, Heard::Event(event)));
            }
            if let Some(snapshots) = &mut ends.snapshots
                && let Poll::Ready(Some(snapshot)) = snapshots.poll_recv(cx)
            {
                return Poll::Ready((index, Heard::Snapshot(Box::new(snapshot))));
            }
        }
        Poll::Pending
    })
}

/// The id the person answers child `child`'s approval `call` under.
fn asking_id(child: &str, call: &str) -> String {
    format!("{child}{ASKING_SEPARATOR}{call}")
}

impl Turn<'_> {
    /// Takes in what a child said; returns whether the approval it waits for changed (the
    /// caller shows the person the one to answer now, [`Turn::show_asking`]).
    pub(super) fn heard(&mut self, child: &mut Child, heard: Heard) -> bool {
        match heard {
            Heard::Record(record) => {
                if let Some(change) = record.file_change() {
                    child.changes.push(change);
                }
                self.state.record_child(&child.id, record);
            }
            Heard::Snapshot(snapshot) => {
                let asking = snapshot.pending_approval.clone();
                let changed = asking.as_ref().map(|request| &request.id)
                    != child.asking.as_ref().map(|request| &request.id);
                child.asking = asking;
                self.state.update_child(&child.id, |view| view.view = Some(snapshot));
                if !changed {
                    self.state.publish(self.outbox);
                }
                return changed;
            }
            Heard::Event(event) => {
                self.learn(child, &event);
                self.state
                    .emit(AgentEvent::Child { agent: child.id.clone(), event: Box::new(event) });
                self.state.flush(self.outbox);
            }
        }
        false
    }

    /// What a child's event tells of it: what it runs, what it did, what it spent, how it ended.
    fn learn(&mut self, child: &mut Child, event: &AgentEvent) {
        match event {
            AgentEvent::ToolStart { id, name, summary, .. } => {
                child.running.push((id.clone(), format!("{name} {summary}")));
            }
            AgentEvent::ToolEnd { id, is_error, exit_code, output, .. } => {
                let at = child.running.iter().position(|(running, _)| running == id);
                let line = at.map(|at| child.running.remove(at).1).unwrap_or_default();
                let first = output.lines().next().unwrap_or_default();
                let how = match exit_code {
                    Some(code) => format!("exit {code}"),
                    None if *is_error => format!("failed: {}", crate::visible::one_line(first)),
                    None => "done".to_owned(),
                };
                child.did.push(format!("{line} → {how}"));
            }
            AgentEvent::Usage { .. } => {
                child.rounds += 1;
                child.usage.add(event.usage().unwrap_or_default());
            }
            AgentEvent::Result { outcome, text, error, .. } => {
                child.ended =
                    Some(Ended { outcome: *outcome, text: text.clone(), error: error.clone() });
            }
            _ => return,
        }
        if let Some(started) = child.started {
            self.state.update_tool(running(&child.call, started, &child.progress()));
        }
        let tool = child.running.last().map(|(_, line)| line.clone());
        let (rounds, usage) = (child.rounds, child.usage);
        self.state.update_child(&child.id, |view| {
            view.tool = tool;
            view.rounds = rounds;
            view.usage = usage;
        });
    }

    /// Shows the person the first approval a child waits for, naming the child, or none: the
    /// parent's own approval box is the one place a child's ask is seen and answered.
    pub(super) fn show_asking(&mut self, children: &[Child]) {
        let asking = children.iter().find_map(|child| {
            let request = child.asking.as_ref()?;
            let agent = self.state.view().children.iter().find(|view| *view.id == child.id)?;
            Some(ApprovalRequest {
                id: asking_id(&child.id, &request.id),
                agent: Some(agent.describe()),
                ..ApprovalRequest::clone(request)
            })
        });
        let activity = if asking.is_some() {
            Activity::AwaitingApproval
        } else {
            Activity::RunningTool { name: crate::tools::task::TOOL_NAME.to_owned() }
        };
        self.state.set_pending_approval(asking.map(Arc::new));
        self.state.set_activity(activity);
        self.state.publish(self.outbox);
    }
}

/// Hands the person's answer to the child that asked; `false` when no child waits for `id`.
pub(super) fn relay_answer(
    children: &[Child],
    id: &str,
    command: impl Fn(String) -> Command,
) -> bool {
    let Some((agent, call)) = id.split_once(ASKING_SEPARATOR) else {
        return false;
    };
    let Some(child) = children.iter().find(|child| child.id == agent) else {
        return false;
    };
    if child.asking.as_ref().is_none_or(|request| request.id != call) {
        return false;
    }
    child.ends.commands.send(command(call.to_owned())).is_ok()
}
