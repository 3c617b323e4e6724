//! One round of tool calls: each call approved (or not), run while the person can interrupt,
//! and answered; then the results — the person's board changes and the reminder after them, when
//! there are any — go into the history as one user message.
//!
//! Before a workspace tool runs, plan mode may refuse it (`plan`) and a write or an edit that
//! would repeat a step already done is answered as such (`repeated_step`) before approval is
//! asked; one that runs without asking is told so after it ran.

use super::plan_mode as plan;
use crate::agent::approval::{DECLINED, Verdict};
use crate::agent::event::AgentEvent;
use crate::agent::snapshot::{Activity, Refusal, ToolRun, ToolStatus};
use crate::agent::turn::output_limit::cut_call_message;
use crate::agent::turn::task::{Agent, Stop};
use crate::agent::turn::undo::Opening;
use crate::agent::turn::{INTERRUPTED, during_turn};
use crate::agent::{Decision, board_edits, reminder};
use crate::llm::tool_input;
use crate::message::ContentBlock;
use crate::tools::sandbox::Mode as SandboxMode;
use crate::tools::{ToolCall, ToolContext, ToolName, ToolOutcome, Tools};
use futures_util::future::OptionFuture;
use serde_json::Value;
use std::time::Instant;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// How much of a running command's newest output the tool pane keeps.
const LIVE_OUTPUT_TAIL_BYTES: usize = 64 * 1024;

/// How one call ended: what the tool pane shows and what the model reads.
type Finished = (ToolStatus, ToolOutcome);

impl Agent {
    /// Runs one round of tool calls in order and appends their results (and the reminder, when
    /// due) to the history. The call `output_limit` names (cut off at the output limit) is not run: its
    /// result says why. Returns why it stopped early, if it did.
    pub(in crate::agent) async fn run_tools(
        &mut self,
        calls: Vec<ToolCall>,
        cut: Option<&str>,
    ) -> Option<Stop> {
        let mut results = Vec::with_capacity(calls.len());
        // Where this round's valid board answers are among the results.
        let mut board_answers = Vec::new();
        let mut called_todo = false;
        let mut stop = None;
        // The round's last changing tool was a command that left nothing running: the
        // workspace is as the round leaves it.
        let mut settled = false;
        for call in calls {
            if stop.is_some() {
                self.take_up(&call);
                let skipped = ToolOutcome::error(INTERRUPTED);
                self.record_result(&call, ToolStatus::Interrupted, &skipped, Instant::now());
                results.push(result_block(&call.id, &skipped));
                continue;
            }
            if cut == Some(call.id.as_str()) {
                self.take_up(&call);
                let refused = ToolOutcome::error(cut_call_message(self.config.max_tokens));
                self.record_result(&call, ToolStatus::Failed, &refused, Instant::now());
                results.push(result_block(&call.id, &refused));
                continue;
            }
            // Undo must know the workspace as it was before the tool touches it.
            let snapshot_due =
                call.name.changes_things() && self.before_changing_tool(&call.name).await;
            // Taken while the call is approved and its sandbox starts; the command waits for it.
            // Such a call is taken up once the snapshot is recorded: a front end that sees its
            // start knows undo covers it, and nothing of the turn is logged between the two.
            let mut opening = snapshot_due.then(|| self.start_snapshot_before_commands()).flatten();
            if opening.is_none() {
                self.take_up(&call);
            }
            // Reset once the call is approved: waiting for the person is not the tool's time.
            let mut started = Instant::now();
            let (status, mut outcome) = if call.name == ToolName::Todo && self.state.board_on() {
                called_todo = true;
                self.update_board(&call.input)
            } else if call.name == ToolName::Todo {
                (ToolStatus::Failed, board_off(&call))
            } else {
                match self.run_tool(&call, &mut started, &mut opening).await {
                    Ok(done) => done,
                    Err((finished, why)) => {
                        stop = Some(why);
                        finished
                    }
                }
            };
            // Recorded whether or not the call ran, before its result.
            self.settle_opening(&mut opening, &call).await;
            if call.name == ToolName::Bash {
                self.look_at_repository(&mut outcome);
            }
            if call.name.changes_things() {
                settled = call.name == ToolName::Bash && !outcome.command.left_running;
            }
            let result = result_block(&call.id, &outcome);
            self.state.record_call(&result, &outcome.changes);
            self.record_result(&call, status, &outcome, started);
            if !outcome.is_error {
                self.note_steps(&call, &outcome);
            }
            if call.name == ToolName::Todo && status == ToolStatus::Succeeded {
                board_answers.push(results.len());
            }
            results.push(result);
        }
        self.state.count_round(called_todo);
        results.extend(self.state.take_board_note());
        let view = self.state.view();
        let threshold = view.nag_threshold;
        let remind = stop.is_none()
            && reminder::is_due(view.rounds_since_todo, threshold, &view.board)
            && !(view.board.is_empty() && self.state.reminded_without_board());
        if remind {
            let text = self.config.nag_message.clone();
            self.emit(AgentEvent::Reminder {
                text: text.clone(),
                rounds_since_todo: view.rounds_since_todo,
                threshold,
            });
            // The board after the reminder's words: the plan at the very end of the context.
            let board = self.state.view().board.render();
            results.push(ContentBlock::Reminder { text: format!("{text}\n\n{board}") });
            self.state.reset_rounds();
            if self.state.view().board.is_empty() {
                self.state.set_reminded_without_board(true);
            }
        }
        self.state.push_results(results, &board_answers);
        self.state.publish(&self.outbox);
        if settled && stop.is_none() {
            self.start_closing_snapshot();
        }
        stop
    }

