//! The settle stage, for every call however it ended: a command whose sandbox did not come up
//! answered as the sandbox's probe says; undo's opening snapshot recorded; what a command may
//! have left in the workspace's repository looked at; the steps the call did to files noted; and
//! the call recorded — in the session log, the tool pane, and for the front ends.

use super::{CallContext, Finished, Taken};
use crate::agent::approval::Verdict;
use crate::agent::snapshot::ToolStatus;
use crate::agent::turn::Stop;
use crate::agent::turn::handle::Parts;
use crate::agent::turn::repeated_step::note_steps;
use crate::agent::turn::round::result_block;
use crate::agent::turn::undo::settle_opening;
use crate::agent::turn::watches::{look_at_repository, settle_sandbox};
use crate::tools::{Effect, ToolCall, ToolOutcome};
use std::time::Instant;

/// Settles a call that took its road (however far it went).
pub(in crate::agent) async fn settle(
    cx: &mut CallContext<'_>,
    (mut status, mut outcome): Finished,
    stop: Option<Stop>,
) -> Taken {
    let (on, services, tools) = (&mut *cx.on, cx.shared.services, cx.shared.tools);
    let call = &on.call;
    // Its sandbox did not come up, so it never ran: it is answered as the probe's answer says,
    // as if the command had waited for it.
    if on.assumed.is_some() && outcome.command.sandbox_down {
        settle_sandbox(services, cx.conv.state).await;
        if let Verdict::Refuse(refusal, why) =
            services.approvals().check(&*on.tool, &call.input, cx.conv.toolset)
        {
            (status, outcome) = (ToolStatus::Refused(refusal), ToolOutcome::error(why));
        }
    }
    // Recorded whether or not the call ran, before its result.
    settle_opening(&mut cx.conv, &mut on.opening, call).await;
    if on.effect == Effect::RunsCommand {
        look_at_repository((cx.conv.reborrow(), cx.shared), &mut outcome);
    }
    let result = result_block(&call.id, &outcome);
    cx.conv.state.record_call(&result, &outcome.changes);
    let in_pane = on.effect.shown_in_tool_pane();
    cx.conv.record_result(tools, call, in_pane, status, &outcome, on.started);
    if !outcome.is_error {
        note_steps(cx.conv.state, tools, &*on.tool, call, &outcome);
    }
    Taken { result, effect: Some(on.effect), left_running: outcome.command.left_running, stop }
}

/// Settles a call of a name no tool has: answered with the error that lists the tools.
pub(in crate::agent) fn settle_unknown(
    (mut conv, shared): Parts<'_>,
    call: &ToolCall,
    (status, outcome): Finished,
) -> Taken {
    let result = result_block(&call.id, &outcome);
    conv.state.record_call(&result, &outcome.changes);
    conv.record_result(shared.tools, call, true, status, &outcome, Instant::now());
    Taken { result, effect: None, left_running: false, stop: None }
}
