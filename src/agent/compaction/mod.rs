//! Compacting the history so the next request fits the model's context window: before a request
//! whose estimate passes the threshold, after the server refused one as too long, and when the
//! person asks (`/compact`), after the PreCompact hooks. Cheapest first: masking old tool results (`context::mask`); a
//! summary from the model only when that is not enough (`context::summary`); a list of what ran
//! in the summary's place when the summary request fails. Every compaction goes through
//! `State::compact`, which saves it, so `--continue` resumes the compacted history.

pub mod mask;
pub mod summary;

use super::event::AgentEvent;
use super::journal::compaction::{Compaction, Mask, Trigger, apply_masks};
use super::snapshot::{Activity, ContextUse};
use crate::agent::context::WindowSource;
use crate::agent::turn::{Failure, during_turn, on_stream_event};
use crate::agent::turn::{NO_PROVIDER_HELP, Stop, Turn};
use crate::llm::{ChatRequest, LlmError, Overflow};
use crate::message::{History, Message};
use tokio::sync::mpsc;

/// A refused request is made at most this share of its size before it is sent again.
const REFUSED_SHRINK: f64 = 0.75;
/// Times the summary request is tried, halving what it carries after each "too long".
const SUMMARY_ATTEMPTS: u32 = 3;
/// The least room for the prompt, in tokens, that is worth trying with.
const MIN_ROOM: u64 = 1024;
/// The share of the threshold a summary's stand-in list of calls may take.
const DIGEST_SHARE: f64 = 0.25;

/// What one compaction is for.
struct Goal {
    trigger: Trigger,
    /// The estimate of the next request as it is, in tokens.
    before: u64,
    /// The estimate to get below.
    target: u64,
    /// Summarise even when masking would be enough (`/compact`).
    summarise: bool,
    /// The window a server's refusal stated, to be saved with the compaction.
    learned_window: Option<u64>,
}

