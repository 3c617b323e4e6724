//! The parent's run stage for `task` calls: each call's board item started through the board's
//! validation, its child run while the parent listens — relaying the person's answers to the
//! child that asked and their interrupt to every child, keeping the board editable and new
//! prompts queued — and, once it ends, the item completed through the same validation when the
//! child succeeded, and the answer the parent's model reads (`report`).
//!
//! One call runs one child; the explorers of one response (`runs_together`) run side by side, at
//! most `max_parallel_agents` at a time, each answering its own call. The children are futures
//! of the parent's task, borrowing the same services: no thread and no second set of watchers.

use super::brief;
use super::report::{self, Cut};
use super::watch::{Child, next_heard, relay_answer};
use crate::agent::command::Command;
use crate::agent::conversation::{Conversation, Link};
use crate::agent::event::{AgentEvent, INTERRUPTED, TurnOutcome};
use crate::agent::services::Services;
use crate::agent::snapshot::{Activity, ToolStatus};
use crate::agent::snapshot::{ChildAgent, ChildStatus};
use crate::agent::turn::road::Finished;
use crate::agent::turn::{Stop, Turn, during_turn};
use crate::board::Status;
use crate::tools::task::Delegation;
use crate::tools::{ToolCall, ToolOutcome};
use futures_util::future::BoxFuture;
use futures_util::stream::{FuturesUnordered, StreamExt};
use serde_json::json;
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Instant;

/// A child ready to start: which it is, its conversation and link, its first message.
struct Launch {
    index: usize,
    conversation: Conversation,
    link: Link,
    message: String,
}

impl<'a> Turn<'a> {
    /// Whether `call` is an explorer that runs beside the others of its response.
    pub(in crate::agent) fn runs_together(&self, call: &ToolCall) -> bool {
        let delegates = self
            .toolset
            .find(&call.name)
            .is_some_and(|tool| tool.effect() == crate::tools::Effect::Delegates);
        delegates && Delegation::decode(&call.input).is_ok_and(|task| task.runs_together())
    }

    /// Runs the children of `calls` (approved `task` calls) and answers each.
    pub(in crate::agent) async fn delegate(
        &mut self,
        calls: &[&ToolCall],
    ) -> Vec<(Finished, Option<Stop>)> {
        let mut answers: Vec<Option<(Finished, Option<Stop>)>> =
            calls.iter().map(|_| None).collect();
        let mut children = Vec::new();
        let mut slots = Vec::new();
        let mut launches = VecDeque::new();
        for (slot, call) in calls.iter().enumerate() {
            match self.prepare_child(call).await {
                Ok((child, conversation, link, message)) => {
                    let index = children.len();
                    launches.push_back(Launch { index, conversation, link, message });
                    children.push(child);
                    slots.push(slot);
                }
                Err(why) => {
                    answers[slot] = Some(((ToolStatus::Failed, ToolOutcome::error(why)), None));
                }
            }
        }
        let stop = self.run_children(&mut children, launches).await;
        for (child, slot) in children.iter().zip(slots) {
            answers[slot] = Some((self.answer(child, stop).await, stop));
        }
        answers
            .into_iter()
            .map(|answer| {
                answer.unwrap_or_else(|| {
                    ((ToolStatus::Failed, ToolOutcome::error("The child agent never ran.")), None)
                })
            })
            .collect()
    }

    /// A child for `call`, its item started: or why it cannot run (the call's error).
    async fn prepare_child(
        &mut self,
        call: &ToolCall,
    ) -> Result<(Child, Conversation, Link, String), String> {
        let delegation = Delegation::decode(&call.input).map_err(|err| err.to_string())?;
        if let Some(item) = delegation.item() {
            self.start_item(item).await?;
        }
        let view = self.state.view();
        let request = brief::request_of(&view.history);
        let board = self.state.board_on().then_some(&*view.board);
        let message =
            brief::first_message(request.as_deref(), board, delegation.item(), &delegation.prompt);
        let (conversation, link, ends) = self.spawn_child(&delegation);
        Ok((Child::new(call.clone(), delegation, ends), conversation, link, message))
    }

