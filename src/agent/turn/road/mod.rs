//! One call's road: every tool call — `todo` and the MCP servers' tools included — takes the same
//! stages, in this order, each deciding by what the call's tool says of itself (`tools::Tool`):
//!
//! 1. **prepare** (`prepare`): the arguments checked, plan mode's refusal;
//! 2. **before** (`before`): the PreToolUse hooks — a block ends the call, an `updatedInput`
//!    replaces its input (prepared again), an allow or ask is handed to approval;
//! 3. **approve** (`approve`): the approval mode's verdict, a repeated step answered as such,
//!    the person asked;
//! 4. **run** (`run`): the command's gate, its live output, the person's interrupt — or, for a
//!    tool that plans, the conversation's board taking the update (its TaskCompleted hooks
//!    first); for one that delegates, a child conversation doing the step (`agent::children`);
//! 5. **after** (`after`): the PostToolUse hooks, and what the hooks said for the model put
//!    with the result;
//! 6. **settle** (`settle`): a sandbox that did not come up, the repositories a command may have
//!    touched, the steps done, and the record of how the call ended.
//!
//! A stage that ends a call hands it straight to settling: every call gets exactly one result.
//! The explorers of one response take their roads side by side (`together`): each is prepared
//! and approved in turn, they run at once, and each is settled in turn.
//! Undo's opening snapshot of the workspace is taken alongside, from the call's taking up to its
//! run (`turn::undo`).

mod after;
mod approve;
mod before;
mod prepare;
mod run;
mod settle;
mod together;

use crate::agent::children;
use crate::agent::snapshot::ToolStatus;
use crate::agent::turn::undo::Opening;
use crate::agent::turn::{Stop, Turn};
use crate::hooks::Permission;
use crate::message::ContentBlock;
use crate::runtime::Sandbox;
use crate::runtime::sandbox::Mode as SandboxMode;
use crate::tools::task::Delegation;
use crate::tools::{Effect, Tool, ToolCall, ToolOutcome, ToolSet, Tools};
use std::sync::Arc;
use std::time::Instant;

/// How one call ended: what the tool pane shows and what the model reads.
pub(in crate::agent) type Finished = (ToolStatus, ToolOutcome);

/// What a round learns of one call taken down its road.
pub(in crate::agent) struct Taken {
    /// The history's answer to it.
    pub result: ContentBlock,
    /// What its tool does; `None` for a name no tool has, or a call not run.
    pub effect: Option<Effect>,
    /// A command left processes running.
    pub left_running: bool,
    /// The turn must stop after it: the person interrupted, or declined and stopped.
    pub stop: Option<Stop>,
}

/// A call on its road: what the stages work on.
pub(in crate::agent) struct OnRoad {
    /// The call as it runs: a PreToolUse hook may have changed its input.
    pub call: ToolCall,
    pub tool: Arc<dyn Tool>,
    pub effect: Effect,
    /// The sandbox a command starts in before the sandbox's probe has answered
    /// (`Agent::assumed_sandbox`); `None` once it has, or for anything else.
    pub assumed: Option<Sandbox>,
    /// When the tool began to run: reset once the call is approved, since waiting for the
    /// person is not the tool's time.
    pub started: Instant,
    /// Undo's snapshot of the workspace before the turn's first command, being taken.
    pub opening: Option<Opening>,
    /// What the PreToolUse hooks decided for approval: run unasked, or ask the person.
    pub permission: Option<Permission>,
    /// What the hooks said for the model, put after the call's result once it ran.
    pub hook_notes: Vec<String>,
}

/// Where a stage leaves a call: on to the next stage, or ended there (and why the turn must
/// stop, when it must).
type Stage = Result<(), (Finished, Option<Stop>)>;

impl Turn<'_> {
    /// Takes one call down its road, and answers it.
    pub(in crate::agent) async fn take_call(&mut self, call: ToolCall) -> Taken {
        let tool = self.toolset.resolve(&call);
        let effect = tool.as_ref().ok().map(|tool| tool.effect());
        // Undo must know the workspace as it was before the tool touches it. The snapshot is
        // taken while the call is approved and its sandbox starts; the command waits for it, and
        // is taken up once it is recorded: a front end that sees its start knows undo covers it.
        let snapshot_due = match effect {
            Some(effect) if changes_workspace(effect, &call) => {
                self.before_changing_tool(effect).await
            }
            _ => false,
        };
        let opening = snapshot_due.then(|| self.start_snapshot_before_commands()).flatten();
        if opening.is_none() {
            self.take_up(&call);
        }
        let tool = match tool {
            Ok(tool) => tool,
            Err(unknown) => {
                let failed = (ToolStatus::Failed, ToolOutcome::error(unknown.to_string()));
                return self.settle_unknown(&call, failed).await;
            }
        };
        let effect = tool.effect();
        let mut on = OnRoad {
            call,
            tool,
            effect,
            assumed: None,
            started: Instant::now(),
            opening,
            permission: None,
            hook_notes: Vec::new(),
        };
        let (finished, stop) = match self.drive(&mut on).await {
            Ok(ran) => ran,
            Err(ended) => ended,
        };
        self.settle(on, finished, stop).await
    }

    /// The stages from prepare to after; `Err` when a stage ended the call before it ran.
    async fn drive(
        &mut self,
        on: &mut OnRoad,
    ) -> Result<(Finished, Option<Stop>), (Finished, Option<Stop>)> {
        self.ready(on).await?;
        let ran = self.run_call(on).await;
        Ok(self.after(on, ran).await)
    }

    /// The stages before run: prepare, before, approve; `Err` when one ended the call.
    pub(in crate::agent) async fn ready(&mut self, on: &mut OnRoad) -> Stage {
        self.prepare(on).await?;
        self.before(on).await?;
        self.approve(on).await
    }

    /// The tools as a call runs them: under read-only rules (plan mode, a child's), commands run
    /// in a read-only sandbox.
    pub(in crate::agent) fn tools_for_call(&self) -> Tools {
        if self.read_only_rules().is_some() {
            self.tools.confined_to(SandboxMode::ReadOnly)
        } else {
            self.tools.clone()
        }
    }
}

/// The read-only rules a call is held to, and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::agent) enum Rules<'a> {
    /// The conversation is in plan mode.
    PlanMode,
    /// A child's rules, for this reason: it explores, or its parent is in plan mode.
    Child(&'a str),
}

impl<'a> Turn<'a> {
    /// The read-only rules this conversation's calls are held to at this moment, if any: its own
    /// plan mode; a child's tool set's (an explorer, or a child started under plan mode); or, for
    /// a child, its parent's plan mode as the parent said it last (`turn::bounds`), so that the
    /// person's Shift+Tab reaches a running child at its next call.
    pub(in crate::agent) fn read_only_rules(&self) -> Option<Rules<'a>> {
        let toolset: &'a ToolSet = self.toolset;
        if let Some(why) = toolset.read_only() {
            return Some(Rules::Child(why));
        }
        if self.config.is_child() && self.bounds.plan_mode() {
            return Some(Rules::Child(children::UNDER_PLAN_MODE));
        }
        self.state.view().plan_mode.then_some(Rules::PlanMode)
    }
}

/// Whether a call of a tool with `effect` may change the workspace: undo's group begins before
/// it. A general child (`task`) may, like a command: what it does is snapshotted around it.
fn changes_workspace(effect: Effect, call: &ToolCall) -> bool {
    match effect {
        Effect::Delegates => Delegation::decode(&call.input).is_ok_and(|task| task.may_change()),
        effect => effect.changes_things(),
    }
}
