//! One user turn: model requests (`request`) and tool rounds (`round`, each call on its `road`)
//! until the model answers without asking for a tool, the person interrupts, or the round limit
//! is hit. A turn runs over one conversation and borrows the workspace's services ([`Turn`]), so
//! the same code runs any conversation.
//!
//! Invariants kept here, in `round` and on each call's `road`: a partial answer never enters the
//! history; every tool call in the history gets exactly one result (an interrupted or declined
//! call gets one saying so); the reminder goes after the tool results of the round that made it
//! due.

pub(super) mod approval_prompt;
pub(super) mod bounds;
mod budget;
pub(super) mod checks;
pub(super) mod handle;
pub(super) mod hooks;
pub(super) mod jobs_watch;
mod mcp_tools;
pub(super) use mcp_tools::next_change as next_mcp_change;
pub(super) mod nested_repos;
mod output_limit;
mod persons_command;
mod plan_turn;
mod prompt_hooks;
pub(super) mod repeated_step;
mod request;
pub(super) mod road;
pub(super) mod round;
mod task_completed;
#[cfg(test)]
mod test_parts;
mod turn_diff;
pub(super) mod undo;
pub(super) mod watches;

use super::compaction::ContextMeter;
pub(super) use super::event::INTERRUPTED;
use super::event::{AgentEvent, TurnOutcome};
pub(in crate::agent) use super::listening::{Stop, during_turn};
use super::plan_mode;
use super::services::Services;
use super::snapshot::Activity;
use super::state::{Outbox, State};
use crate::agent::command::Command;
use crate::agent::config::AgentConfig;
use crate::llm::{Completion, Provider, RequestShape, StopReason, ToolSpec};
use crate::message::{ContentBlock, Message, Role};
use crate::tools::{ToolCall, ToolSet, Tools};
pub use budget::GO_ON;
pub(in crate::agent) use request::Failure;
use std::sync::Arc;
use tokio::sync::mpsc::UnboundedReceiver;
use undo::UndoGroup;

/// How to configure a model: the first-run screen's text, which offers the demo beside it.
macro_rules! configure_help {
    () => {
        "No model is configured. Set ANTHROPIC_API_KEY (or OPENAI_API_KEY with OPENAI_BASE_URL \
         for an OpenAI-compatible server; a local one takes any placeholder key), or put \
         provider, model and api_key in ~/.config/keel/config.toml, then restart keel."
    };
}

/// How to configure a model, on its own.
pub const CONFIGURE_HELP: &str = configure_help!();

/// What the person is told when they send a prompt with no model configured.
pub const NO_PROVIDER_HELP: &str =
    concat!(configure_help!(), " Type /demo to watch the built-in demo meanwhile.");

/// A turn over one conversation (`Conversation::turn`): what it borrows of the conversation, the
/// front end's channels, and the workspace's services. `impl Turn` is the loop; what a call or a
/// service touches of it is handed out as its parts (`handle`).
pub(in crate::agent) struct Turn<'a> {
    pub config: &'a AgentConfig,
    /// The model, shared with the conversation's children.
    pub provider: Option<&'a Arc<Provider>>,
    pub toolset: &'a ToolSet,
    pub specs: &'a mut Vec<ToolSpec>,
    pub state: &'a mut State,
    pub meter: &'a mut ContextMeter,
    pub undo: &'a mut UndoGroup,
    /// What the SessionStart hooks added for the model, for the next prompt.
    pub hook_context: &'a mut Vec<String>,
    /// The bounds of the prompt's turn: its own, or a child's parent's.
    pub bounds: &'a Arc<bounds::Bounds>,
    pub inbox: &'a mut UnboundedReceiver<Command>,
    pub outbox: &'a Outbox,
    pub services: &'a Services,
    /// The services' tools.
    pub tools: &'a Tools,
}

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

