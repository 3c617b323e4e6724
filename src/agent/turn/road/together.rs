//! The calls of one response that run beside each other (the tool says so of the call,
//! [`Tool::runs_beside_others`]: `task`'s explorers) take their roads side by side: each is
//! taken up, prepared and approved in its turn (the before stage included), then the ones still
//! on their road run at once (at most `max_parallel_agents` children at a time,
//! `agent::children`), and each is taken through after and settle in its turn. A call a stage
//! ended is settled in its place.

use super::run::{Live, finished, run_lives};
use super::{Finished, OnRoad, Taken};
use crate::agent::event::INTERRUPTED;
use crate::agent::snapshot::{Activity, ToolStatus};
use crate::agent::turn::Stop;
use crate::agent::turn::handle::Parts;
use crate::tools::{ToolCall, ToolOutcome, ToolSet};
use std::time::Instant;

/// Whether `call` runs beside the calls next to it in its response that say the same.
pub(in crate::agent) fn runs_beside_others(toolset: &ToolSet, call: &ToolCall) -> bool {
    toolset.find(&call.name).is_some_and(|tool| tool.runs_beside_others(&call.input))
}

/// Where one call of the group stands before the run.
enum Standing {
    /// Ready to run.
    Ready(OnRoad),
    /// A stage ended it.
    Ended(OnRoad, (Finished, Option<Stop>)),
    /// A name no tool has (cannot happen for calls grouped by their tool, but answered all the
    /// same).
    Unknown(Finished),
}

/// Takes `calls` — of one response, each of which runs beside the others — down their
/// roads together; their answers in order.
pub(in crate::agent) async fn take_calls_together(
    (mut conv, shared): Parts<'_>,
    calls: &[ToolCall],
) -> Vec<Taken> {
    let mut standing = Vec::with_capacity(calls.len());
    let mut stop = None;
    for call in calls {
        conv.take_up(call);
        let tool = match conv.toolset.resolve(call) {
            Ok(tool) => tool,
            Err(unknown) => {
                let failed = (ToolStatus::Failed, ToolOutcome::error(unknown.to_string()));
                standing.push(Standing::Unknown(failed));
                continue;
            }
        };
        let mut on = OnRoad::new(call.clone(), tool, None);
        match super::ready(&mut super::CallContext::new(&mut on, (conv.reborrow(), shared))).await {
            Ok(()) => standing.push(Standing::Ready(on)),
            Err(ended) => {
                stop = stop.or(ended.1);
                standing.push(Standing::Ended(on, ended));
            }
        }
    }
    let mut ran = run_ready((conv.reborrow(), shared), &mut standing, stop).await.into_iter();
    let mut taken = Vec::with_capacity(calls.len());
    for (call, standing) in calls.iter().zip(standing) {
        taken.push(match standing {
            Standing::Ready(mut on) => {
                let ran = match stop {
                    None => ran.next(),
                    Some(_) => None,
                };
                let ran = ran.unwrap_or_else(|| {
                    let why = ToolOutcome::error(INTERRUPTED);
                    ((ToolStatus::Interrupted, why), stop)
                });
                let mut cx = super::CallContext::new(&mut on, (conv.reborrow(), shared));
                let (finished, stop) = super::after(&mut cx, ran).await;
                super::settle(&mut cx, finished, stop).await
            }
            Standing::Ended(mut on, (finished, stop)) => {
                super::settle(
                    &mut super::CallContext::new(&mut on, (conv.reborrow(), shared)),
                    finished,
                    stop,
                )
                .await
            }
            Standing::Unknown(failed) => {
                super::settle_unknown((conv.reborrow(), shared), call, failed)
            }
        });
    }
    taken
}

/// Runs the calls of `standing` still on their road, at once, unless the turn is stopping
/// (`stop`); how each ended, in order.
async fn run_ready(
    (mut conv, shared): Parts<'_>,
    standing: &mut [Standing],
    stop: Option<Stop>,
) -> Vec<(Finished, Option<Stop>)> {
    if stop.is_some() {
        return Vec::new();
    }
    let began = Instant::now();
    let mut ready: Vec<&mut OnRoad> = standing
        .iter_mut()
        .filter_map(|standing| match standing {
            Standing::Ready(on) => Some(on),
            _ => None,
        })
        .collect();
    for on in &mut ready {
        on.started = began;
    }
    let lives = ready
        .iter()
        .map(|on| Live {
            tool: &*on.tool,
            call: &on.call,
            tools: shared.tools.clone(),
            gate: None,
            began,
        })
        .collect();
    let (outcomes, stop) = run_lives((conv.reborrow(), shared), lives, &mut None).await;
    conv.state.set_activity(Activity::Thinking);
    outcomes.into_iter().map(|outcome| (finished(outcome, stop), stop)).collect()
}
