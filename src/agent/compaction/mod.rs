//! Compacting the history so the next request fits the model's context window
//! (docs/architecture.md, "Long sessions"): before a request whose estimate passes the
//! threshold, after the server refused one as too long, and when the person asks (`/compact`).
//! Cheapest first: masking old tool results ([`mask`]); a summary from the model only when that
//! is not enough ([`summary`], asked in `ask`); a list of what ran in the summary's place when
//! the summary request fails. [`meter`] is the window and the estimate every choice weighs;
//! `goal` holds the choices themselves.
//!
//! Plain functions over one conversation's parts ([`Parts`], borrowed from its turn): [`plan`]
//! decides and [`carry_out`] does the work and checks what it left; between the two the turn
//! runs the PreCompact hooks the plan names ([`Plan::pre_compact`]), as it runs every hook.
//! Every compaction goes through `State::compact`, which saves it, so `--continue` resumes the
//! compacted history.

mod ask;
mod goal;
pub mod mask;
pub mod meter;
pub mod summary;

pub(in crate::agent) use goal::does_not_fit;
pub(in crate::agent) use meter::{ContextMeter, WindowSource};

use crate::agent::command::Command;
use crate::agent::config::AgentConfig;
use crate::agent::event::AgentEvent;
use crate::agent::journal::compaction::{Compaction, Trigger};
use crate::agent::listening::Stop;
use crate::agent::services::Services;
use crate::agent::snapshot::Activity;
use crate::agent::state::{Outbox, State};
use crate::hooks::Query;
use crate::llm::{Overflow, Provider};
use crate::message::History;
use goal::{Goal, Work};
use serde_json::{Map, Value};
use std::sync::Arc;
use tokio::sync::mpsc::UnboundedReceiver;

/// The parts of one conversation that compaction works on, borrowed from its turn.
pub(in crate::agent) struct Parts<'a> {
    pub state: &'a mut State,
    pub meter: &'a mut ContextMeter,
    /// Its limits: `max_tokens`, `compact_at`, and whether the board is on (a summary's note
    /// carries it).
    pub config: &'a AgentConfig,
    pub outbox: &'a Outbox,
    /// The model a summary is asked of; `None` when none is configured.
    pub provider: Option<&'a Arc<Provider>>,
    /// The person's commands, heard while the summary is asked.
    pub inbox: &'a mut UnboundedReceiver<Command>,
    pub services: &'a Services,
}

/// What a compaction is asked for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(in crate::agent) enum Why {
    /// A request is about to be sent: compact if its estimate passes the threshold.
    BeforeRequest,
    /// The server refused the request just sent as too long, stating this of its limit.
    Refused(Overflow),
    /// The person asked (`/compact`): summarise now.
    Asked,
}

/// Why compaction left no history to send.
#[derive(Debug, Clone, PartialEq)]
pub(in crate::agent) enum Failed {
    /// The person interrupted (or left) while it waited.
    Stopped(Stop),
    /// Not even the compacted history fits: what the person is told.
    DoesNotFit(String),
}

/// A compaction decided on, carried out after the PreCompact hooks.
#[derive(Debug)]
pub(in crate::agent) struct Plan {
    why: Why,
    goal: Goal,
    work: Work,
    /// After a refusal: the bytes of the refused request, which the next must be below.
    refused_bytes: u64,
}

impl Plan {
    /// What the PreCompact hooks are told — whether the person asked (`manual`) or the window
    /// did (`auto`) — when the plan changes the history; `None` when it changes nothing. The
    /// hooks cannot stop the compaction.
    pub fn pre_compact(&self) -> Option<(Query<'static>, Map<String, Value>)> {
        if self.work == Work::Nothing {
            return None;
        }
        let trigger = if self.goal.trigger == Trigger::Request { "manual" } else { "auto" };
        let fields = Map::from_iter([
            ("trigger".to_owned(), trigger.into()),
            ("custom_instructions".to_owned(), "".into()),
        ]);
        Some((Query::Value(trigger), fields))
    }
}

/// Decides what compaction `why` asks for: `None` when the history fits as it is. Fails when
/// the window leaves no room worth trying for the prompt. Before a request and after a refusal
/// it shows the estimate; a refusal is told, and teaches the meter what the server stated.
pub(in crate::agent) fn plan(parts: &mut Parts<'_>, why: Why) -> Result<Option<Plan>, Failed> {
    let history = parts.state.view().history.clone();
    let (goal, refused_bytes) = match why {
        Why::BeforeRequest => {
            let estimate = parts.meter.estimate(&history);
            show_context(parts, estimate);
            check_room(parts.meter, estimate)?;
            if estimate <= parts.meter.threshold() {
                return Ok(None);
            }
            (Goal::threshold(parts.meter, estimate), 0)
        }
        Why::Refused(overflow) => {
            let refused_bytes = parts.meter.bytes_of(&history);
            let refused = parts.meter.refused(overflow);
            let stated = match overflow.limit {
                Some(limit) => format!("it allows {limit} tokens"),
                None => "it did not say how many it allows".to_owned(),
            };
            emit(
                parts,
                AgentEvent::Notice {
                    text: format!(
                        "The server refused the request as too long for the model ({stated}); \
                         compacting the history and trying again."
                    ),
                },
            );
            check_room(parts.meter, refused)?;
            (Goal::refused(parts.meter, refused), refused_bytes)
        }
        Why::Asked => {
            let before = parts.meter.estimate(&history);
            (Goal::asked(parts.meter, before), 0)
        }
    };
    let work = goal::decide(&history, parts.meter, &goal);
    Ok(Some(Plan { why, goal, work, refused_bytes }))
}

