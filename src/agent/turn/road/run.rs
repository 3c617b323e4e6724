//! The run stage: the call's tool runs — a command held at undo's gate until the opening
//! snapshot is recorded, its live output in the tool pane, the person's interrupt listened for
//! throughout. A command that started in the bwrap assumed while the sandbox's probe ran, and
//! never ran because bwrap could not set up, runs again under Landlock where the probe found
//! that instead.
//!
//! Every call runs with the conversation's handle in its context (`seat`): `todo` updates the
//! board through it and `task` runs its child through it, and what they tell the conversation
//! meanwhile — a board update to apply, a child's progress, records and approval requests — is
//! taken in here, by the one owner of the conversation's state. The person's answer to a
//! child's request goes back to that child; their interrupt reaches the children through the
//! context's cancellation.

use super::seat::{Seat, Told};
use super::{CallContext, Finished};
use crate::agent::approval::Verdict;
use crate::agent::children::Children;
use crate::agent::children::news::{self, Asking};
use crate::agent::command::Command;
use crate::agent::snapshot::{Activity, ToolStatus};
use crate::agent::turn::handle::Parts;
use crate::agent::turn::round::running;
use crate::agent::turn::undo::Opening;
use crate::agent::turn::{INTERRUPTED, during_turn};
use crate::agent::turn::{Stop, task_completed};
use crate::agent::turn::{
    handle::tools_for_call,
    hooks::keep_hook_files,
    nested_repos,
    repeated_step::tell_when_done,
    undo::{opening_taken, settle_opening},
    watches::settle_sandbox,
};
use crate::runtime::gate::Gate;
use crate::runtime::sandbox::Confinement;
use crate::runtime::sandbox::Mode as SandboxMode;
use crate::tools::{Effect, Tool, ToolCall, ToolContext, ToolOutcome, Tools};
use futures_util::future::{OptionFuture, join_all};
use std::future::poll_fn;
use std::task::Poll;
use std::time::Instant;
use tokio::sync::mpsc::{self, UnboundedReceiver};
use tokio_util::sync::CancellationToken;

/// How much of a running command's newest output the tool pane keeps.
const LIVE_OUTPUT_TAIL_BYTES: usize = 64 * 1024;

/// One call to run: its tool, what it runs on, what it waits for, when it began.
pub(in crate::agent) struct Live<'r> {
    pub tool: &'r dyn Tool,
    pub call: &'r ToolCall,
    pub tools: Tools,
    pub gate: Option<Gate>,
    pub began: Instant,
}

/// Runs an approved call; returns how it ended and why the turn must stop after it, if it
/// must.
pub(super) async fn run_call(cx: &mut CallContext<'_>) -> (Finished, Option<Stop>) {
    let shared = cx.shared;
    let (on, conv) = (&mut *cx.on, &mut cx.conv);
    let call = &on.call;
    let tools = if on.effect == Effect::RunsCommand {
        let tools = match &on.assumed {
            // Read-only rules that came on since the call was approved hold it too.
            Some(sandbox) if conv.read_only_rules().is_some() => {
                shared.tools.clone().with_sandbox(sandbox.at_most(SandboxMode::ReadOnly))
            }
            Some(sandbox) => shared.tools.clone().with_sandbox(sandbox.clone()),
            None => tools_for_call((conv.reborrow(), shared)),
        };
        let tools =
            nested_repos::protect_nested_repositories((conv.reborrow(), shared), tools).await;
        keep_hook_files(shared.services, tools)
    } else {
        shared.tools.clone()
    };
    let gate = match &on.opening {
        Some(opening) if on.effect == Effect::RunsCommand => Some(opening.gate.clone()),
        _ => {
            settle_opening(conv, &mut on.opening, call).await;
            None
        }
    };
    on.started = Instant::now();
    let live = Live { tool: &*on.tool, call, tools, gate: gate.clone(), began: on.started };
    let (mut outcome, mut stop) = run_live((conv.reborrow(), shared), live, &mut on.opening).await;
    // Started in the bwrap assumed while the probe ran, it never ran where bwrap cannot set
    // up; where the probe found Landlock instead, it runs there now.
    if stop.is_none()
        && on.assumed.is_some()
        && outcome.command.sandbox_down
        && confined_instead((conv.reborrow(), shared), &*on.tool, call).await
    {
        on.assumed = None;
        let tools = tools_for_call((conv.reborrow(), shared));
        let tools =
            nested_repos::protect_nested_repositories((conv.reborrow(), shared), tools).await;
        on.started = Instant::now();
        let live = Live { tool: &*on.tool, call, tools, gate, began: on.started };
        (outcome, stop) = run_live((conv.reborrow(), shared), live, &mut on.opening).await;
    }
    tell_when_done(conv.state, &*on.tool, call, &mut outcome);
    // The time a command was held at its gate is keel's, not the command's.
    on.started += outcome.command.held;
    conv.state.set_activity(Activity::Thinking);
    (finished(outcome, stop), stop)
}

