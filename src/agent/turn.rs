//! One user turn: model requests and tool rounds until the model answers without asking for a
//! tool, the person interrupts, or the round limit is hit.
//!
//! Invariants kept here: a partial answer never enters the history; every tool call in the
//! history gets exactly one result (an interrupted or declined call gets one saying so); the
//! reminder goes after the tool results of the round that made it due.

use super::approval::{DECLINED, Verdict};
use super::event::{AgentEvent, TurnOutcome};
use super::reminder;
use super::snapshot::{Activity, ApprovalRequest, Entry, ToolRun, ToolStatus};
use super::state::{Outbox, State};
use super::task::{Agent, NO_PROVIDER_HELP, Stop};
use super::{Command, Decision};
use crate::llm::{ChatRequest, Completion, LlmError, StreamEvent, tool_input};
use crate::message::{ContentBlock, Message, Role};
use crate::session::Record;
use crate::todo;
use crate::tools::{ToolContext, ToolOutcome, Tools, preview};
use serde_json::Value;
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// The result the model gets for a tool call the person interrupted.
pub const INTERRUPTED: &str = "interrupted by user";
/// How much of a running command's newest output the tool pane keeps.
const LIVE_OUTPUT_TAIL_BYTES: usize = 64 * 1024;

/// How a request ended when it did not produce an answer.
enum Failure {
    Stopped(Stop),
    Provider(LlmError),
    /// No model is configured (no API key).
    NotConfigured,
}

impl Agent {
    /// Runs one user turn to its end. Returns `Some(Stop::Quit)` when the task should end.
    /// With no prompt, the turn carries on from the history as it is (a resumed session whose
    /// last turn did not end); if the model already answered, there is nothing to do.
    pub(super) async fn run_turn(&mut self, prompt: Option<String>) -> Option<Stop> {
        self.undo.begin_turn();
        self.state.record(&Record::Turn);
        match prompt {
            Some(prompt) => {
                self.state.push_message(Message::user_text(prompt.clone()));
                self.state.note(Entry::User { text: prompt });
            }
            None => {
                if self.state.history.last().is_none_or(|last| last.role == Role::Assistant) {
                    let text = self.state.history.last().map(Message::text).unwrap_or_default();
                    self.finish_turn(TurnOutcome::Success, None, text, 0);
                    return None;
                }
                self.state
                    .note(Entry::Notice { text: "Carrying on where the session stopped.".into() });
            }
        }
        let mut rounds = 0;
        let mut last_text = String::new();
        let (outcome, error, stop) = loop {
            if rounds >= self.config.max_rounds {
                let text = format!(
                    "Stopped after {rounds} model responses in this turn (the limit set by \
                     --max-rounds or max_rounds). Send a message to let it go on."
                );
                break (TurnOutcome::MaxRounds, Some(text), None);
            }
            rounds += 1;
            let completion = match self.request().await {
                Ok(completion) => completion,
                Err(Failure::Stopped(stop)) => break (TurnOutcome::Interrupted, None, Some(stop)),
                Err(Failure::Provider(err)) => {
                    break (TurnOutcome::Error, Some(err.to_string()), None);
                }
                Err(Failure::NotConfigured) => {
                    break (TurnOutcome::Error, Some(NO_PROVIDER_HELP.to_owned()), None);
                }
            };
            let text = Message::assistant(completion.content.clone()).text();
            if !text.is_empty() {
                last_text.clone_from(&text);
            }
            let calls: Vec<(String, String, Value)> = completion
                .content
                .iter()
                .filter_map(|block| match block {
                    ContentBlock::ToolUse { id, name, input } => {
                        Some((id.clone(), name.clone(), input.clone()))
                    }
                    _ => None,
                })
                .collect();
            self.accept_answer(completion, text);
            if calls.is_empty() {
                break (TurnOutcome::Success, None, None);
            }
            if let Some(stop) = self.run_tools(calls).await {
                break (TurnOutcome::Interrupted, None, Some(stop));
            }
        };
        self.finish_turn(outcome, error, last_text, rounds);
        stop
    }

    /// Puts a finished answer into the history and tells the front ends.
    fn accept_answer(&mut self, completion: Completion, text: String) {
        self.state.streaming = None;
        self.state.usage.add(completion.usage);
        self.event(AgentEvent::Usage {
            input_tokens: completion.usage.input_tokens,
            output_tokens: completion.usage.output_tokens,
            total_input_tokens: self.state.usage.input_tokens,
            total_output_tokens: self.state.usage.output_tokens,
        });
        if completion.content.is_empty() {
            self.state.note(Entry::Notice { text: "The model returned an empty answer.".into() });
            return;
        }
        if !text.is_empty() {
            self.state.note(Entry::Assistant { text: text.clone() });
            self.event(AgentEvent::AssistantText { text });
        }
        self.state.push_message(Message::assistant(completion.content));
    }

