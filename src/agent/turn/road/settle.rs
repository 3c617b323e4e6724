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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::config::ApprovalMode;
    use crate::agent::event::AgentEvent;
    use crate::agent::snapshot::Refusal;
    use crate::agent::turn::road::take_call;
    use crate::agent::turn::test_parts::TestParts;
    use crate::message::ContentBlock;
    use serde_json::{Value, json};

    /// How many `ToolStart` and `ToolEnd` events the front ends got for call `id`.
    fn starts_and_ends(told: &[AgentEvent], id: &str) -> (usize, usize) {
        let starts = told
            .iter()
            .filter(|event| matches!(event, AgentEvent::ToolStart { id: at, .. } if at == id));
        let ends = told
            .iter()
            .filter(|event| matches!(event, AgentEvent::ToolEnd { id: at, .. } if at == id));
        (starts.count(), ends.count())
    }

    /// The history's answer in `taken`: its call's id and whether it is an error.
    fn answer(taken: &Taken) -> (&str, bool) {
        match &taken.result {
            ContentBlock::ToolResult { tool_use_id, is_error, .. } => (tool_use_id, *is_error),
            other => panic!("not a result: {other:?}"),
        }
    }

    #[tokio::test]
    async fn every_call_gets_exactly_one_result_however_far_it_went() {
        let mut parts = TestParts::new(ApprovalMode::ReadOnly);
        std::fs::write(parts.root().join("a.txt"), "hello\n").expect("the file is written");
        let calls: [(&str, &str, Value, bool); 4] = [
            ("ran", "read_file", json!({ "path": "a.txt" }), false),
            ("bad", "read_file", json!({}), true),
            ("refused", "write_file", json!({ "path": "b.txt", "content": "" }), true),
            ("unknown", "rm_rf", json!({}), true),
        ];
        let mut turn = parts.turn();
        let mut taken = Vec::new();
        for (id, name, input, _) in &calls {
            let call = ToolCall { id: (*id).into(), name: (*name).into(), input: input.clone() };
            taken.push(take_call(&mut turn, call).await);
        }
        let told = parts.told();
        for ((id, _, _, is_error), taken) in calls.iter().zip(&taken) {
            assert_eq!(answer(taken), (*id, *is_error));
            assert_eq!(starts_and_ends(&told, id), (1, 1), "{id}: {told:?}");
            assert_eq!(taken.stop, None);
        }
        assert!(!parts.root().join("b.txt").exists());
        let marks = &parts.conversation.state.view().call_marks;
        assert_eq!(
            marks.get("refused").map(|mark| mark.status),
            Some(ToolStatus::Refused(Refusal::ReadOnly))
        );
        assert_eq!(marks.get("bad").map(|mark| mark.status), Some(ToolStatus::Failed));
        assert!(marks.get("ran").is_none(), "a call that succeeded needs no mark");
    }

    #[tokio::test]
    async fn a_call_is_recorded_as_it_ended() {
        let mut parts = TestParts::new(ApprovalMode::Auto);
        let mut on = parts.on_road("c1", "read_file", json!({ "path": "a.txt" }));
        let ended = (ToolStatus::Declined, ToolOutcome::error("declined"));
        let mut turn = parts.turn();
        let taken =
            settle(&mut CallContext::new(&mut on, turn.parts()), ended, Some(Stop::Interrupted))
                .await;
        assert_eq!(answer(&taken), ("c1", true));
        assert_eq!(taken.stop, Some(Stop::Interrupted));
        assert_eq!(taken.effect, Some(Effect::Reads));
        let view = parts.conversation.state.view();
        assert_eq!(view.call_marks.get("c1").map(|mark| mark.status), Some(ToolStatus::Declined));
        let pane = view.tools.iter().find(|run| run.id == "c1").expect("the call is in the pane");
        assert_eq!(pane.status, ToolStatus::Declined);
        let told = parts.told();
        let ended = told.iter().find_map(|event| match event {
            AgentEvent::ToolEnd { id, is_error, output, .. } if id == "c1" => {
                Some((*is_error, output.clone()))
            }
            _ => None,
        });
        assert_eq!(ended, Some((true, "declined".to_owned())));
    }
}