impl Turn<'_> {
    /// Before a request: compacts the history when the estimate of the request passes the
    /// threshold; fails when not even the compacted history fits.
    pub(super) async fn fit_context(&mut self) -> Result<(), Failure> {
        let estimate = self.meter.estimate(&self.state.view().history);
        self.show_context(estimate);
        self.check_room(estimate)?;
        let target = self.meter.threshold();
        if estimate <= target {
            return Ok(());
        }
        let goal = Goal {
            trigger: Trigger::Threshold,
            before: estimate,
            target,
            summarise: false,
            learned_window: None,
        };
        self.compact(goal).await?;
        self.check_fits()
    }

    /// The server refused the request just sent as too long: learns what it stated and makes
    /// the history smaller — never sending the same request again.
    pub(super) async fn shrink_after_refusal(&mut self, overflow: Overflow) -> Result<(), Failure> {
        let refused_bytes = self.meter.bytes_of(&self.state.view().history);
        let refused = self.meter.refused(overflow);
        let stated = match overflow.limit {
            Some(limit) => format!("it allows {limit} tokens"),
            None => "it did not say how many it allows".to_owned(),
        };
        self.emit(AgentEvent::Notice {
            text: format!(
                "The server refused the request as too long for the model ({stated}); \
                 compacting the history and trying again."
            ),
        });
        self.check_room(refused)?;
        let learned = (self.meter.source() == WindowSource::Server).then(|| self.meter.window());
        let target = self.meter.threshold().min((refused as f64 * REFUSED_SHRINK) as u64);
        let goal = Goal {
            trigger: Trigger::Refused,
            before: refused,
            target,
            summarise: false,
            learned_window: learned,
        };
        self.compact(goal).await?;
        let now = self.meter.bytes_of(&self.state.view().history);
        if now >= refused_bytes {
            let tokens = self.meter.estimate(&self.state.view().history);
            return Err(Failure::Context(self.does_not_fit(tokens)));
        }
        self.check_fits()
    }

    /// `/compact`: summarises the work so far now, between turns.
    pub(super) async fn compact_now(&mut self) -> Option<Stop> {
        if self.provider.is_none() {
            self.emit(AgentEvent::Error { text: NO_PROVIDER_HELP.to_owned() });
            return None;
        }
        let before = self.meter.estimate(&self.state.view().history);
        let goal = Goal {
            trigger: Trigger::Request,
            before,
            target: self.meter.threshold(),
            summarise: true,
            learned_window: None,
        };
        let stop = match self.compact(goal).await {
            Ok(true) => None,
            Ok(false) => {
                self.emit(AgentEvent::Notice {
                    text: "Nothing to compact yet: the history is the newest round and your \
                           requests."
                        .into(),
                });
                None
            }
            Err(Failure::Stopped(stop)) => {
                self.emit(AgentEvent::Notice { text: "Compaction interrupted.".into() });
                Some(stop)
            }
            Err(Failure::Context(text)) => {
                self.emit(AgentEvent::Error { text });
                None
            }
            Err(Failure::Provider(err)) => {
                self.emit(AgentEvent::Error { text: err.to_string() });
                None
            }
            Err(Failure::NotConfigured) => None,
        };
        self.state.set_activity(Activity::Idle);
        self.state.publish(self.outbox);
        stop
    }

    /// Compacts towards `goal`: masking, then a summary if needed. Returns whether the history
    /// changed.
    async fn compact(&mut self, goal: Goal) -> Result<bool, Failure> {
        let history = self.state.view().history.clone();
        let (mut masks, mut masked) = masked(&history, mask::KEEP_ROUNDS);
        let mut after = self.meter.estimate_of(&masked);
        if after > goal.target {
            (masks, masked) = self::masked(&history, 1);
            after = self.meter.estimate_of(&masked);
        }
        let tail = summary::tail_start(&masked);
        if (after <= goal.target && !goal.summarise) || tail.is_none() {
            if masks.is_empty() {
                return Ok(false);
            }
            self.pre_compact(goal.trigger).await?;
            let compaction = Compaction {
                trigger: goal.trigger,
                tokens_before: goal.before,
                tokens_after: after,
                masks,
                history: None,
                summarised: 0,
                summary_error: None,
                learned_window: goal.learned_window,
            };
            return Ok(self.finish(compaction));
        }
        let tail = tail.unwrap_or_default();
        self.pre_compact(goal.trigger).await?;
        self.state.set_activity(Activity::Compacting);
        self.state.publish(self.outbox);
        let (text, summary_error) = match self.summarise(&masked, tail).await? {
            Ok(text) => (text, None),
            Err(why) => {
                let budget = self.bytes_for(self.meter.threshold() as f64 * DIGEST_SHARE);
                (summary::digest(&masked, tail, &why, budget), Some(why))
            }
        };
        let view = self.state.view();
        let board = self.config.board.then_some(&*view.board);
        let note =
            summary::note(&text, board, view.reminder.since_todo(), view.reminder.threshold());
        let rebuilt: History = summary::rebuild(&masked, tail, note).into_iter().collect();
        let mut tail_masks = Vec::new();
        after = self.meter.estimate_of(&rebuilt);
        if after > goal.target {
            let compacted;
            (tail_masks, compacted) = self::masked(&rebuilt, 0);
            after = self.meter.estimate_of(&compacted);
        }
        self.state.set_activity(Activity::Thinking);
        let compaction = Compaction {
            trigger: goal.trigger,
            tokens_before: goal.before,
            tokens_after: after,
            masks: tail_masks,
            history: Some(rebuilt.into_iter().collect()),
            summarised: tail,
            summary_error,
            learned_window: goal.learned_window,
        };
        Ok(self.finish(compaction))
    }

    /// Runs the PreCompact hooks, told whether the person asked (`manual`) or the window did
    /// (`auto`); they cannot stop the compaction.
    async fn pre_compact(&mut self, trigger: Trigger) -> Result<(), Failure> {
        let trigger = if trigger == Trigger::Request { "manual" } else { "auto" };
        let fields = serde_json::Map::from_iter([
            ("trigger".to_owned(), trigger.into()),
            ("custom_instructions".to_owned(), "".into()),
        ]);
        let query = crate::hooks::Query::Value(trigger);
        crate::agent::turn::hooks::HookRunner::new(self.parts())
            .fire(crate::hooks::Event::PreCompact, query, fields, None)
            .await
            .map(drop)
            .map_err(Failure::Stopped)
    }

    /// Asks the model for a summary of the work before `tail`, listening for the person
    /// meanwhile. `Ok(Err(why))` when there is none to be had.
    async fn summarise(
        &mut self,
        history: &History,
        tail: usize,
    ) -> Result<Result<String, String>, Failure> {
        let Some(provider) = &self.provider else {
            return Ok(Err("no model is configured".to_owned()));
        };
        let max_tokens = self.config.max_tokens.min(summary::MAX_TOKENS);
        let room = self.meter.window().saturating_sub(u64::from(max_tokens));
        let mut budget = self.bytes_for(room as f64 * self.config.compact_at);
        let mut last = String::new();
        for _ in 0..SUMMARY_ATTEMPTS {
            let asked: History =
                std::iter::once(Message::user_text(summary::request_text(history, tail, budget)))
                    .collect();
            let request = ChatRequest {
                system: summary::SYSTEM,
                messages: &asked,
                tools: &[],
                max_tokens,
                thinking_budget: None,
            };
            let (stream_tx, mut stream_rx) = mpsc::unbounded_channel();
            let completion = provider.complete(&request, &stream_tx);
            tokio::pin!(completion);
            let result = loop {
                tokio::select! {
                    biased;
                    command = self.inbox.recv() => {
                        if let Some(stop) =
                            during_turn(self.state, self.outbox, self.services, command)
                        {
                            return Err(Failure::Stopped(stop));
                        }
                    }
                    Some(event) = stream_rx.recv() => {
                        on_stream_event(self.state, self.outbox, false, event);
                    }
                    result = &mut completion => break result,
                }
            };
            match result {
                Ok(completion) => {
                    self.state.add_usage(completion.usage);
                    let text = Message::assistant(completion.content).text();
                    return Ok(if text.trim().is_empty() {
                        Err("its answer was empty".to_owned())
                    } else {
                        Ok(text)
                    });
                }
                Err(err) if err.overflow().is_some() => {
                    last = err.to_string();
                    budget /= 2;
                }
                Err(err) => return Ok(Err(summary_failure(&err))),
            }
        }
        Ok(Err(last))
    }

    /// Saves and applies a compaction and tells the front ends. Returns whether it took.
    fn finish(&mut self, compaction: Compaction) -> bool {
        let event = AgentEvent::compaction(&compaction, self.meter.window());
        if let Err(why) = self.state.compact(compaction) {
            self.emit(AgentEvent::Error { text: format!("keel could not compact: {why}") });
            return false;
        }
        self.meter.history_changed();
        let estimate = self.meter.estimate(&self.state.view().history);
        self.show_context(estimate);
        self.emit(event);
        self.state.publish(self.outbox);
        true
    }

    /// Fails when the history, compacted as far as it goes, still does not fit.
    fn check_fits(&mut self) -> Result<(), Failure> {
        let estimate = self.meter.estimate(&self.state.view().history);
        self.show_context(estimate);
        if estimate > self.meter.room() {
            return Err(Failure::Context(self.does_not_fit(estimate)));
        }
        Ok(())
    }

    /// Fails when the window leaves no room worth trying for the prompt.
    fn check_room(&self, estimate: u64) -> Result<(), Failure> {
        if self.meter.room() < MIN_ROOM {
            return Err(Failure::Context(self.does_not_fit(estimate)));
        }
        Ok(())
    }

    /// What the person is told when nothing fits, and what to raise.
    pub(super) fn does_not_fit(&self, tokens: u64) -> String {
        let source = match self.meter.source() {
            WindowSource::Configured => "as --context-window or context_window sets it",
            WindowSource::Assumed => "keel's figure for this model",
            WindowSource::Server => "as the server stated it",
        };
        format!(
            "The conversation does not fit in the model's context window, even compacted: the \
             request takes about {tokens} tokens, and the window of {} tokens ({source}) leaves \
             {} for it beside the {} that --max-tokens keeps for the answer. Raise the window — \
             the server's context size (llama.cpp --ctx-size, Ollama num_ctx, vLLM \
             --max-model-len), or --context-window where keel's figure is too low — or lower \
             --max-tokens, or /clear to start over.",
            self.meter.window(),
            self.meter.room(),
            self.meter.max_tokens()
        )
    }

    pub(in crate::agent) fn show_context(&mut self, tokens: u64) {
        self.state.set_context(ContextUse { tokens, window: self.meter.window() });
    }

    /// The bytes that come to `tokens` at the rate the server's counts taught.
    fn bytes_for(&self, tokens: f64) -> usize {
        (tokens / self.meter.tokens_per_byte()) as usize
    }
}

/// `history` with what can go masked, keeping `keep` rounds whole; and the masks.
fn masked(history: &History, keep: usize) -> (Vec<Mask>, History) {
    let masks = mask::plan(history, keep);
    let mut masked = history.clone();
    // The plan names only calls the history holds.
    if apply_masks(masked.iter_mut(), &masks).is_err() {
        return (Vec::new(), history.clone());
    }
    (masks, masked)
}

/// Why the summary request failed, in a few words for the note that stands in for it.
fn summary_failure(err: &LlmError) -> String {
    crate::llm::error::truncate(&err.to_string())
}