    fn finish_turn(
        &mut self,
        outcome: TurnOutcome,
        error: Option<String>,
        text: String,
        rounds: u32,
    ) {
        self.state.streaming = None;
        self.state.activity = Activity::Idle;
        self.state.pending_approval = None;
        match (&outcome, &error) {
            (_, Some(error)) => self.state.note(Entry::Error { text: error.clone() }),
            (TurnOutcome::Interrupted, None) => {
                self.state.note(Entry::Notice { text: "Interrupted.".into() });
            }
            _ => {}
        }
        self.event(AgentEvent::Result {
            outcome,
            text,
            rounds,
            done: self.state.board.done(),
            total: self.state.board.total(),
            error,
        });
        self.state.publish(&self.outbox);
    }

    /// Sends the history to the model and waits for the whole answer, showing it as it streams
    /// and listening for the person meanwhile.
    async fn request(&mut self) -> Result<Completion, Failure> {
        let Some(provider) = &self.provider else {
            return Err(Failure::NotConfigured);
        };
        self.state.activity = Activity::Thinking;
        self.state.publish(&self.outbox);
        let history = self.state.history.clone();
        let request = ChatRequest {
            system: &self.config.system_prompt,
            messages: &history,
            tools: &self.specs,
            max_tokens: self.config.max_tokens,
        };
        let (stream_tx, mut stream_rx) = mpsc::unbounded_channel();
        let completion = provider.complete(&request, &stream_tx);
        tokio::pin!(completion);
        let mut partial = String::new();
        loop {
            tokio::select! {
                biased;
                command = self.inbox.recv() => {
                    if let Some(stop) = during_turn(&mut self.state, &self.outbox, command) {
                        self.state.streaming = None;
                        return Err(Failure::Stopped(stop));
                    }
                }
                Some(event) = stream_rx.recv() => {
                    on_stream_event(&mut self.state, &self.outbox, &mut partial, event);
                }
                result = &mut completion => {
                    self.state.streaming = None;
                    return result.map_err(Failure::Provider);
                }
            }
        }
    }

    /// Runs one round of tool calls in order and appends their results (and the reminder, when
    /// due) to the history. Returns why it stopped early, if it did.
    async fn run_tools(&mut self, calls: Vec<(String, String, Value)>) -> Option<Stop> {
        let mut results = Vec::with_capacity(calls.len());
        let mut called_todo = false;
        let mut stop = None;
        for (id, name, input) in calls {
            self.state.note(Entry::ToolCall {
                id: id.clone(),
                name: name.clone(),
                summary: call_summary(&name, &input),
            });
            if stop.is_some() {
                self.record_result(
                    (&id, &name, &input),
                    ToolStatus::Interrupted,
                    &skipped(),
                    Instant::now(),
                );
                results.push(result_block(&id, &skipped()));
                continue;
            }
            self.event(AgentEvent::ToolStart {
                id: id.clone(),
                name: name.clone(),
                input: input.clone(),
            });
            let started = Instant::now();
            let (status, outcome) = if name == todo::TOOL_NAME {
                called_todo = true;
                self.update_board(&input)
            } else {
                match self.run_tool(&id, &name, &input).await {
                    Ok(done) => done,
                    Err((status, outcome, why)) => {
                        stop = Some(why);
                        (status, outcome)
                    }
                }
            };
            self.record_result((&id, &name, &input), status, &outcome, started);
            for change in &outcome.changes {
                self.state.record(&Record::change(change));
            }
            self.undo.record(outcome.changes.iter().cloned());
            results.push(result_block(&id, &outcome));
        }
        self.state.set_rounds_since_todo(reminder::after_round(
            self.state.rounds_since_todo,
            called_todo,
        ));
        let remind = stop.is_none()
            && reminder::is_due(
                self.state.rounds_since_todo,
                self.config.nag_threshold,
                &self.state.board,
            );
        if remind {
            let text = self.config.nag_message.clone();
            self.event(AgentEvent::Reminder {
                text: text.clone(),
                rounds_since_todo: self.state.rounds_since_todo,
            });
            self.state.note(Entry::Reminder { text: text.clone() });
            results.push(ContentBlock::Reminder { text });
            self.state.rounds_since_todo = 0;
        }
        self.state.push_message(Message { role: Role::User, content: results });
        self.state.publish(&self.outbox);
        stop
    }

