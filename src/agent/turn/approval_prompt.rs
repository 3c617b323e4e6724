//! The approval prompt: a call the mode asks about is shown to the person (with the diff it
//! would make, or the command and its sandbox) and waits for their answer, while the board, plan
//! mode and the approval mode stay editable and new prompts queue.

use crate::agent::command::{Command, Decision};
use crate::agent::snapshot::{Activity, ApprovalRequest, Asking};
use crate::agent::turn::Turn;
use crate::agent::turn::road::OnRoad;
use crate::agent::{approval_switch, board_edits};
use crate::runtime::sandbox::Sandbox;
use crate::tools::{Effect, preview};
use std::sync::Arc;

impl Turn<'_> {
    /// Shows the approval request and waits for the person's answer; the call is taken up
    /// first (its `opening` snapshot settled), so the person sees it before they are asked.
    pub(in crate::agent) async fn ask(&mut self, on: &mut OnRoad) -> Decision {
        let (call, tool) = (&on.call, &*on.tool);
        self.settle_opening(&mut on.opening, call).await;
        let sandbox = self.tools_for_call().sandbox().clone();
        let asking = match on.effect {
            Effect::RunsCommand if sandbox.problem().is_some() => Asking::UnconfinedCommand,
            Effect::RunsCommand => Asking::Command,
            Effect::ReachesOutside { marked_read_only } => {
                Asking::Call { read_only: marked_read_only }
            }
            _ => Asking::Change,
        };
        let request = ApprovalRequest {
            id: call.id.clone(),
            tool: call.name.clone(),
            asking,
            detail: tool.detail(call, self.tools),
            diff: preview::preview(tool, &call.input, self.tools.workspace()),
            always: self.services.approvals().always_covers(tool, &call.input),
            sandbox: (on.effect == Effect::RunsCommand).then(|| sandbox_words(&sandbox)),
            agent: None,
        };
        self.wait_for_answer(request).await
    }

    /// Shows `request` in the approval box and waits for the person's answer, while the board
    /// and plan mode stay editable and new prompts queue.
    pub(in crate::agent) async fn wait_for_answer(&mut self, request: ApprovalRequest) -> Decision {
        let id = request.id.clone();
        self.state.set_pending_approval(Some(Arc::new(request)));
        self.state.set_activity(Activity::AwaitingApproval);
        self.state.publish(self.outbox);
        let decision = loop {
            match self.inbox.recv().await {
                Some(Command::Approve { id: answered, decision }) if answered == id => {
                    break decision;
                }
                Some(Command::Cancel) => break Decision::DenyAndStop,
                None | Some(Command::Quit) => {
                    // Leaving: refuse, and let the loop above notice the closed channel.
                    break Decision::DenyAndStop;
                }
                Some(Command::Submit(prompt)) => {
                    self.state.queue(prompt);
                    self.state.publish(self.outbox);
                }
                Some(Command::EditBoard(edit)) => {
                    board_edits::edit(self.state, self.outbox, &edit);
                }
                Some(Command::PlanMode(on)) => {
                    board_edits::plan_mode(self.state, self.outbox, on);
                }
                Some(Command::Approval(mode)) => {
                    approval_switch::switch(self.services, self.state, self.outbox, mode);
                }
                Some(_) => {}
            }
        };
        self.state.set_pending_approval(None);
        self.state.publish(self.outbox);
        decision
    }
}

/// The sandbox a command would run in, in words for the box: where there is none, that the
/// command would run unconfined if allowed.
fn sandbox_words(sandbox: &Sandbox) -> String {
    match sandbox.problem() {
        Some(why) => format!(
            "no sandbox — allowed, this command runs unconfined, as you: it can read and change \
             anything you can and reach the network ({why})"
        ),
        None => sandbox.label(),
    }
}