/// Whether a command whose assumed sandbox did not come up can run now, in the sandbox the
/// probe found (waited for here): one that confines it, where the approval rules still let
/// it run unasked.
async fn confined_instead((conv, shared): Parts<'_>, tool: &dyn Tool, call: &ToolCall) -> bool {
    let services = shared.services;
    settle_sandbox(services, conv.state).await;
    let toolset = conv.toolset;
    let confined = tools_for_call((conv, shared)).sandbox().confinement() == Confinement::Confined;
    confined && services.approvals().check(tool, &call.input, toolset) == Verdict::Run
}

/// Runs one call to its end (see [`run_lives`]).
pub(in crate::agent) async fn run_live(
    parts: Parts<'_>,
    live: Live<'_>,
    opening: &mut Option<Opening>,
) -> (ToolOutcome, Option<Stop>) {
    let (mut outcomes, stop) = run_lives(parts, vec![live], opening).await;
    (outcomes.pop().unwrap_or_default(), stop)
}

/// Runs `lives` at once to their ends, each with the conversation's handle: their live output
/// into the tool pane, what they tell the conversation taken in, the opening snapshot (when
/// one is taken, for the first) recorded as it is written, the person's interrupt listened
/// for. Returns how each ended, in order, and why the turn must stop, if it must.
pub(in crate::agent) async fn run_lives(
    (mut conv, shared): Parts<'_>,
    lives: Vec<Live<'_>>,
    opening: &mut Option<Opening>,
) -> (Vec<ToolOutcome>, Option<Stop>) {
    for live in lives.iter().filter(|live| in_pane(live)) {
        conv.state.set_activity(Activity::RunningTool { name: live.call.name.clone() });
        conv.state.update_tool(running(live.call, live.began, ""));
        conv.state.publish(conv.outbox);
    }
    // The children read the parent's plan mode at each call: said now, and again after each
    // command the person sends while they run.
    let parent = !conv.config.is_child();
    if parent {
        conv.bounds.set_plan_mode(conv.state.view().plan_mode);
    }
    let cancel = CancellationToken::new();
    let (told_tx, mut told) = mpsc::unbounded_channel();
    let conversation = (conv.config, conv.provider, conv.toolset);
    let children =
        Children::new(conversation, conv.bounds, shared.services, told_tx.clone(), cancel.clone());
    let seat = Seat::new(told_tx, children);
    let (mut outputs, ctxs): (Vec<_>, Vec<_>) = lives
        .iter()
        .map(|live| {
            let (live_tx, live_rx) = mpsc::unbounded_channel();
            let ctx = ToolContext {
                cancel: cancel.clone(),
                live_output: Some(live_tx),
                gate: live.gate.clone(),
                conversation: Some(&seat),
            };
            (live_rx, ctx)
        })
        .unzip();
    let runs = join_all(
        lives.iter().zip(&ctxs).map(|(live, ctx)| live.tools.run_tool(live.tool, live.call, ctx)),
    );
    tokio::pin!(runs);
    let mut shown = vec![String::new(); lives.len()];
    let mut asking = Asking::default();
    let mut stop = None;
    let outcomes = loop {
        tokio::select! {
            outcomes = &mut runs => break outcomes,
            taken = OptionFuture::from(opening.as_mut().map(|opening| &mut opening.task)),
                if opening.is_some() =>
            {
                if let (Some(taken), Some(opening), Some(live)) =
                    (taken, opening.take(), lives.first())
                {
                    opening_taken(&mut conv, taken, opening.opener, live.call);
                }
            }
            (index, chunk) = next_output(&mut outputs) => {
                let (live, text) = (&lives[index], &mut shown[index]);
                text.push_str(&chunk);
                keep_tail(text, LIVE_OUTPUT_TAIL_BYTES);
                conv.state.update_tool(running(live.call, live.began, text));
                conv.state.publish(conv.outbox);
            }
            Some(told) = told.recv() => {
                if let Some(why) = take_told((conv.reborrow(), shared), told, &mut asking, stop).await {
                    stop = stop.or(Some(why));
                    seat.children.cut(why);
                }
            }
            command = conv.inbox.recv(), if stop.is_none() => {
                if let Some(Command::Approve { id, decision }) = &command
                    && asking.relay(conv.state, conv.outbox, id, *decision)
                {
                    continue;
                }
                if let Some(why) = during_turn(conv.state, conv.outbox, shared.services, command) {
                    seat.children.cut(why);
                    stop = Some(why);
                }
                if parent {
                    conv.bounds.set_plan_mode(conv.state.view().plan_mode);
                }
            }
        }
    };
    // What the calls told before they ended and was not taken in yet.
    while let Ok(told) = told.try_recv() {
        if let Some(why) = take_told((conv.reborrow(), shared), told, &mut asking, stop).await {
            stop = stop.or(Some(why));
        }
    }
    asking.close(conv.state);
    (outcomes, stop)
}