    /// Applies a `todo` update; a rejected one leaves the board as it was.
    fn update_board(&mut self, input: &Value) -> (ToolStatus, ToolOutcome) {
        let mut board = (*self.state.board).clone();
        match board.update(input) {
            Ok(rendered) => {
                self.state.set_board(Arc::new(board));
                self.event(AgentEvent::Todo {
                    items: self.state.board.items().to_vec(),
                    done: self.state.board.done(),
                    total: self.state.board.total(),
                });
                (ToolStatus::Succeeded, ToolOutcome::ok(rendered))
            }
            Err(err) => (ToolStatus::Failed, ToolOutcome::error(err.to_string())),
        }
    }

    /// Asks for approval if the mode wants it, then runs a workspace tool while listening for the
    /// person. `Err` carries the outcome and why the turn must stop after it.
    async fn run_tool(
        &mut self,
        id: &str,
        name: &str,
        input: &Value,
    ) -> Result<(ToolStatus, ToolOutcome), (ToolStatus, ToolOutcome, Stop)> {
        if let Some(problem) = argument_problem(input) {
            return Ok((ToolStatus::Failed, ToolOutcome::error(problem)));
        }
        match self.approvals.check(name, input) {
            Verdict::Run => {}
            Verdict::Refuse(why) => return Ok((ToolStatus::Declined, ToolOutcome::error(why))),
            Verdict::Ask => match self.ask(id, name, input).await {
                Decision::Once => {}
                Decision::Always => self.approvals.allow_always(name, input),
                Decision::Deny => {
                    return Ok((ToolStatus::Declined, ToolOutcome::error(DECLINED)));
                }
                Decision::DenyAndStop => {
                    return Err((
                        ToolStatus::Declined,
                        ToolOutcome::error(DECLINED),
                        Stop::Interrupted,
                    ));
                }
            },
        }

        let started = Instant::now();
        self.state.activity = Activity::RunningTool { name: name.to_owned() };
        self.state.update_tool(running(id, name, input, started, ""));
        self.state.publish(&self.outbox);

        let cancel = CancellationToken::new();
        let (live_tx, mut live_rx) = mpsc::unbounded_channel();
        let ctx = ToolContext { cancel: cancel.clone(), live_output: Some(live_tx) };
        let run = self.tools.run(name, input, &ctx);
        tokio::pin!(run);
        let mut live = String::new();
        let mut stop = None;
        let outcome = loop {
            tokio::select! {
                outcome = &mut run => break outcome,
                Some(chunk) = live_rx.recv() => {
                    live.push_str(&chunk);
                    keep_tail(&mut live, LIVE_OUTPUT_TAIL_BYTES);
                    self.state.update_tool(running(id, name, input, started, &live));
                    self.state.publish(&self.outbox);
                }
                command = self.inbox.recv(), if stop.is_none() => {
                    if let Some(why) = during_turn(&mut self.state, &self.outbox, command) {
                        cancel.cancel();
                        stop = Some(why);
                    }
                }
            }
        };
        self.state.activity = Activity::Thinking;
        match stop {
            Some(why) => {
                let mut outcome = outcome;
                outcome.is_error = true;
                if !outcome.for_model.contains(INTERRUPTED) {
                    outcome.for_model = format!("{INTERRUPTED}\n{}", outcome.for_model);
                }
                Err((ToolStatus::Interrupted, outcome, why))
            }
            None if outcome.is_error => Ok((ToolStatus::Failed, outcome)),
            None => Ok((ToolStatus::Succeeded, outcome)),
        }
    }

    /// Shows the approval request and waits for the person's answer.
    async fn ask(&mut self, id: &str, name: &str, input: &Value) -> Decision {
        self.state.pending_approval = Some(Arc::new(ApprovalRequest {
            id: id.to_owned(),
            tool: name.to_owned(),
            summary: call_summary(name, input),
            diff: preview::preview(&self.tools, name, input),
        }));
        self.state.activity = Activity::AwaitingApproval;
        self.state.publish(&self.outbox);
        let decision = loop {
            match self.inbox.recv().await {
                Some(Command::Approve { id: answered, decision }) if answered == id => {
                    break decision;
                }
                Some(Command::Cancel) => break Decision::DenyAndStop,
                None | Some(Command::Quit) => {
                    // Leaving: refuse, and let the loop above notice the closed channel.
                    break Decision::DenyAndStop;
                }
                Some(Command::Submit(prompt)) => {
                    self.state.queued.push_back(prompt);
                    self.state.publish(&self.outbox);
                }
                Some(_) => {}
            }
        };
        self.state.pending_approval = None;
        self.state.publish(&self.outbox);
        decision
    }

