//! A request to the model, sent and waited for: the history compacted first when it would not
//! fit (and again whenever the server refuses it as too long), the answer shown as it streams,
//! and the person heard meanwhile — an interrupt, a prompt to queue, a board edit.

use super::{Stop, Turn};
use crate::agent::compaction::{self, ContextMeter, Why};
use crate::agent::event::AgentEvent;
use crate::agent::listening::{during_turn, on_stream_event};
use crate::agent::snapshot::Activity;
use crate::hooks::Event;
use crate::llm::{ChatRequest, Completion, LlmError, StreamEvent};
use crate::message::{History, Usage};
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

impl From<compaction::Failed> for Failure {
    fn from(failed: compaction::Failed) -> Self {
        match failed {
            compaction::Failed::Stopped(stop) => Self::Stopped(stop),
            compaction::Failed::DoesNotFit(text) => Self::Context(text),
        }
    }
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
        self.compact(Why::BeforeRequest).await?;
        let mut refusals = 0;
        loop {
            match self.send().await {
                Err(Failure::Provider(err)) => match err.overflow() {
                    Some(overflow) if refusals < MAX_REFUSALS => {
                        refusals += 1;
                        self.compact(Why::Refused(overflow)).await?;
                    }
                    Some(_) => {
                        let tokens = self.meter.estimate(&self.state.view().history);
                        let fits = compaction::does_not_fit(self.meter, tokens);
                        return Err(Failure::Context(format!("{err}. {fits}")));
                    }
                    None => return Err(Failure::Provider(err)),
                },
                other => return other,
            }
        }
    }

    /// Compacts the history as compaction decides for `why` (`agent::compaction`), running the
    /// PreCompact hooks its plan names before the work, as the turn runs every hook. Returns
    /// whether the history changed.
    pub(in crate::agent) async fn compact(&mut self, why: Why) -> Result<bool, compaction::Failed> {
        let Some(plan) = compaction::plan(&mut self.compaction(), why)? else {
            return Ok(false);
        };
        if let Some((query, fields)) = plan.pre_compact() {
            crate::agent::turn::hooks::HookRunner::new(self.parts())
                .fire(Event::PreCompact, query, fields, None)
                .await
                .map_err(compaction::Failed::Stopped)?;
        }
        compaction::carry_out(&mut self.compaction(), plan).await
    }

    /// The conversation's parts that compaction works on.
    fn compaction(&mut self) -> compaction::Parts<'_> {
        compaction::Parts {
            state: self.state,
            meter: self.meter,
            config: self.config,
            outbox: self.outbox,
            provider: self.provider,
            inbox: self.inbox,
            services: self.services,
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
