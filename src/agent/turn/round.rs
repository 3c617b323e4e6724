//! One round of tool calls: each call taken down its road (`road`), in order — the explorers of
//! one response (`task` with no item) side by side, and no more children than the response may
//! start (`children::per_response`) — while the person can interrupt; then the results — the
//! person's board changes and the reminder after them, when there are any — go into the history
//! as one user message.

use crate::agent::children::per_response;
use crate::agent::snapshot::{ToolRun, ToolStatus};
use crate::agent::turn::INTERRUPTED;
use crate::agent::turn::output_limit::cut_call_message;
use crate::agent::turn::road::{self, Taken, runs_beside_others};
use crate::agent::turn::{Stop, Turn};
use crate::message::ContentBlock;
use crate::tools::{Effect, ToolCall, ToolOutcome};
use std::time::Instant;

impl Turn<'_> {
    /// Runs one round of tool calls in order and appends their results (and the reminder, when
    /// due) to the history. The call `cut` names (cut off at the output limit) is not run: its
    /// result says why. Returns why it stopped early, if it did.
    pub(in crate::agent) async fn run_tools(
        &mut self,
        calls: Vec<ToolCall>,
        cut: Option<&str>,
    ) -> Option<Stop> {
        let mut results = Vec::with_capacity(calls.len());
        let mut stop = None;
        // The round's last changing tool was a command that left nothing running: the
        // workspace is as the round leaves it.
        let mut settled = false;
        // The children one response may start: its `task` calls past the bound are not run.
        let settings = &self.config.children;
        let (past_bound, delegations) = per_response::past_bound(settings, self.toolset, &calls);
        let mut calls = calls.into_iter().zip(past_bound).peekable();
        while let Some((call, past_bound)) = calls.next() {
            let takens = if stop.is_some() {
                vec![self.answer_unrun(&call, ToolStatus::Interrupted, INTERRUPTED)]
            } else if cut == Some(call.id.as_str()) {
                let why = cut_call_message(self.config.max_tokens);
                vec![self.answer_unrun(&call, ToolStatus::Failed, &why)]
            } else if past_bound {
                let why = per_response::answer(&self.config.children, delegations);
                vec![self.answer_unrun(&call, ToolStatus::Failed, &why)]
            } else if runs_beside_others(self.toolset, &call) {
                // The explorers that follow in the response run beside this one.
                let mut group = vec![call];
                while let Some((next, _)) = calls.next_if(|(next, past_bound)| {
                    !past_bound
                        && cut != Some(next.id.as_str())
                        && runs_beside_others(self.toolset, next)
                }) {
                    group.push(next);
                }
                road::take_calls_together(self.parts(), &group).await
            } else {
                vec![road::take_call(self, call).await]
            };
            for taken in takens {
                if let Some(effect) = taken.effect.filter(|effect| effect.changes_things()) {
                    settled = effect == Effect::RunsCommand && !taken.left_running;
                }
                stop = stop.or(taken.stop);
                results.push(taken.result);
            }
        }
        // The person's edits that waited for a check while the calls ran.
        if stop.is_none() {
            stop = crate::agent::board_edits::take_checked_edits(&mut self.parts()).await;
        }
        self.state.count_round();
        results.extend(self.state.take_model_notes());
        results.extend(self.state.take_board_note());
        if stop.is_none() {
            results.extend(self.state.remind(&self.config.nag_message));
            self.state.flush(self.outbox);
        }
        self.state.push_results(results);
        self.state.publish(self.outbox);
        if settled && stop.is_none() {
            self.undo.start_closing_snapshot(self.state);
        }
        stop
    }

    /// Answers a call that is not run — the turn is stopping, the call was cut off at the
    /// output limit, or it is a `task` call past the response's bound of children — with `why`.
    fn answer_unrun(&mut self, call: &ToolCall, status: ToolStatus, why: &str) -> Taken {
        let (mut conv, shared) = self.parts();
        conv.take_up(call);
        let outcome = ToolOutcome::error(why);
        conv.record_result(shared.tools, call, true, status, &outcome, Instant::now());
        Taken {
            result: result_block(&call.id, &outcome),
            effect: None,
            left_running: false,
            stop: None,
        }
    }
}

/// The tool pane's line of a call running since `started`, with the newest of its `output`.
pub(in crate::agent) fn running(call: &ToolCall, started: Instant, output: &str) -> ToolRun {
    ToolRun {
        id: call.id.clone(),
        name: call.name.clone(),
        summary: call.summary(),
        status: ToolStatus::Running,
        exit_code: None,
        started,
        duration: None,
        output: output.into(),
    }
}

/// The history's answer to call `id`.
pub(in crate::agent) fn result_block(id: &str, outcome: &ToolOutcome) -> ContentBlock {
    ContentBlock::ToolResult {
        tool_use_id: id.to_owned(),
        content: outcome.for_model.clone(),
        is_error: outcome.is_error,
    }
}