/// Takes in what a running call told; why the turn must stop, if the person interrupted a
/// board update's hooks. Once the turn is stopping (`stop`), the board takes no new work:
/// a `todo` update or an item to start is refused, the board as it was.
async fn take_told(
    parts: Parts<'_>,
    told: Told,
    asking: &mut Asking,
    stop: Option<Stop>,
) -> Option<Stop> {
    match told {
        Told::Board { update, answer } if stop.is_some() && update.starts_work() => {
            let _ = answer.send(Err(INTERRUPTED.to_owned()));
            None
        }
        Told::Board { update, answer } => {
            let (answered, stop) = task_completed::take_board(parts, update).await;
            let _ = answer.send(answered);
            stop
        }
        Told::Child(news) => {
            let (conv, _) = parts;
            news::take(conv.state, conv.outbox, asking, news);
            None
        }
    }
}

/// Whether a call has a line in the tool pane while it runs: every one but a board update.
fn in_pane(live: &Live<'_>) -> bool {
    live.tool.effect_of(&live.call.input).shown_in_tool_pane()
}

/// How a call ended, from its outcome and the turn's stop: interrupted, failed or done.
pub(super) fn finished(mut outcome: ToolOutcome, stop: Option<Stop>) -> Finished {
    match stop {
        Some(_) => {
            outcome.is_error = true;
            if !outcome.for_model.contains(INTERRUPTED) {
                outcome.for_model = format!("{INTERRUPTED}\n{}", outcome.for_model);
            }
            (ToolStatus::Interrupted, outcome)
        }
        None if outcome.cut_short => (ToolStatus::Interrupted, outcome),
        None if outcome.is_error => (ToolStatus::Failed, outcome),
        None => (ToolStatus::Succeeded, outcome),
    }
}

/// The next chunk of live output any of the calls wrote, with the call's index.
async fn next_output(outputs: &mut [UnboundedReceiver<String>]) -> (usize, String) {
    poll_fn(|cx| {
        for (index, output) in outputs.iter_mut().enumerate() {
            if let Poll::Ready(Some(chunk)) = output.poll_recv(cx) {
                return Poll::Ready((index, chunk));
            }
        }
        Poll::Pending
    })
    .await
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