    /// Updates the tool pane and tells printing front ends how a call ended. Board updates stay
    /// out of the tool pane: the board itself is pinned beside it.
    fn record_result(
        &mut self,
        call: (&str, &str, &Value),
        status: ToolStatus,
        outcome: &ToolOutcome,
        started: Instant,
    ) {
        let (id, name, input) = call;
        let duration = started.elapsed();
        if name != todo::TOOL_NAME {
            self.state.update_tool(ToolRun {
                id: id.to_owned(),
                name: name.to_owned(),
                summary: call_summary(name, input),
                status,
                exit_code: outcome.exit_code,
                started,
                duration: Some(duration),
                output: outcome.for_display.as_str().into(),
            });
        }
        self.event(AgentEvent::ToolEnd {
            id: id.to_owned(),
            name: name.to_owned(),
            is_error: outcome.is_error,
            exit_code: outcome.exit_code,
            duration_ms: u64::try_from(duration.as_millis()).unwrap_or(u64::MAX),
            output: outcome.for_model.clone(),
        });
    }
}

/// Handles a command that arrives while a turn runs. Returns why the turn must stop, if it must.
fn during_turn(state: &mut State, outbox: &Outbox, command: Option<Command>) -> Option<Stop> {
    match command {
        None | Some(Command::Quit) => Some(Stop::Quit),
        Some(Command::Cancel) => Some(Stop::Interrupted),
        Some(Command::Submit(prompt)) => {
            state.queued.push_back(prompt);
            state.publish(outbox);
            None
        }
        Some(Command::Clear | Command::Undo | Command::StartDemo | Command::Continue) => {
            state.note(Entry::Notice {
                text: "Wait for the turn to end, or press Esc to interrupt it first.".into(),
            });
            state.publish(outbox);
            None
        }
        Some(Command::Approve { .. }) => None,
    }
}

fn on_stream_event(state: &mut State, outbox: &Outbox, partial: &mut String, event: StreamEvent) {
    match event {
        StreamEvent::TextDelta(delta) => {
            partial.push_str(&delta);
            state.streaming = Some(partial.as_str().into());
            state.activity = Activity::Thinking;
        }
        StreamEvent::ToolUseStart { .. } => {}
        StreamEvent::Retrying { attempt, delay, reason } => {
            partial.clear();
            state.streaming = None;
            state.activity = Activity::Retrying {
                attempt,
                until: Instant::now() + delay,
                reason: reason.clone(),
            };
            outbox.event(AgentEvent::Retry {
                attempt,
                delay_ms: u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
                reason,
            });
        }
    }
    state.publish(outbox);
}

/// What is wrong with a tool call's arguments before any tool looks at them. Providers keep
/// arguments that were not a JSON object under a marker (see `llm::tool_input`); the scripted
/// model may hand over any value.
fn argument_problem(input: &Value) -> Option<String> {
    if let Some(message) = tool_input::invalid_input_message(input) {
        return Some(message);
    }
    let raw = match input {
        Value::Object(_) => return None,
        Value::String(raw) => raw.clone(),
        other => other.to_string(),
    };
    tool_input::invalid_input_message(&tool_input::parse(&raw))
}

/// One line naming what a call does: the command, the path, or the board update.
pub(super) fn call_summary(name: &str, input: &Value) -> String {
    if name == todo::TOOL_NAME {
        todo::summarize_update(input)
    } else {
        Tools::summary(name, input)
    }
}

fn running(id: &str, name: &str, input: &Value, started: Instant, output: &str) -> ToolRun {
    ToolRun {
        id: id.to_owned(),
        name: name.to_owned(),
        summary: call_summary(name, input),
        status: ToolStatus::Running,
        exit_code: None,
        started,
        duration: None,
        output: output.into(),
    }
}

/// The result for calls after the one the person interrupted.
fn skipped() -> ToolOutcome {
    ToolOutcome::error(INTERRUPTED)
}

fn result_block(id: &str, outcome: &ToolOutcome) -> ContentBlock {
    ContentBlock::ToolResult {
        tool_use_id: id.to_owned(),
        content: outcome.for_model.clone(),
        is_error: outcome.is_error,
    }
}

/// Drops the start of `text` so at most `limit` bytes remain, cutting at a character boundary.
fn keep_tail(text: &mut String, limit: usize) {
    if text.len() <= limit {
        return;
    }
    let mut cut = text.len() - limit;
    while !text.is_char_boundary(cut) {
        cut += 1;
    }
    text.drain(..cut);
}
