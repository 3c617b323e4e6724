//! One round of tool calls: each call taken down its road (`road`), in order — the explorers of
//! one response (`task` with no item) side by side, and no more children than the response may
//! start (`children::per_response`) — while the person can interrupt; then the results — the
//! person's board changes and the reminder after them, when there are any — go into the history
//! as one user message.

use crate::agent::event::AgentEvent;
use crate::agent::snapshot::{ToolRun, ToolStatus};
use crate::agent::turn::INTERRUPTED;
use crate::agent::turn::output_limit::cut_call_message;
use crate::agent::turn::road::Taken;
use crate::agent::turn::{Stop, Turn};
use crate::message::ContentBlock;
use crate::runtime::change::FileDiff;
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
        let (past_bound, delegations) = self.past_children_bound(&calls);
        let mut calls = calls.into_iter().zip(past_bound).peekable();
        while let Some((call, past_bound)) = calls.next() {
            let takens = if stop.is_some() {
                vec![self.answer_unrun(&call, ToolStatus::Interrupted, INTERRUPTED)]
            } else if cut == Some(call.id.as_str()) {
                let why = cut_call_message(self.config.max_tokens);
                vec![self.answer_unrun(&call, ToolStatus::Failed, &why)]
            } else if past_bound {
                let why = self.past_bound_answer(delegations);
                vec![self.answer_unrun(&call, ToolStatus::Failed, &why)]
            } else if self.runs_together(&call) {
                // The explorers that follow in the response run beside this one.
                let mut group = vec![call];
                while let Some((next, _)) = calls.next_if(|(next, past_bound)| {
                    !past_bound && cut != Some(next.id.as_str()) && self.runs_together(next)
                }) {
                    group.push(next);
                }
                self.take_calls_together(&group).await
            } else {
                vec![self.take_call(call).await]
            };
            for taken in takens {
                if let Some(effect) = taken.effect.filter(|effect| effect.changes_things()) {
                    settled = effect == Effect::RunsCommand && !taken.left_running;
                }
                stop = stop.or(taken.stop);
                results.push(taken.result);
            }
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
            self.start_closing_snapshot();
        }
        stop
    }

    /// Answers a call that is not run — the turn is stopping, the call was cut off at the
    /// output limit, or it is a `task` call past the response's bound of children — with `why`.
    fn answer_unrun(&mut self, call: &ToolCall, status: ToolStatus, why: &str) -> Taken {
        self.take_up(call);
        let outcome = ToolOutcome::error(why);
        self.record_result(call, true, status, &outcome, Instant::now());
        Taken {
            result: result_block(&call.id, &outcome),
            effect: None,
            left_running: false,
            stop: None,
        }
    }

    /// Tells of a call keel takes up (its line in the conversation, `tool_start` for `-p`) before
    /// it runs — for a call the workspace is snapshotted for, once the snapshot is recorded, so a
    /// printing front end that sees it knows undo covers what it does.
    pub(in crate::agent) fn take_up(&mut self, call: &ToolCall) {
        self.emit(AgentEvent::ToolStart {
            id: call.id.clone(),
            name: call.name.clone(),
            input: call.input.clone(),
            summary: crate::visible::one_line(&call.summary()),
        });
    }

    /// Updates the tool pane (`in_pane`: board updates stay out of it, the board itself is
    /// pinned beside it) and tells printing front ends how a call ended.
    pub(in crate::agent) fn record_result(
        &mut self,
        call: &ToolCall,
        in_pane: bool,
        status: ToolStatus,
        outcome: &ToolOutcome,
        started: Instant,
    ) {
        let duration = started.elapsed();
        self.state.mark_call(call, status, &outcome.for_model);
        if let Some(tally) = &outcome.tally {
            self.state.note_tally(&call.id, tally);
        }
        if in_pane {
            self.state.update_tool(ToolRun {
                status,
                exit_code: outcome.exit_code,
                duration: Some(duration),
                output: outcome.for_display.as_str().into(),
                ..running(call, started, "")
            });
        }
        self.emit(AgentEvent::ToolEnd {
            id: call.id.clone(),
            name: call.name.clone(),
            is_error: outcome.is_error,
            exit_code: outcome.exit_code,
            duration_ms: u64::try_from(duration.as_millis()).unwrap_or(u64::MAX),
            duration_us: u64::try_from(duration.as_micros()).unwrap_or(u64::MAX),
            output: outcome.for_model.clone(),
            tally: outcome.tally.clone(),
            diff: outcome
                .changes
                .first()
                .map(|change| FileDiff::of_change(self.tools.workspace(), change)),
        });
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
