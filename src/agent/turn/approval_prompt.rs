//! The approval prompt: a call the mode asks about is shown to the person (with the diff it
//! would make, or the command and its sandbox) and waits for their answer, while the board, plan
//! mode and the approval mode stay editable and new prompts queue.

use crate::agent::command::{Command, Decision};
use crate::agent::snapshot::{Activity, ApprovalRequest, Asking};
use crate::agent::turn::handle::Parts;
use crate::agent::turn::road::CallContext;
use crate::agent::turn::undo::settle_opening;
use crate::agent::{approval_switch, board_edits};
use crate::runtime::sandbox::Sandbox;
use crate::tools::{Effect, preview};
use std::sync::Arc;

/// Shows the approval request for the call and waits for the person's answer; the call is taken
/// up first (its `opening` snapshot settled), so the person sees it before they are asked.
pub(in crate::agent) async fn ask(cx: &mut CallContext<'_>) -> Decision {
    let (on, tools) = (&mut *cx.on, cx.shared.tools);
    settle_opening(&mut cx.conv, &mut on.opening, &on.call).await;
    let (call, tool) = (&on.call, &*on.tool);
    let sandbox = cx.shared.tools_for(cx.conv.read_only_rules()).sandbox().clone();
    let asking = match on.effect {
        Effect::RunsCommand if sandbox.problem().is_some() => Asking::UnconfinedCommand,
        Effect::RunsCommand => Asking::Command,
        Effect::ReachesOutside { marked_read_only } => Asking::Call { read_only: marked_read_only },
        _ => Asking::Change,
    };
    let request = ApprovalRequest {
        id: call.id.clone(),
        tool: call.name.clone(),
        asking,
        detail: tool.detail(call, tools),
        diff: preview::preview(tool, &call.input, tools.workspace()),
        always: cx.shared.services.approvals().always_covers(tool, &call.input),
        sandbox: (on.effect == Effect::RunsCommand).then(|| sandbox_words(&sandbox)),
        agent: None,
        check: None,
    };
    wait_for_answer((cx.conv.reborrow(), cx.shared), request).await
}

/// Shows `request` in the approval box and waits for the person's answer, while the board and
/// plan mode stay editable and new prompts queue.
pub(in crate::agent) async fn wait_for_answer(
    (conv, shared): Parts<'_>,
    request: ApprovalRequest,
) -> Decision {
    let id = request.id.clone();
    let request = Arc::new(request);
    // A child's request goes to its parent's box, where the person answers it.
    conv.outbox.ask(&request);
    conv.state.set_pending_approval(Some(request));
    conv.state.set_activity(Activity::AwaitingApproval);
    conv.state.publish(conv.outbox);
    let decision = loop {
        match conv.inbox.recv().await {
            Some(Command::Approve { id: answered, decision }) if answered == id => {
                break decision;
            }
            Some(Command::Cancel) => break Decision::DenyAndStop,
            None | Some(Command::Quit) => {
                // Leaving: refuse, and let the loop above notice the closed channel.
                break Decision::DenyAndStop;
            }
            Some(Command::Submit(prompt)) => {
                conv.state.queue(prompt);
                conv.state.publish(conv.outbox);
            }
            Some(Command::EditBoard(edit)) => {
                board_edits::edit(conv.state, conv.outbox, &edit);
            }
            Some(Command::PlanMode(on)) => {
                board_edits::plan_mode(conv.state, conv.outbox, on);
            }
            Some(Command::Approval(mode)) => {
                approval_switch::switch(shared.services, conv.state, conv.outbox, mode);
            }
            Some(_) => {}
        }
    };
    conv.state.set_pending_approval(None);
    conv.state.publish(conv.outbox);
    decision
}

/// The sandbox a command would run in, in words for the box: where there is none, that the
/// command would run unconfined if allowed.
pub(in crate::agent) fn sandbox_words(sandbox: &Sandbox) -> String {
    match sandbox.problem() {
        Some(why) => format!(
            "no sandbox — allowed, this command runs unconfined, as you: it can read and change \
             anything you can and reach the network ({why})"
        ),
        None => sandbox.label(),
    }
}
