//! A request to the model, sent and waited for: the history compacted first when it would not
//! fit (and again whenever the server refuses it as too long), the answer shown as it streams,
//! and the person heard meanwhile — an interrupt, a prompt to queue, a board edit.

use super::{Stop, Turn};
use crate::agent::command::Command;
use crate::agent::context::ContextMeter;
use crate::agent::event::AgentEvent;
use crate::agent::services::Services;
use crate::agent::snapshot::Activity;
use crate::agent::state::{Outbox, State};
use crate::agent::{approval_switch, board_edits};
use crate::llm::{ChatRequest, Completion, LlmError, StreamEvent};
use crate::message::{History, Usage};
use std::time::Instant;
use tokio::sync::mpsc;

/// How a request ended when it did not produce an answer.
pub(in crate::agent) enum Failure {
    Stopped(Stop),
    Provider(LlmError),
    /// No model is configured (no API key).
    NotConfigured,
    /// The history does not fit in the model's context window, even compacted: what to raise.
    Context(String),
}

/// Refusals as too long one request may meet, each followed by a further compaction.
const MAX_REFUSALS: u32 = 3;

impl Turn<'_> {
    /// Sends the history to the model and waits for the whole answer, compacting the history
    /// first when it would not fit, and again whenever the server refuses it as too long.
    pub(super) async fn request(&mut self) -> Result<Completion, Failure> {
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
        let Some(provider) = self.provider else {
            return Err(Failure::NotConfigured);
        };
        self.state.set_activity(Activity::Thinking);
        self.state.publish(self.outbox);
        let history = self.state.view().history.clone();
        self.meter.sent(&history);
        let request = ChatRequest {
            system: &self.config.system_prompt,
            messages: &history,
            tools: self.specs,
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
                    if let Some(stop) =
                        during_turn(self.state, self.outbox, self.services, command)
                    {
                        let partial = self
                            .state
                            .view()
                            .streaming
                            .as_ref()
                            .map(ToString::to_string)
                            .unwrap_or_default();
                        self.state.end_streaming();
                        if sent {
                            let usage = interrupted_usage(self.meter, &history, &partial);
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
                    on_stream_event(self.state, self.outbox, true, event);
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

/// Handles a command that arrives while a turn runs. Returns why the turn must stop, if it must.
pub(in crate::agent) fn during_turn(
    state: &mut State,
    outbox: &Outbox,
    services: &Services,
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
        Some(Command::Approval(mode)) => {
            approval_switch::switch(services, state, outbox, mode);
            None
        }
        Some(Command::ListSessions) => {
            state.list_sessions();
            state.publish(outbox);
            None
        }
        Some(
            Command::Resume(_)
            | Command::Shell(_)
            | Command::SwitchModel(_)
            | Command::ShowDiff
            | Command::ShowSandbox
            | Command::Clear
            | Command::Undo
            | Command::StartDemo
            | Command::PlayDemo
            | Command::Continue
            | Command::Compact
            | Command::ApprovePlan
            | Command::Hooks(_),
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
pub(in crate::agent) fn on_stream_event(
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
