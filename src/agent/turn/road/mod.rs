//! One call's road: every tool call — `todo` and the MCP servers' tools included — takes the same
//! stages, in this order, each deciding by what the call's tool says of itself (`tools::Tool`).
//! Each stage is a function of the call's own context ([`CallContext`]: the call on its road, a
//! handle on its conversation, the workspace's services it may use), never of the whole turn:
//!
//! 1. **prepare** (`prepare`): the arguments checked, plan mode's refusal;
//! 2. **before** (`before`): the PreToolUse hooks — a block ends the call, an `updatedInput`
//!    replaces its input (prepared again), an allow or ask is handed to approval;
//! 3. **approve** (`approve`): the approval mode's verdict, a repeated step answered as such,
//!    the person asked;
//! 4. **run** (`run`): the tool runs with the conversation's handle in its context (`seat`:
//!    `todo` updates the board through it, `task` runs a child) — the command's gate, its live
//!    output, what the call tells the conversation, the person's interrupt;
//! 5. **after** (`after`): the PostToolUse hooks, and what the hooks said for the model put
//!    with the result;
//! 6. **settle** (`settle`): a sandbox that did not come up, the repositories a command may have
//!    touched, the steps done, and the record of how the call ended.
//!
//! A stage that ends a call hands it straight to settling: every call gets exactly one result.
//! The calls of one response that run beside each other (`task`'s explorers) take their roads
//! side by side (`together`): each is prepared and approved in turn, they run at once, and each
//! is settled in turn.
//! Undo's opening snapshot of the workspace is taken alongside, from the call's taking up to its
//! run (`turn::undo`).

mod after;
mod approve;
mod before;
mod prepare;
mod run;
pub(in crate::agent) mod seat;
mod settle;
mod together;

use run::run_call;
pub(in crate::agent) use run::{Live, run_live};
pub(in crate::agent) use together::{runs_beside_others, take_calls_together};

use crate::agent::snapshot::ToolStatus;
use crate::agent::turn::handle::{Handle, Parts, Shared};
use crate::agent::turn::undo::Opening;
use crate::agent::turn::{Stop, Turn};
use crate::hooks::Permission;
use crate::message::ContentBlock;
use crate::runtime::Sandbox;
use crate::tools::{Effect, Tool, ToolCall, ToolOutcome, Tools};
pub(in crate::agent) use after::after;
use approve::approve;
use before::before;
use prepare::prepare;
pub(in crate::agent) use settle::{settle, settle_unknown};
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

impl OnRoad {
    /// `call` of `tool` at the start of its road, undo's `opening` snapshot being taken for it.
    pub fn new(call: ToolCall, tool: Arc<dyn Tool>, opening: Option<Opening>) -> Self {
        let effect = tool.effect_of(&call.input);
        Self {
            call,
            tool,
            effect,
            assumed: None,
            started: Instant::now(),
            opening,
            permission: None,
            hook_notes: Vec::new(),
        }
    }
}

/// Where a stage leaves a call: on to the next stage, or ended there (and why the turn must
/// stop, when it must).
type Stage = Result<(), (Finished, Option<Stop>)>;

/// A call on its road with what it may touch: the stages are functions of it.
pub(in crate::agent) struct CallContext<'c> {
    pub on: &'c mut OnRoad,
    /// Its conversation.
    pub conv: Handle<'c>,
    /// The workspace's services it may use.
    pub shared: Shared<'c>,
}

impl<'c> CallContext<'c> {
    /// The context of `on`, over a conversation's parts (`Turn::parts`).
    pub fn new(on: &'c mut OnRoad, (conv, shared): Parts<'c>) -> Self {
        Self { on, conv, shared }
    }

    /// The conversation's parts, for an errand of the call's.
    pub fn parts(&mut self) -> Parts<'_> {
        (self.conv.reborrow(), self.shared)
    }

    /// The tools as this call runs them: under read-only rules (plan mode, a child's), commands
    /// run in a read-only sandbox.
    pub fn tools_for_call(&self) -> Tools {
        self.shared.tools_for(self.conv.read_only_rules())
    }
}

/// Takes one call down its road, and answers it.
pub(in crate::agent) async fn take_call(turn: &mut Turn<'_>, call: ToolCall) -> Taken {
    let tool = turn.toolset.resolve(&call);
    let effect = tool.as_ref().ok().map(|tool| tool.effect_of(&call.input));
    // Undo must know the workspace as it was before the tool touches it. The snapshot is taken
    // while the call is approved and its sandbox starts; the command waits for it, and is taken
    // up once it is recorded: a front end that sees its start knows undo covers it.
    let snapshot_due = match effect {
        Some(effect) if effect.changes_workspace() => {
            turn.undo.before_changing_tool(turn.state, effect).await
        }
        _ => false,
    };
    let opening =
        snapshot_due.then(|| turn.undo.start_snapshot_before_commands(turn.state)).flatten();
    if opening.is_none() {
        turn.parts().0.take_up(&call);
    }
    let tool = match tool {
        Ok(tool) => tool,
        Err(unknown) => {
            let failed = (ToolStatus::Failed, ToolOutcome::error(unknown.to_string()));
            return settle_unknown(turn.parts(), &call, failed);
        }
    };
    let mut on = OnRoad::new(call, tool, opening);
    let mut cx = CallContext::new(&mut on, turn.parts());
    let (finished, stop) = match drive(&mut cx).await {
        Ok(ran) => ran,
        Err(ended) => ended,
    };
    settle(&mut cx, finished, stop).await
}

/// The stages from prepare to after; `Err` when a stage ended the call before it ran.
async fn drive(
    cx: &mut CallContext<'_>,
) -> Result<(Finished, Option<Stop>), (Finished, Option<Stop>)> {
    ready(cx).await?;
    let ran = run_call(cx).await;
    Ok(after(cx, ran).await)
}

/// The stages before run: prepare, before, approve; `Err` when one ended the call.
pub(in crate::agent) async fn ready(cx: &mut CallContext<'_>) -> Stage {
    prepare(cx).await?;
    before(cx).await?;
    approve(cx).await
}

/// The read-only rules a call is held to, and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::agent) enum Rules<'a> {
    /// The conversation is in plan mode.
    PlanMode,
    /// A child's rules, for this reason: it explores, or its parent is in plan mode.
    Child(&'a str),
}