impl Turn<'_> {
    /// Runs a turn as one undo group (`turn::undo`). A turn that carries on one cut short (no
    /// prompt) is undone on its own: what the person changed in between is not its to undo.
    pub(in crate::agent) async fn run(&mut self, prompt: Option<String>) -> Option<Stop> {
        self.state.clock_turn(true);
        let stop = self.run_turn(prompt).await;
        self.state.clock_turn(false);
        self.undo.end(self.state).await;
        stop
    }

    /// Tells of something that happened (`State::emit`), and sends it to the front ends at once.
    pub(in crate::agent) fn emit(&mut self, event: AgentEvent) {
        self.parts().0.emit(event);
    }

    /// Tells front ends what each request carries besides the history, so the inspector shows
    /// the body as sent.
    pub(in crate::agent) fn tell_request_shape(&mut self) {
        let model = self.provider.map_or("", |provider| provider.model());
        self.state.set_request(RequestShape {
            model: model.into(),
            tools: self.specs.clone().into(),
            max_tokens: self.config.max_tokens,
            thinking_budget: self.config.thinking_budget,
        });
    }

    /// Runs one user turn to its end. Returns `Some(Stop::Quit)` when the worker should end.
    /// With no prompt, the turn carries on from the history as it is (a resumed session whose
    /// last turn did not end); if the model already answered, there is nothing to do.
    async fn run_turn(&mut self, prompt: Option<String>) -> Option<Stop> {
        self.refresh_mcp_tools().await;
        match prompt {
            Some(prompt) => {
                self.state.start_prompted_turn();
                let context = match self.prompt_submitted(&prompt).await {
                    Ok(context) => context,
                    Err(not_sent) => return self.not_sent(not_sent),
                };
                let workspace = self.tools.workspace().clone();
                let attached = super::mentions::attach_in(workspace, prompt.clone()).await;
                let toolset = self.toolset;
                self.state.push_prompt(prompt.clone(), attached.blocks.clone(), context, || {
                    plan_mode::note(toolset)
                });
                self.emit(AgentEvent::Prompt { text: prompt });
                let (told, refused) = attached.notices();
                if let Some(text) = told {
                    self.emit(AgentEvent::Notice { text });
                }
                if let Some(text) = refused {
                    self.emit(AgentEvent::Error { text });
                }
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
        // A child's responses count against its parent's turn: only a prompt's own turn begins
        // the count.
        if !self.config.is_child() {
            self.bounds.begin();
        }
        let mut rounds = 0;
        let mut last_text = String::new();
        let mut continuations = 0;
        let mut stop_continuations = 0;
        let mut stop_reason = None;
        let (outcome, error, stop) = loop {
            if let Some(text) = self.over_limit(rounds) {
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
                    match self.stop_hooks(&last_text, stop_continuations).await {
                        Ok(true) => {
                            stop_continuations += 1;
                            continue;
                        }
                        Ok(false) => break (TurnOutcome::Success, None, None),
                        Err(stop) => break (TurnOutcome::Interrupted, None, Some(stop)),
                    }
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
        nested_repos::look_for_nested_repositories(self.parts()).await;
        self.finish_turn(TurnEnd { outcome, error, text: last_text, rounds, stop_reason });
        stop
    }

    /// Ends a turn whose prompt was not sent.
    fn not_sent(&mut self, not_sent: prompt_hooks::NotSent) -> Option<Stop> {
        let (outcome, error, stop) = match not_sent {
            prompt_hooks::NotSent::Blocked(why) => (TurnOutcome::Error, Some(why), None),
            prompt_hooks::NotSent::Stopped(stop) => (TurnOutcome::Interrupted, None, Some(stop)),
        };
        self.finish_turn(TurnEnd { error, ..TurnEnd::new(outcome, String::new()) });
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
            let tokens = completion.usage.input_tokens + completion.usage.output_tokens;
            self.state.set_context(self.meter.usage(tokens));
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
        watches::look_at_repository_again(self.parts());
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
        self.state.publish(self.outbox);
    }
}