    /// Starts board item `item` through the board's validation: blockers completed, no other
    /// item in progress. A refusal says why, and nothing is handed over.
    async fn start_item(&mut self, item: &str) -> Result<(), String> {
        if !self.state.board_on() {
            return Err("The board is off in this session (--no-todo), so there is no item to \
                        hand over: call task without an item."
                .to_owned());
        }
        match self.state.view().board.get(item).map(|entry| entry.status) {
            None => Err(format!(
                "Item #{item} is not on the board: add it with todo first, or call task without \
                 an item. Nothing was handed over."
            )),
            Some(Status::Completed) => Err(format!(
                "Item #{item} is already completed: hand over an open item, or call task \
                 without an item. Nothing was handed over."
            )),
            Some(Status::InProgress) => Ok(()),
            Some(Status::Pending) => {
                let start = json!({"update": [{"id": item, "status": "in_progress"}]});
                self.apply_board_update(&start).await.map(drop).map_err(|(why, _)| {
                    format!("Item #{item} cannot start: {why}. Nothing was handed over.")
                })
            }
        }
    }

    /// Runs the children as their places allow, listening to them and to the person, until
    /// every one has ended. Returns why the parent's turn must stop, if it must.
    async fn run_children(
        &mut self,
        children: &mut [Child],
        mut launches: VecDeque<Launch>,
    ) -> Option<Stop> {
        let services: &'a Services = self.services;
        let places = self.config.children.max_parallel.max(1);
        // The children read the parent's plan mode at each call: said now, and again after each
        // command the person sends while they run.
        self.bounds.set_plan_mode(self.state.view().plan_mode);
        let mut running = FuturesUnordered::new();
        let mut stop = None;
        while running.len() < places
            && let Some(launch) = launches.pop_front()
        {
            self.started(&mut children[launch.index]);
            running.push(run_child(launch, services));
        }
        while !running.is_empty() {
            tokio::select! {
                biased;
                (index, heard) = next_heard(children) => {
                    if self.heard(&mut children[index], heard) {
                        self.show_asking(children);
                    }
                }
                Some(index) = running.next() => {
                    for heard in children[index].drain() {
                        self.heard(&mut children[index], heard);
                    }
                    children[index].asking = None;
                    self.ended(&mut children[index], stop);
                    self.show_asking(children);
                    if stop.is_none()
                        && let Some(launch) = launches.pop_front()
                    {
                        self.started(&mut children[launch.index]);
                        running.push(run_child(launch, services));
                    }
                }
                command = self.inbox.recv(), if stop.is_none() => {
                    stop = self.relay(children, command);
                    self.bounds.set_plan_mode(self.state.view().plan_mode);
                }
            }
        }
        self.state.set_pending_approval(None);
        self.state.set_activity(Activity::Thinking);
        stop
    }

    /// A child starts: it takes its id, is shown and told (`agent_start`).
    fn started(&mut self, child: &mut Child) {
        child.id = self.state.next_child_id();
        let began = Instant::now();
        child.started = Some(began);
        let item = child.delegation.item().map(str::to_owned);
        let label = child.delegation.label();
        let kind = child.delegation.kind();
        self.state.add_child(ChildAgent {
            id: child.id.as_str().into(),
            call_id: child.call.id.as_str().into(),
            label: label.as_str().into(),
            item: item.as_deref().map(Arc::from),
            kind,
            status: ChildStatus::Running,
            tool: None,
            rounds: 0,
            usage: crate::message::Usage::default(),
            view: None,
        });
        self.state.set_activity(Activity::RunningTool { name: child.call.name.clone() });
        self.emit(AgentEvent::AgentStart {
            agent: child.id.clone(),
            call_id: child.call.id.clone(),
            kind: kind.as_str().to_owned(),
            label,
            item,
        });
        self.state.publish(self.outbox);
    }

