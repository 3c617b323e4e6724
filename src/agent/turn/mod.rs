//! One user turn: model requests and tool rounds until the model answers without asking for a
//! tool, the person interrupts, or the round limit is hit.
//!
//! Invariants kept here and in `tool_round`: a partial answer never enters the history; every
//! tool call in the history gets exactly one result (an interrupted or declined call gets one
//! saying so); the reminder goes after the tool results of the round that made it due.

mod approval_prompt;
mod demo;
mod jobs_watch;
mod mcp_tools;
mod nested_repos;
mod output_limit;
pub(super) mod plan_mode;
mod repeated_step;
pub(super) mod task;
mod tool_round;
mod undo;

use super::context::ContextMeter;
use super::event::{AgentEvent, TurnOutcome};
use super::snapshot::Activity;
use super::state::{Outbox, State};
use super::{Command, board_edits};
use crate::llm::{ChatRequest, Completion, LlmError, StopReason, StreamEvent};
use crate::message::{ContentBlock, History, Message, Role, Usage};
use crate::tools::ToolCall;
use std::time::Instant;
use task::{Agent, NO_PROVIDER_HELP, Stop};
use tokio::sync::mpsc;

/// The result the model gets for a tool call the person interrupted.
pub const INTERRUPTED: &str = "interrupted by user";

/// How a turn ended, for the front ends.
struct TurnEnd {
    outcome: TurnOutcome,
    error: Option<String>,
    /// The model's last answer (the parts of a continued one joined).
    text: String,
    rounds: u32,
    /// Why the last response stopped; `None` when there was none.
    stop_reason: Option<StopReason>,
}

impl TurnEnd {
    /// A turn that made no request.
    fn new(outcome: TurnOutcome, text: String) -> Self {
        Self { outcome, error: None, text, rounds: 0, stop_reason: None }
    }
}

/// How a request ended when it did not produce an answer.
pub(super) enum Failure {
    Stopped(Stop),
    Provider(LlmError),
    /// No model is configured (no API key).
    NotConfigured,
    /// The history does not fit in the model's context window, even compacted: what to raise.
    Context(String),
}

/// Refusals as too long one request may meet, each followed by a further compaction.
const MAX_REFUSALS: u32 = 3;