    /// Tells of a call keel takes up (its line in the conversation, `tool_start` for `-p`) before
    /// it runs — for a call the workspace is snapshotted for, once the snapshot is recorded, so a
    /// printing front end that sees it knows undo covers what it does.
    pub(in crate::agent) fn take_up(&mut self, call: &ToolCall) {
        self.emit(AgentEvent::ToolStart {
            id: call.id.clone(),
            name: call.name.to_string(),
            input: call.input.clone(),
            summary: crate::visible::one_line(&call.summary()),
        });
    }

    /// Applies a `todo` update, either form; a rejected one leaves the board as it was. The
    /// model reads back the whole board or what changed (`board::answer`).
    fn update_board(&mut self, input: &Value) -> Finished {
        let mut board = (*self.state.view().board).clone();
        match board.apply(input) {
            Ok(answer) => {
                // After a compaction every request carries the whole board.
                let answer = if self.state.compacted() { board.render() } else { answer };
                self.state.set_board(board);
                self.emit(board_edits::todo_event(&self.state));
                (ToolStatus::Succeeded, ToolOutcome::ok(answer))
            }
            Err(err) => (ToolStatus::Failed, ToolOutcome::error(err.to_string())),
        }
    }

    /// Asks for approval if the mode wants it, then runs a workspace tool while listening for the
    /// person, setting `started` to when it began to run. The `opening` snapshot, when one is
    /// being taken, is recorded before the tool runs — a command waits for it at its gate, its
    /// sandbox starting meanwhile (`turn::undo`). `Err` carries how the call ended and why the
    /// turn must stop after it.
    async fn run_tool(
        &mut self,
        call: &ToolCall,
        started: &mut Instant,
        opening: &mut Option<Opening>,
    ) -> Result<Finished, (Finished, Stop)> {
        if let Some(problem) = argument_problem(&call.input) {
            return Ok((ToolStatus::Failed, ToolOutcome::error(problem)));
        }
        // Only commands, and plan mode's confinement, depend on what the sandbox can do. A
        // command that runs without asking does not wait for the sandbox's probe: it starts in the
        // sandbox the probe finds where it works, and its own start tells whether it came up.
        let assumed = self.assumed_sandbox(call);
        if (call.name == ToolName::Bash || self.state.view().plan_mode) && assumed.is_none() {
            self.settle_sandbox().await;
        }
        let tools = match &assumed {
            Some(sandbox) => self.tools.clone().with_sandbox(sandbox.clone()),
            None => self.tools_for_call(),
        };
        if self.state.view().plan_mode
            && let Some(why) = plan::refusal(&call.name, &call.input, tools.sandbox())
        {
            return Ok((ToolStatus::Refused(Refusal::PlanMode), ToolOutcome::error(why)));
        }
        // An MCP tool counts as read-only only when its server marks it so.
        let mcp_read_only = match &call.name {
            ToolName::Mcp(exposed) => {
                // A call its server cannot take is answered so, never put to the person.
                if let Some(answer) = self.tools.mcp().cannot_call(exposed) {
                    return Ok((ToolStatus::Failed, answer));
                }
                let read_only =
                    self.tools.mcp().find(exposed).is_some_and(|(_, tool)| tool.read_only);
                if self.state.view().plan_mode
                    && let Some(why) = plan::mcp_refusal(&call.name, read_only)
                {
                    return Ok((ToolStatus::Refused(Refusal::PlanMode), ToolOutcome::error(why)));
                }
                Some(read_only)
            }
            _ => None,
        };
        let verdict = match mcp_read_only {
            Some(read_only) => self.approvals.check_mcp(&call.name, &call.input, read_only),
            None => self.approvals.check(&call.name, &call.input),
        };
        if let Some(done) = self.repeated_step(call, &verdict).await {
            return Ok((ToolStatus::Succeeded, done));
        }
        match verdict {
            Verdict::Run => {}
            Verdict::Refuse(refusal, why) => {
                return Ok((ToolStatus::Refused(refusal), ToolOutcome::error(why)));
            }
            Verdict::Ask => match self.ask(call, opening).await {
                Decision::Once => {}
                Decision::Always => self.approvals.allow_always(&call.name, &call.input),
                Decision::Deny => {
                    return Ok((ToolStatus::Declined, ToolOutcome::error(DECLINED)));
                }
                Decision::DenyAndStop => {
                    let declined = (ToolStatus::Declined, ToolOutcome::error(DECLINED));
                    return Err((declined, Stop::Interrupted));
                }
            },
        }

        let tools = self.protect_nested_repositories(tools, &call.name).await;
        let gate = match opening {
            Some(opening) if call.name == ToolName::Bash => Some(opening.gate.clone()),
            _ => {
                self.settle_opening(opening, call).await;
                None
            }
        };
        *started = Instant::now();
        let began = *started;
        self.state.set_activity(Activity::RunningTool { name: call.name.to_string() });
        self.state.update_tool(running(call, began, ""));
        self.state.publish(&self.outbox);

        let cancel = CancellationToken::new();
        let (live_tx, mut live_rx) = mpsc::unbounded_channel();
        let ctx = ToolContext { cancel: cancel.clone(), live_output: Some(live_tx), gate };
        let run = tools.run(&call.name, &call.input, &ctx);
        tokio::pin!(run);
        let mut live = String::new();
        let mut stop = None;
        let mut outcome = loop {
            tokio::select! {
                outcome = &mut run => break outcome,
                taken = OptionFuture::from(opening.as_mut().map(|opening| &mut opening.task)),
                    if opening.is_some() =>
                {
                    if let (Some(taken), Some(opening)) = (taken, opening.take()) {
                        self.opening_taken(taken, opening.opener, call);
                    }
                }
                Some(chunk) = live_rx.recv() => {
                    live.push_str(&chunk);
                    keep_tail(&mut live, LIVE_OUTPUT_TAIL_BYTES);
                    self.state.update_tool(running(call, began, &live));
                    self.state.publish(&self.outbox);
                }
                command = self.inbox.recv(), if stop.is_none() => {
                    if let Some(why) = during_turn(&mut self.state, &self.outbox, command) {
                        cancel.cancel();
                        stop = Some(why);
                    }
                }
            }
        };
        self.tell_when_done(call, &mut outcome);
        // The time a command was held at its gate is keel's, not the command's.
        *started += outcome.command.held;
        // Its sandbox did not come up, so it never ran: it is answered as the probe's answer
        // says, as if the command had waited for it.
        if assumed.is_some() && outcome.command.sandbox_down {
            self.settle_sandbox().await;
            if let Verdict::Refuse(refusal, why) = self.approvals.check(&call.name, &call.input) {
                return Ok((ToolStatus::Refused(refusal), ToolOutcome::error(why)));
            }
        }
        self.state.set_activity(Activity::Thinking);
        match stop {
            Some(why) => {
                let mut outcome = outcome;
                outcome.is_error = true;
                if !outcome.for_model.contains(INTERRUPTED) {
                    outcome.for_model = format!("{INTERRUPTED}\n{}", outcome.for_model);
                }
                Err(((ToolStatus::Interrupted, outcome), why))
            }
            None if outcome.is_error => Ok((ToolStatus::Failed, outcome)),
            None => Ok((ToolStatus::Succeeded, outcome)),
        }
    }

