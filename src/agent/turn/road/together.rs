//! The explorers of one response (`task` calls with no item, `agent::children`) take their roads
//! side by side: each is taken up, prepared and approved in its turn (the before stage
//! included), then the ones still on their road run at once — one child each — and each is
//! taken through after and settle in its turn. A call a stage ended is settled in its place.

use super::{Finished, OnRoad, Taken};
use crate::agent::event::INTERRUPTED;
use crate::agent::snapshot::ToolStatus;
use crate::agent::turn::{Stop, Turn};
use crate::tools::{ToolCall, ToolOutcome};
use std::time::Instant;

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

impl Turn<'_> {
    /// Takes `calls` — explorers of one response — down their roads together; their answers
    /// in order.
    pub(in crate::agent) async fn take_calls_together(&mut self, calls: &[ToolCall]) -> Vec<Taken> {
        let mut standing = Vec::with_capacity(calls.len());
        let mut stop = None;
        for call in calls {
            self.parts().0.take_up(call);
            let tool = match self.toolset.resolve(call) {
                Ok(tool) => tool,
                Err(unknown) => {
                    let failed = (ToolStatus::Failed, ToolOutcome::error(unknown.to_string()));
                    standing.push(Standing::Unknown(failed));
                    continue;
                }
            };
            let effect = tool.effect();
            let mut on = OnRoad {
                call: call.clone(),
                tool,
                effect,
                assumed: None,
                started: Instant::now(),
                opening: None,
                permission: None,
                hook_notes: Vec::new(),
            };
            match super::ready(&mut super::CallContext::new(&mut on, self.parts())).await {
                Ok(()) => standing.push(Standing::Ready(on)),
                Err(ended) => {
                    stop = stop.or(ended.1);
                    standing.push(Standing::Ended(on, ended));
                }
            }
        }
        let ready: Vec<&ToolCall> = standing
            .iter()
            .filter_map(|standing| match standing {
                Standing::Ready(on) if stop.is_none() => Some(&on.call),
                _ => None,
            })
            .collect();
        let mut ran = self.delegate(&ready).await.into_iter();
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
                    let mut cx = super::CallContext::new(&mut on, self.parts());
                    let (finished, stop) = super::after(&mut cx, ran).await;
                    super::settle(&mut cx, finished, stop).await
                }
                Standing::Ended(mut on, (finished, stop)) => {
                    super::settle(
                        &mut super::CallContext::new(&mut on, self.parts()),
                        finished,
                        stop,
                    )
                    .await
                }
                Standing::Unknown(failed) => super::settle_unknown(self.parts(), call, failed),
            });
        }
        taken
    }
}
