//! The approval prompt: a call the mode asks about is shown to the person (with the diff it
//! would make, or the command and its sandbox) and waits for their answer, while the board and
//! plan mode stay editable and new prompts queue.

use crate::agent::snapshot::{Activity, ApprovalRequest};
use crate::agent::turn::Turn;
use crate::agent::turn::road::OnRoad;
use crate::agent::{Command, Decision, board_edits};
use crate::tools::{Effect, preview};
use std::sync::Arc;

impl Turn<'_> {
    /// Shows the approval request and waits for the person's answer; the call is taken up
    /// first (its `opening` snapshot settled), so the person sees it before they are asked.
    pub(in crate::agent) async fn ask(&mut self, on: &mut OnRoad) -> Decision {
        let (call, tool) = (&on.call, &*on.tool);
        self.settle_opening(&mut on.opening, call).await;
        let command = on.effect == Effect::RunsCommand;
        self.state.set_pending_approval(Some(Arc::new(ApprovalRequest {
            id: call.id.clone(),
            tool: call.name.clone(),
            detail: tool.detail(call, self.tools),
            diff: preview::preview(tool, &call.input, self.tools.workspace()),
            always: self.services.approvals().always_covers(tool, &call.input),
            sandbox: command.then(|| self.tools_for_call().sandbox().label()),
            agent: None,
        })));
        self.state.set_activity(Activity::AwaitingApproval);
        self.state.publish(self.outbox);
        let decision = loop {
            match self.inbox.recv().await {
                Some(Command::Approve { id, decision }) if id == call.id => break decision,
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
                Some(_) => {}
            }
        };
        self.state.set_pending_approval(None);
        self.state.publish(self.outbox);
        decision
    }
}
