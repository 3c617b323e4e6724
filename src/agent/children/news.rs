//! What a running child tells its parent, as messages: the parent is the one owner of its
//! state, so a child's run (`Children::run`, inside the `task` call's run) changes nothing of it
//! and sends [`News`] instead, which the parent's run stage takes in ([`take`]) — the child's
//! row on the board's agents list, its progress in the tool pane, its events and records, and
//! the approval it asks for, shown in the parent's approval box until the person answers it
//! ([`Asking`]).

use crate::agent::command::{Command, Decision};
use crate::agent::event::AgentEvent;
use crate::agent::journal::Record;
use crate::agent::snapshot::{Activity, ApprovalRequest, ChildAgent, ChildStatus, Snapshot};
use crate::agent::state::{Outbox, State};
use crate::agent::turn::round::running;
use crate::message::Usage;
use crate::tools::ToolCall;
use crate::tools::task::Delegation;
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::mpsc::UnboundedSender;
use tokio::sync::oneshot;

/// What separates a child's id from its call's in the id of an approval it asks for.
const ASKING_SEPARATOR: char = ':';

/// What the parent learns of a child, in the order it happened.
pub(in crate::agent) enum News {
    /// A child has its place and starts: the parent names it, shows and tells it
    /// (`agent_start`), and answers with what the child is made from ([`Start`]).
    Starts { call: ToolCall, delegation: Delegation, answer: oneshot::Sender<Start> },
    /// An event of the child's, relayed under its id.
    Event { id: String, event: AgentEvent },
    /// The child's conversation, for the screen.
    Snapshot { id: String, snapshot: Box<Snapshot> },
    /// A record of the child's session log, kept with the parent's.
    Record { id: String, record: Record },
    /// What it does now and has done, for the tool pane and its row.
    Progress(Box<Progress>),
    /// It asks for an approval; the person's answer goes back on `commands`.
    Asks { id: String, request: Arc<ApprovalRequest>, commands: UnboundedSender<Command> },
    /// Its turn is over: how it stands, shown and told (`agent_end`).
    Ended { id: String, status: ChildStatus, rounds: u32, usage: Usage, error: Option<String> },
}

/// A child's progress, as its row and its call's line in the tool pane show it.
pub(in crate::agent) struct Progress {
    pub id: String,
    pub call: ToolCall,
    pub started: Instant,
    /// Its lines: what it did and what runs.
    pub text: String,
    /// What it runs now.
    pub tool: Option<String>,
    pub rounds: u32,
    pub usage: Usage,
}

/// What a child is made from, as the parent stands when it starts.
pub(in crate::agent) struct Start {
    /// Its id (`a1`, `a2`, …).
    pub id: String,
    /// The person's request for the turn (`brief::request_of`).
    pub request: Option<String>,
    /// The board, rendered for the child's brief, when the parent keeps one.
    pub board: Option<crate::board::Board>,
    pub plan_mode: bool,
    pub provider: String,
    pub model: String,
    pub wire_format: crate::llm::WireFormat,
    pub sandbox: Option<Arc<str>>,
    /// A front end draws the parent: the child builds snapshots for it.
    pub drawn: bool,
}

/// The approvals running children wait for, in the order they asked: the first is the one the
/// parent's approval box shows.
#[derive(Default)]
pub(in crate::agent) struct Asking {
    waiting: Vec<(String, Arc<ApprovalRequest>, UnboundedSender<Command>)>,
    /// The box shows a child's request (or did): cleared when the children are done.
    shown: bool,
}

impl Asking {
    /// Hands the person's answer to approval `id` to the child that asked; `false` when no child
    /// waits for it.
    pub fn relay(
        &mut self,
        state: &mut State,
        outbox: &Outbox,
        id: &str,
        decision: Decision,
    ) -> bool {
        let Some((agent, call)) = id.split_once(ASKING_SEPARATOR) else {
            return false;
        };
        let Some(at) = self
            .waiting
            .iter()
            .position(|(child, request, _)| child == agent && request.id == call)
        else {
            return false;
        };
        let (_, _, commands) = self.waiting.remove(at);
        let _ = commands.send(Command::Approve { id: call.to_owned(), decision });
        self.show(state, outbox);
        true
    }