impl Agent {
    /// Runs one user turn to its end. Returns `Some(Stop::Quit)` when the task should end.
    /// With no prompt, the turn carries on from the history as it is (a resumed session whose
    /// last turn did not end); if the model already answered, there is nothing to do.
    pub(super) async fn run_turn(&mut self, prompt: Option<String>) -> Option<Stop> {
        self.refresh_mcp_tools().await;
        match prompt {
            Some(prompt) => {
                self.state.start_prompted_turn();
                self.state.push_prompt(prompt.clone());
                self.emit(AgentEvent::Prompt { text: prompt });
            }
            None => {
                self.state.start_turn();
                let history = &self.state.view().history;
                if history.last().is_none_or(|last| last.role == Role::Assistant) {
                    let text = history.last().map(Message::text).unwrap_or_default();
                    let end = TurnEnd::new(TurnOutcome::Success, text);
                    self.finish_turn(end);
                    return None;
                }
                let text = "Carrying on where the session stopped.".into();
                self.emit(AgentEvent::Notice { text });
            }
        }
        let mut rounds = 0;
        let mut last_text = String::new();
        let mut continuations = 0;
        let mut stop_reason = None;
        let (outcome, error, stop) = loop {
            if rounds >= self.config.max_rounds {
                let text = format!(
                    "Stopped after {rounds} model responses in this turn (the limit set by \
                     --max-rounds or max_rounds). {GO_ON}"
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
                Err(Failure::Context(text)) => break (TurnOutcome::Error, Some(text), None),
            };
            stop_reason = Some(completion.stop_reason);
            let answer = Message::assistant(completion.content.clone());
            let text = answer.text();
            let cut_call = output_limit::cut_call(&completion);
            let calls: Vec<ToolCall> =
                answer.content.iter().filter_map(ToolCall::from_block).collect();
            // A continued answer goes on where the cut one stopped: the parts make one answer.
            if continuations > 0 {
                last_text.push_str(&text);
            } else if !text.is_empty() {
                last_text.clone_from(&text);
            }
            self.accept_answer(completion, text);
            if calls.is_empty() {
                if stop_reason != Some(StopReason::MaxTokens) {
                    break (TurnOutcome::Success, None, None);
                }
                if continuations >= output_limit::MAX_CONTINUATIONS {
                    let error = output_limit::still_cut_message(self.config.max_tokens);
                    break (TurnOutcome::MaxTokens, Some(error), None);
                }
                continuations += 1;
                self.ask_to_continue(continuations);
                continue;
            }
            continuations = 0;
            if let Some(stop) = self.run_tools(calls, cut_call.as_deref()).await {
                break (TurnOutcome::Interrupted, None, Some(stop));
            }
        };
        self.look_for_nested_repositories().await;
        self.finish_turn(TurnEnd { outcome, error, text: last_text, rounds, stop_reason });
        stop
    }

    /// After a text answer cut at the output limit: keel's note asking the model to go on.
    fn ask_to_continue(&mut self, continuation: u32) {
        self.emit(AgentEvent::Notice {
            text: format!(
                "The answer was cut off at the output limit; asking the model to go on \
                 ({continuation} of {}).",
                output_limit::MAX_CONTINUATIONS
            ),
        });
        let note = ContentBlock::Note { text: output_limit::CONTINUE.to_owned() };
        self.state.push_message(Message { role: Role::User, content: vec![note] });
    }

    /// Puts a finished answer into the history and tells the front ends.
    fn accept_answer(&mut self, completion: Completion, text: String) {
        self.state.end_streaming();
        self.state.add_usage(completion.usage);
        self.meter.reported(completion.usage.input_tokens);
        if completion.usage.input_tokens > 0 {
            self.show_context(completion.usage.input_tokens + completion.usage.output_tokens);
        }
        let total = self.state.view().usage;
        self.emit(AgentEvent::Usage {
            input_tokens: completion.usage.input_tokens,
            output_tokens: completion.usage.output_tokens,
            total_input_tokens: total.input_tokens,
            total_output_tokens: total.output_tokens,
            cache_read_tokens: completion.usage.cache_read_tokens,
            cache_write_tokens: completion.usage.cache_write_tokens,
            stop_reason: completion.stop_reason,
        });
        let answer = Message::assistant(completion.content);
        if answer.content.is_empty() {
            self.emit(AgentEvent::Notice { text: "The model returned an empty answer.".into() });
            return;
        }
        let (thinking, redacted) = answer.thinking();
        if !thinking.is_empty() || redacted {
            self.emit(AgentEvent::Thinking { text: thinking, redacted });
        }
        if !text.is_empty() {
            self.emit(AgentEvent::AssistantText { text });
        }
        self.state.push_message(answer);
    }

    fn finish_turn(&mut self, end: TurnEnd) {
        let TurnEnd { outcome, error, text, rounds, stop_reason } = end;
        self.look_at_repository_again();
        self.state.end_streaming();
        self.state.set_activity(Activity::Idle);
        self.state.set_pending_approval(None);
        self.end_plan_turn();
        let board = &self.state.view().board;
        self.emit(AgentEvent::Result {
            outcome,
            text,
            rounds,
            done: board.done(),
            total: board.total(),
            error,
            stop_reason,
        });
        self.state.publish(&self.outbox);
    }

    /// Sends the history to the model and waits for the whole answer, compacting the history
    /// first when it would not fit, and again whenever the server refuses it as too long.
    async fn request(&mut self) -> Result<Completion, Failure> {
        if self.provider.is_none() {
            return Err(Failure::NotConfigured);
        }
        self.fit_context().await?;
        let mut refusals = 0;
        loop {
            match self.send().await {
                Err(Failure::Provider(err)) => match err.overflow() {
                    Some(overflow) if refusals < MAX_REFUSALS => {
                        refusals += 1;
                        self.shrink_after_refusal(overflow).await?;
                    }
                    Some(_) => {
                        let tokens = self.meter.estimate(&self.state.view().history);
                        return Err(Failure::Context(format!(
                            "{err}. {}",
                            self.does_not_fit(tokens)
                        )));
                    }
                    None => return Err(Failure::Provider(err)),
                },
                other => return other,
            }
        }
    }

    /// Sends the history as it is and waits for the whole answer, showing it as it streams and
    /// listening for the person meanwhile.
    async fn send(&mut self) -> Result<Completion, Failure> {
        let Some(provider) = &self.provider else {
            return Err(Failure::NotConfigured);
        };
        self.state.set_activity(Activity::Thinking);
        self.state.publish(&self.outbox);
        let history = self.state.view().history.clone();
        self.meter.sent(&history);
        let request = ChatRequest {
            system: &self.config.system_prompt,
            messages: &history,
            tools: &self.specs,
            max_tokens: self.config.max_tokens,
            thinking_budget: self.config.thinking_budget,
        };
        let (stream_tx, mut stream_rx) = mpsc::unbounded_channel();
        let completion = provider.complete(&request, &stream_tx);
        tokio::pin!(completion);
        // The request went on the wire: the provider counts its tokens, answered or not.
        let mut sent = false;
        loop {
            tokio::select! {
                biased;
                command = self.inbox.recv() => {
                    if let Some(stop) = during_turn(&mut self.state, &self.outbox, command) {
                        let partial = self
                            .state
                            .view()
                            .streaming
                            .as_ref()
                            .map(ToString::to_string)
                            .unwrap_or_default();
                        self.state.end_streaming();
                        if sent {
                            let usage = interrupted_usage(&mut self.meter, &history, &partial);
                            self.state.add_usage(usage);
                        }
                        // What was shown stays on screen (the turn's end marks it
                        // interrupted); it never enters the history sent to the model.
                        if !partial.trim().is_empty() {
                            self.state.emit(AgentEvent::InterruptedText { text: partial });
                        }
                        return Err(Failure::Stopped(stop));
                    }
                }
                Some(event) = stream_rx.recv() => {
                    sent |= matches!(event, StreamEvent::Sent(_));
                    on_stream_event(&mut self.state, &self.outbox, true, event);
                }
                result = &mut completion => {
                    self.state.end_streaming();
                    return result.map_err(Failure::Provider);
                }
            }
        }
    }
}

/// What an answer interrupted while it streamed still cost: the request's tokens as keel
/// estimates them and what came of the answer — for the conversation's counts (the status bar's
/// tokens and cost, and the log's), as the provider bills them.
fn interrupted_usage(meter: &mut ContextMeter, history: &History, partial: &str) -> Usage {
    Usage {
        input_tokens: meter.estimate(history),
        output_tokens: meter.tokens(u64::try_from(partial.len()).unwrap_or(u64::MAX)),
        ..Usage::default()
    }
}

/// How a turn stopped at `--max-rounds` goes on, in the TUI's words (`-p` has its own).
pub const GO_ON: &str = "Send a message to let it go on.";

/// Handles a command that arrives while a turn runs. Returns why the turn must stop, if it must.
pub(super) fn during_turn(
    state: &mut State,
    outbox: &Outbox,
    command: Option<Command>,
) -> Option<Stop> {
    match command {
        None | Some(Command::Quit) => Some(Stop::Quit),
        Some(Command::Cancel) => Some(Stop::Interrupted),
        Some(Command::Submit(prompt)) => {
            state.queue(prompt);
            state.publish(outbox);
            None
        }
        Some(Command::EditBoard(edit)) => {
            board_edits::edit(state, outbox, &edit);
            None
        }
        Some(Command::PlanMode(on)) => {
            board_edits::plan_mode(state, outbox, on);
            None
        }
        Some(Command::ListSessions) => {
            state.list_sessions();
            state.publish(outbox);
            None
        }
        Some(
            Command::Resume(_)
            | Command::Clear
            | Command::Undo
            | Command::StartDemo
            | Command::PlayDemo
            | Command::Continue
            | Command::Compact
            | Command::ApprovePlan,
        ) => {
            state.emit(AgentEvent::Notice {
                text: "Wait for the turn to end, or press Esc to interrupt it first.".into(),
            });
            state.publish(outbox);
            None
        }
        Some(Command::Approve { .. }) => None,
    }
}

/// Shows what a request reports as it streams: its text (when `show_text`: the answer is to be
/// shown as it comes) and its retries. A delta costs what its own length does, however long the
/// answer has grown (see `streaming`).
pub(super) fn on_stream_event(
    state: &mut State,
    outbox: &Outbox,
    show_text: bool,
    event: StreamEvent,
) {
    match event {
        StreamEvent::TextDelta(delta) => {
            if !show_text {
                return;
            }
            state.stream_text(&delta);
            state.set_activity(Activity::Thinking);
        }
        StreamEvent::Retrying { attempt, delay, reason } => {
            state.end_streaming();
            state.set_activity(Activity::Retrying {
                attempt,
                until: Instant::now() + delay,
                reason: reason.clone(),
            });
            state.emit(AgentEvent::Retry {
                attempt,
                delay_ms: u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
                reason,
            });
            state.flush(outbox);
        }
        StreamEvent::Sent(sent) => state.set_last_sent(sent),
    }
    state.publish(outbox);
}