/// Carries `plan` out: the masks, or a summary asked of the model (listening for the person
/// meanwhile) with the history rebuilt around it; then, before a request, fails when the
/// history still does not fit — after a refusal, also when it is not smaller than the refused
/// one. Returns whether the history changed.
pub(in crate::agent) async fn carry_out(parts: &mut Parts<'_>, plan: Plan) -> Result<bool, Failed> {
    let Plan { why, goal, work, refused_bytes } = plan;
    let changed = match work {
        Work::Nothing => false,
        Work::Mask { masks, after } => {
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
            finish(parts, compaction)
        }
        Work::Summarise { masked, tail } => summarise(parts, &goal, &masked, tail).await?,
    };
    match why {
        Why::BeforeRequest => check_fits(parts)?,
        Why::Refused(_) => {
            if parts.meter.bytes_of(&parts.state.view().history) >= refused_bytes {
                let tokens = parts.meter.estimate(&parts.state.view().history);
                return Err(Failed::DoesNotFit(does_not_fit(parts.meter, tokens)));
            }
            check_fits(parts)?;
        }
        Why::Asked => {}
    }
    Ok(changed)
}

/// Tells the person how `/compact` went. Returns why to stop, when they stopped it.
pub(in crate::agent) fn tell_asked(
    state: &mut State,
    outbox: &Outbox,
    done: Result<bool, Failed>,
) -> Option<Stop> {
    let (event, stop) = match done {
        Ok(true) => (None, None),
        Ok(false) => {
            let text = "Nothing to compact yet: the history is the newest round and your \
                        requests.";
            (Some(AgentEvent::Notice { text: text.into() }), None)
        }
        Err(Failed::Stopped(stop)) => {
            (Some(AgentEvent::Notice { text: "Compaction interrupted.".into() }), Some(stop))
        }
        Err(Failed::DoesNotFit(text)) => (Some(AgentEvent::Error { text }), None),
    };
    if let Some(event) = event {
        state.emit(event);
        state.flush(outbox);
    }
    state.set_activity(Activity::Idle);
    state.publish(outbox);
    stop
}

/// The summary (or, failing it, the list of what ran) in a note, and the history rebuilt
/// around it: the person's requests, the note, the newest round — masked too if that is still
/// above the goal. Returns whether the history changed.
async fn summarise(
    parts: &mut Parts<'_>,
    goal: &Goal,
    masked: &History,
    tail: usize,
) -> Result<bool, Failed> {
    parts.state.set_activity(Activity::Compacting);
    parts.state.publish(parts.outbox);
    let (text, summary_error) = match ask::summarise(parts, masked, tail).await? {
        Ok(text) => (text, None),
        Err(why) => {
            let budget = goal::digest_budget(parts.meter);
            (summary::digest(masked, tail, &why, budget), Some(why))
        }
    };
    let view = parts.state.view();
    let board = parts.config.board.then_some(&*view.board);
    let note = summary::note(&text, board, view.reminder.since_todo(), view.reminder.threshold());
    let rebuilt: History = summary::rebuild(masked, tail, note).into_iter().collect();
    let mut tail_masks = Vec::new();
    let mut after = parts.meter.estimate_of(&rebuilt);
    if after > goal.target {
        let compacted;
        (tail_masks, compacted) = goal::masked(&rebuilt, 0);
        after = parts.meter.estimate_of(&compacted);
    }
    parts.state.set_activity(Activity::Thinking);
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
    Ok(finish(parts, compaction))
}

/// Saves and applies a compaction and tells the front ends. Returns whether it took.
fn finish(parts: &mut Parts<'_>, compaction: Compaction) -> bool {
    let event = AgentEvent::compaction(&compaction, parts.meter.window());
    if let Err(why) = parts.state.compact(compaction) {
        emit(parts, AgentEvent::Error { text: format!("keel could not compact: {why}") });
        return false;
    }
    parts.meter.history_changed();
    let estimate = parts.meter.estimate(&parts.state.view().history);
    show_context(parts, estimate);
    emit(parts, event);
    parts.state.publish(parts.outbox);
    true
}

/// Fails when the history, compacted as far as it goes, still does not fit.
fn check_fits(parts: &mut Parts<'_>) -> Result<(), Failed> {
    let estimate = parts.meter.estimate(&parts.state.view().history);
    show_context(parts, estimate);
    if estimate > parts.meter.room() {
        return Err(Failed::DoesNotFit(does_not_fit(parts.meter, estimate)));
    }
    Ok(())
}

/// Fails when the window leaves no room worth trying for the prompt.
fn check_room(meter: &ContextMeter, estimate: u64) -> Result<(), Failed> {
    if goal::has_room(meter) {
        Ok(())
    } else {
        Err(Failed::DoesNotFit(does_not_fit(meter, estimate)))
    }
}

fn show_context(parts: &mut Parts<'_>, tokens: u64) {
    parts.state.set_context(parts.meter.usage(tokens));
}

/// Tells of something that happened, and sends it to the front ends at once.
fn emit(parts: &mut Parts<'_>, event: AgentEvent) {
    parts.state.emit(event);
    parts.state.flush(parts.outbox);
}

#[cfg(test)]
mod fixtures;
#[cfg(test)]
mod tests;