    /// The box is left as no child asks: done when the children are.
    pub fn close(&mut self, state: &mut State) {
        if std::mem::take(&mut self.shown) {
            state.set_pending_approval(None);
        }
    }

    /// Shows the person the first approval a child waits for, naming the child, or none: the
    /// parent's own approval box is the one place a child's ask is seen and answered.
    fn show(&mut self, state: &mut State, outbox: &Outbox) {
        let asking = self.waiting.iter().find_map(|(child, request, _)| {
            let agent = state.view().children.iter().find(|view| *view.id == **child)?;
            Some(ApprovalRequest {
                id: format!("{child}{ASKING_SEPARATOR}{}", request.id),
                agent: Some(agent.describe()),
                check: None,
                ..ApprovalRequest::clone(request)
            })
        });
        let activity = if asking.is_some() {
            Activity::AwaitingApproval
        } else {
            Activity::RunningTool { name: crate::tools::names::TASK.model.to_owned() }
        };
        self.shown = true;
        state.set_pending_approval(asking.map(Arc::new));
        state.set_activity(activity);
        state.publish(outbox);
    }
}

/// Takes in what a child told: the parent's state changed as it says.
pub(in crate::agent) fn take(state: &mut State, outbox: &Outbox, asking: &mut Asking, news: News) {
    match news {
        News::Starts { call, delegation, answer } => {
            let _ = answer.send(start(state, outbox, &call, &delegation));
        }
        News::Record { id, record } => state.record_child(&id, record),
        News::Snapshot { id, snapshot } => {
            state.update_child(&id, |view| view.view = Some(snapshot));
            state.publish(outbox);
        }
        News::Event { id, event } => {
            state.emit(AgentEvent::Child { agent: id, event: Box::new(event) });
            state.flush(outbox);
        }
        News::Progress(progress) => {
            let Progress { id, call, started, text, tool, rounds, usage } = *progress;
            state.update_tool(running(&call, started, &text));
            state.update_child(&id, |view| {
                view.tool = tool;
                view.rounds = rounds;
                view.usage = usage;
            });
        }
        News::Asks { id, request, commands } => {
            asking.waiting.push((id, request, commands));
            asking.show(state, outbox);
        }
        News::Ended { id, status, rounds, usage, error } => {
            state.update_child(&id, |view| {
                view.status = status;
                view.tool = None;
            });
            state.emit(AgentEvent::AgentEnd {
                agent: id.clone(),
                status,
                rounds,
                input_tokens: usage.input_tokens,
                output_tokens: usage.output_tokens,
                error,
            });
            state.flush(outbox);
            asking.waiting.retain(|(child, _, _)| *child != id);
            asking.show(state, outbox);
        }
    }
}

/// A child starts: it takes its id, is shown and told (`agent_start`); what it is made from.
fn start(state: &mut State, outbox: &Outbox, call: &ToolCall, delegation: &Delegation) -> Start {
    let id = state.next_child_id();
    let item = delegation.item().map(str::to_owned);
    let label = delegation.label();
    let kind = delegation.kind();
    state.add_child(ChildAgent {
        id: id.as_str().into(),
        call_id: call.id.as_str().into(),
        label: label.as_str().into(),
        item: item.as_deref().map(Arc::from),
        kind,
        status: ChildStatus::Running,
        tool: None,
        rounds: 0,
        usage: Usage::default(),
        view: None,
    });
    state.set_activity(Activity::RunningTool { name: call.name.clone() });
    state.emit(AgentEvent::AgentStart {
        agent: id.clone(),
        call_id: call.id.clone(),
        kind: kind.as_str().to_owned(),
        label,
        item,
    });
    state.flush(outbox);
    state.publish(outbox);
    let view = state.view();
    Start {
        id,
        request: super::brief::request_of(&view.history),
        board: state.board_on().then(|| (*view.board).clone()),
        plan_mode: view.plan_mode,
        provider: view.provider.to_string(),
        model: view.model.to_string(),
        wire_format: view.wire_format,
        sandbox: view.sandbox.clone(),
        drawn: !outbox.snapshots.is_closed(),
    }
}
