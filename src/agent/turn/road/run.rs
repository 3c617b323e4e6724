//! The run stage: a tool that plans hands its update to the conversation's board, one that
//! delegates its step to a child conversation (`agent::children`); any other runs
//! in the workspace — a command held at undo's gate until the opening snapshot is recorded, its
//! live output in the tool pane, the person's interrupt listened for throughout. A command that
//! started in the bwrap assumed while the sandbox's probe ran, and never ran because bwrap could
//! not set up, runs again under Landlock where the probe found that instead.

use super::{Finished, OnRoad};
use crate::agent::approval::Verdict;
use crate::agent::snapshot::{Activity, ToolStatus};
use crate::agent::turn::round::running;
use crate::agent::turn::undo::Opening;
use crate::agent::turn::{INTERRUPTED, during_turn};
use crate::agent::turn::{Stop, Turn};
use crate::runtime::gate::Gate;
use crate::runtime::sandbox::Confinement;
use crate::runtime::sandbox::Mode as SandboxMode;
use crate::tools::{Effect, Tool, ToolCall, ToolContext, ToolOutcome, Tools};
use futures_util::future::OptionFuture;
use std::time::Instant;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// How much of a running command's newest output the tool pane keeps.
const LIVE_OUTPUT_TAIL_BYTES: usize = 64 * 1024;

impl Turn<'_> {
    /// Runs an approved call; returns how it ended and why the turn must stop after it, if it
    /// must.
    pub(super) async fn run_call(&mut self, on: &mut OnRoad) -> (Finished, Option<Stop>) {
        let call = &on.call;
        if on.effect == Effect::Plans {
            // The board is the conversation's own: it takes the update itself.
            let (outcome, stop) = self.update_board(&call.id, &call.input).await;
            let status = match (&stop, outcome.is_error) {
                (Some(_), _) => ToolStatus::Interrupted,
                (None, true) => ToolStatus::Failed,
                (None, false) => ToolStatus::Succeeded,
            };
            return ((status, outcome), stop);
        }
        let tools = if on.effect == Effect::RunsCommand {
            let tools = match &on.assumed {
                // Read-only rules that came on since the call was approved hold it too.
                Some(sandbox) if self.read_only_rules().is_some() => {
                    self.tools.clone().with_sandbox(sandbox.at_most(SandboxMode::ReadOnly))
                }
                Some(sandbox) => self.tools.clone().with_sandbox(sandbox.clone()),
                None => self.tools_for_call(),
            };
            let tools = self.protect_nested_repositories(tools).await;
            self.keep_hook_files(tools)
        } else {
            self.tools.clone()
        };
        let gate = match &on.opening {
            Some(opening) if on.effect == Effect::RunsCommand => Some(opening.gate.clone()),
            _ => {
                self.settle_opening(&mut on.opening, call).await;
                None
            }
        };
        if on.effect == Effect::Delegates {
            // A child is a conversation of the parent's: it runs the step itself
            // (`agent::children`), once undo's snapshot before it is recorded.
            on.started = Instant::now();
            self.state.update_tool(running(call, on.started, ""));
            let mut answered = self.delegate(&[call]).await;
            return answered.pop().unwrap_or_else(|| {
                ((ToolStatus::Failed, crate::tools::ToolOutcome::error("No child ran.")), None)
            });
        }
        on.started = Instant::now();
        let (mut outcome, mut stop) =
            self.run_live(&*on.tool, call, &tools, gate.clone(), &mut on.opening, on.started).await;
        // Started in the bwrap assumed while the probe ran, it never ran where bwrap cannot set
        // up; where the probe found Landlock instead, it runs there now.
        if stop.is_none()
            && on.assumed.is_some()
            && outcome.command.sandbox_down
            && self.confined_instead(&*on.tool, call).await
        {
            on.assumed = None;
            let tools = self.protect_nested_repositories(self.tools_for_call()).await;
            on.started = Instant::now();
            (outcome, stop) =
                self.run_live(&*on.tool, call, &tools, gate, &mut on.opening, on.started).await;
        }
        self.tell_when_done(&*on.tool, call, &mut outcome);
        // The time a command was held at its gate is keel's, not the command's.
        on.started += outcome.command.held;
        self.state.set_activity(Activity::Thinking);
        match stop {
            Some(why) => {
                outcome.is_error = true;
                if !outcome.for_model.contains(INTERRUPTED) {
                    outcome.for_model = format!("{INTERRUPTED}\n{}", outcome.for_model);
                }
                ((ToolStatus::Interrupted, outcome), Some(why))
            }
            None if outcome.is_error => ((ToolStatus::Failed, outcome), None),
            None => ((ToolStatus::Succeeded, outcome), None),
        }
    }

    /// Whether a command whose assumed sandbox did not come up can run now, in the sandbox the
    /// probe found (waited for here): one that confines it, where the approval rules still let
    /// it run unasked.
    async fn confined_instead(&mut self, tool: &dyn Tool, call: &ToolCall) -> bool {
        self.settle_sandbox().await;
        let confined = self.tools_for_call().sandbox().confinement() == Confinement::Confined;
        confined && self.services.approvals().check(tool, &call.input, self.toolset) == Verdict::Run
    }

    /// Runs `call` of `tool` on `tools` to its end, from `began`: its live output into the tool
    /// pane, the opening snapshot (when one is taken) recorded as it is written, the person's
    /// interrupt listened for. Returns how it ended, and why the turn must stop, if it must.
    pub(in crate::agent) async fn run_live(
        &mut self,
        tool: &dyn Tool,
        call: &ToolCall,
        tools: &Tools,
        gate: Option<Gate>,
        opening: &mut Option<Opening>,
        began: Instant,
    ) -> (ToolOutcome, Option<Stop>) {
        self.state.set_activity(Activity::RunningTool { name: call.name.clone() });
        self.state.update_tool(running(call, began, ""));
        self.state.publish(self.outbox);
        let cancel = CancellationToken::new();
        let (live_tx, mut live_rx) = mpsc::unbounded_channel();
        let ctx = ToolContext { cancel: cancel.clone(), live_output: Some(live_tx), gate };
        let run = tools.run_tool(tool, call, &ctx);
        tokio::pin!(run);
        let mut live = String::new();
        let mut stop = None;
        let outcome = loop {
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
                    self.state.publish(self.outbox);
                }
                command = self.inbox.recv(), if stop.is_none() => {
                    let services = self.services;
                    if let Some(why) = during_turn(self.state, self.outbox, services, command) {
                        cancel.cancel();
                        stop = Some(why);
                    }
                }
            }
        };
        (outcome, stop)
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