    /// A child's turn is over: how it stands, shown and told (`agent_end`).
    fn ended(&mut self, child: &mut Child, stop: Option<Stop>) {
        child.status = match (&child.ended, stop) {
            (Some(ended), _) if ended.outcome == TurnOutcome::Success => ChildStatus::Done,
            (_, Some(_)) => ChildStatus::Interrupted,
            (Some(ended), _) => match ended.outcome {
                TurnOutcome::MaxRounds => ChildStatus::Stopped,
                TurnOutcome::Interrupted => ChildStatus::Interrupted,
                _ => ChildStatus::Failed,
            },
            (None, None) => ChildStatus::Failed,
        };
        let status = child.status;
        self.state.update_child(&child.id, |view| {
            view.status = status;
            view.tool = None;
        });
        let error =
            (status != ChildStatus::Done).then(|| report::why_stopped(child, stop.map(cut_of)));
        self.emit(AgentEvent::AgentEnd {
            agent: child.id.clone(),
            status,
            rounds: child.rounds,
            input_tokens: child.usage.input_tokens,
            output_tokens: child.usage.output_tokens,
            error,
        });
    }

    /// A command from the person while children run: an answer goes to the child that asked,
    /// an interrupt (or quitting) to every child; the rest is taken as during any turn.
    fn relay(&mut self, children: &[Child], command: Option<Command>) -> Option<Stop> {
        let stop = match command {
            Some(Command::Approve { id, decision }) => {
                relay_answer(children, &id, |call| Command::Approve { id: call, decision });
                return None;
            }
            Some(Command::Cancel) => (Stop::Interrupted, Command::Cancel),
            None | Some(Command::Quit) => (Stop::Quit, Command::Quit),
            other => return during_turn(self.state, self.outbox, self.services, other),
        };
        for child in children.iter().filter(|child| child.started.is_some()) {
            let _ = child.ends.commands.send(stop.1.clone());
        }
        Some(stop.0)
    }

    /// The answer to a child's call: its report (and the board, its item completed), or the
    /// error that says why it stopped.
    async fn answer(&mut self, child: &Child, stop: Option<Stop>) -> Finished {
        if child.started.is_none() {
            let why =
                format!("{INTERRUPTED}: the turn was interrupted before this child agent started.");
            return (ToolStatus::Interrupted, ToolOutcome::error(why));
        }
        let mut outcome = if child.status == ChildStatus::Done {
            self.completed(child).await
        } else {
            let why = report::why_stopped(child, stop.map(cut_of));
            let mut text = report::failure(child, &why);
            if stop == Some(Stop::Interrupted) {
                text = format!("{INTERRUPTED}\n{text}");
            }
            ToolOutcome::error(text)
        };
        outcome.for_display = format!("{}\n\n{}", child.progress(), outcome.for_display);
        outcome.changes.clone_from(&child.changes);
        let status = match (outcome.is_error, child.status) {
            (false, _) => ToolStatus::Succeeded,
            (true, ChildStatus::Interrupted) => ToolStatus::Interrupted,
            (true, _) => ToolStatus::Failed,
        };
        (status, outcome)
    }

    /// A child that finished: its item completed through the board's validation and its
    /// TaskCompleted hooks, and its report with the board; or, when the board (or a hook)
    /// refuses the completion, the report as an error.
    async fn completed(&mut self, child: &Child) -> ToolOutcome {
        let Some(item) = child.delegation.item() else {
            return ToolOutcome::ok(report::success(child, None));
        };
        let done = json!({"update": [{"id": item, "status": "completed"}]});
        match self.apply_board_update(&done).await {
            Ok(board) => {
                self.state.board_shown();
                ToolOutcome::ok(report::success(child, Some(&board)))
            }
            Err((why, _)) => ToolOutcome::error(format!(
                "The child agent {} finished, but item #{item} could not be completed: {why}. Its \
                 report:\n\n{}",
                child.id,
                report::success(child, None)
            )),
        }
    }
}

/// Why the parent stopped, as a child's report says it.
fn cut_of(stop: Stop) -> Cut {
    match stop {
        Stop::Interrupted => Cut::Interrupted,
        Stop::Quit => Cut::Quitting,
    }
}

/// A child's one turn, to its end; yields which child it was. Its conversation and channels end
/// with it.
fn run_child(launch: Launch, services: &Services) -> BoxFuture<'_, usize> {
    Box::pin(async move {
        let Launch { index, mut conversation, mut link, message } = launch;
        let mut turn = conversation.turn(&mut link, services);
        turn.tell_request_shape();
        let _ = turn.run(Some(message)).await;
        index
    })
}
