//! The settle stage, for every call however it ended: a command whose sandbox did not come up
//! answered as the sandbox's probe says; undo's opening snapshot recorded; what a command may
//! have left in the workspace's repository looked at; the steps the call did to files noted; and
//! the call recorded — in the session log, the tool pane, and for the front ends.

use super::{Finished, OnRoad, Taken};
use crate::agent::approval::Verdict;
use crate::agent::snapshot::ToolStatus;
use crate::agent::turn::round::result_block;
use crate::agent::turn::{Stop, Turn};
use crate::tools::{Effect, ToolCall, ToolOutcome};
use std::time::Instant;

impl Turn<'_> {
    /// Settles a call that took its road (however far it went).
    pub(super) async fn settle(
        &mut self,
        mut on: OnRoad,
        (mut status, mut outcome): Finished,
        stop: Option<Stop>,
    ) -> Taken {
        let call = &on.call;
        // Its sandbox did not come up, so it never ran: it is answered as the probe's answer
        // says, as if the command had waited for it.
        if on.assumed.is_some() && outcome.command.sandbox_down {
            self.settle_sandbox().await;
            if let Verdict::Refuse(refusal, why) =
                self.services.approvals().check(&*on.tool, &call.input, self.toolset)
            {
                (status, outcome) = (ToolStatus::Refused(refusal), ToolOutcome::error(why));
            }
        }
        // Recorded whether or not the call ran, before its result.
        self.settle_opening(&mut on.opening, call).await;
        if on.effect == Effect::RunsCommand {
            self.look_at_repository(&mut outcome);
        }
        let result = result_block(&call.id, &outcome);
        self.state.record_call(&result, &outcome.changes);
        self.record_result(call, on.effect.shown_in_tool_pane(), status, &outcome, on.started);
        if !outcome.is_error {
            self.note_steps(&*on.tool, call, &outcome);
        }
        Taken { result, effect: Some(on.effect), left_running: outcome.command.left_running, stop }
    }

    /// Settles a call of a name no tool has: answered with the error that lists the tools.
    pub(super) async fn settle_unknown(&mut self, call: &ToolCall, failed: Finished) -> Taken {
        let (status, outcome) = failed;
        let result = result_block(&call.id, &outcome);
        self.state.record_call(&result, &outcome.changes);
        self.record_result(call, true, status, &outcome, Instant::now());
        Taken { result, effect: None, left_running: false, stop: None }
    }
}