    /// The tools as this call runs them: in plan mode, commands run in a read-only sandbox.
    pub(in crate::agent) fn tools_for_call(&self) -> Tools {
        if self.state.view().plan_mode {
            self.tools.confined_to(SandboxMode::ReadOnly)
        } else {
            self.tools.clone()
        }
    }

    /// Updates the tool pane and tells printing front ends how a call ended. Board updates stay
    /// out of the tool pane: the board itself is pinned beside it.
    fn record_result(
        &mut self,
        call: &ToolCall,
        status: ToolStatus,
        outcome: &ToolOutcome,
        started: Instant,
    ) {
        let duration = started.elapsed();
        self.state.mark_call(call, status, &outcome.for_model);
        if call.name != ToolName::Todo {
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
            name: call.name.to_string(),
            is_error: outcome.is_error,
            exit_code: outcome.exit_code,
            duration_ms: u64::try_from(duration.as_millis()).unwrap_or(u64::MAX),
            duration_us: u64::try_from(duration.as_micros()).unwrap_or(u64::MAX),
            output: outcome.for_model.clone(),
        });
    }
}

/// What is wrong with a tool call's arguments before any tool looks at them. Providers keep
/// arguments that were not a JSON object under a marker (see `llm::tool_input`); the scripted
/// model may hand over any value.
fn argument_problem(input: &Value) -> Option<String> {
    if let Some(message) = tool_input::invalid_input_message(input) {
        return Some(message);
    }
    let raw = match input {
        Value::Object(_) => return None,
        Value::String(raw) => raw.clone(),
        other => other.to_string(),
    };
    tool_input::invalid_input_message(&tool_input::parse(&raw))
}

/// The answer to a `todo` call with the board off (`--no-todo`): the tool was never offered, so
/// it is an unknown tool like any other.
fn board_off(call: &ToolCall) -> ToolOutcome {
    let unknown = Tools::parse(&call.name, &call.input).err();
    ToolOutcome::error(unknown.map_or_else(String::new, |err| err.to_string()))
}

fn running(call: &ToolCall, started: Instant, output: &str) -> ToolRun {
    ToolRun {
        id: call.id.clone(),
        name: call.name.to_string(),
        summary: call.summary(),
        status: ToolStatus::Running,
        exit_code: None,
        started,
        duration: None,
        output: output.into(),
    }
}

fn result_block(id: &str, outcome: &ToolOutcome) -> ContentBlock {
    ContentBlock::ToolResult {
        tool_use_id: id.to_owned(),
        content: outcome.for_model.clone(),
        is_error: outcome.is_error,
    }
}

/// Drops the start of `text` so at most `limit` bytes remain, cutting at a character boundary.
fn keep_tail(text: &mut String, limit: usize) {
    if text.len() <= limit {
        return;
    }
    let mut cut = text.len() - limit;
    while !text.is_char_boundary(cut) {
        cut += 1;
    }
    text.drain(..cut);
}
