//! The approve stage: the approval mode's verdict on the call (`agent::approval`), a write or an
//! edit that would repeat a step already done answered as such before anyone is asked
//! (`turn::repeated_step`), and the person asked when the mode wants it.

use super::before::BLOCKED;
use super::prepare::within_rules;
use super::{CallContext, Stage};
use crate::agent::approval::{DECLINED, Verdict};
use crate::agent::command::Decision;
use crate::agent::event::AgentEvent;
use crate::agent::snapshot::{Refusal, ToolStatus};
use crate::agent::turn::Stop;
use crate::agent::turn::approval_prompt::ask;
use crate::agent::turn::repeated_step::repeated_step;
use crate::hooks::Permission;
use crate::tools::ToolOutcome;

/// Approves a call, or ends it: refused, declined, or already done.
pub(super) async fn approve(cx: &mut CallContext<'_>) -> Stage {
    let services = cx.shared.services;
    let verdict = services.approvals().check(&*cx.on.tool, &cx.on.call.input, cx.conv.toolset);
    let verdict = with_hooks_permission(cx, verdict);
    if let Some(done) = repeated_step(cx, &verdict).await {
        return Err(((ToolStatus::Succeeded, done), None));
    }
    let declined = || (ToolStatus::Declined, ToolOutcome::error(DECLINED));
    match verdict {
        Verdict::Run => within_rules(cx).await,
        Verdict::Refuse(refusal, why) => {
            Err(((ToolStatus::Refused(refusal), ToolOutcome::error(why)), None))
        }
        Verdict::Ask => match ask(cx).await {
            Decision::Once => still_allowed(cx).await,
            Decision::Always => {
                services.approvals().allow_always(&*cx.on.tool, &cx.on.call.input);
                still_allowed(cx).await
            }
            Decision::Deny => Err((declined(), None)),
            Decision::DenyAndStop => Err((declined(), Some(Stop::Interrupted))),
        },
    }
}

/// A call the person allowed, looked at again as things stand after their answer: plan mode
/// (or, for a child, its parent's) or a stricter approval mode may have come on while the box
/// waited, and what they refuse stays refused.
async fn still_allowed(cx: &mut CallContext<'_>) -> Stage {
    within_rules(cx).await?;
    let approvals = cx.shared.services.approvals();
    match approvals.check(&*cx.on.tool, &cx.on.call.input, cx.conv.toolset) {
        Verdict::Refuse(refusal, why) => {
            Err(((ToolStatus::Refused(refusal), ToolOutcome::error(why)), None))
        }
        Verdict::Run | Verdict::Ask => Ok(()),
    }
}

/// The verdict once the PreToolUse hooks had their say. An `allow` spares the person the
/// question, never a refusal, and never the question about a command the sandbox cannot
/// confine; an `ask` asks even where the mode would not — or, with no one to ask (`-p`),
/// refuses.
fn with_hooks_permission(cx: &mut CallContext<'_>, verdict: Verdict) -> Verdict {
    let services = cx.shared.services;
    match (verdict, cx.on.permission.take()) {
        (Verdict::Ask, Some(Permission::Allow))
            if services.approvals().hook_may_allow(&*cx.on.tool) =>
        {
            Verdict::Run
        }
        (Verdict::Run, Some(Permission::Ask(reason))) => {
            if services.hooks.interactive() {
                if let Some(reason) = reason {
                    cx.conv.state.emit(AgentEvent::Notice {
                        text: format!("A PreToolUse hook asks for your approval: {reason}"),
                    });
                }
                Verdict::Ask
            } else {
                let why = reason.map(|why| format!(" ({why})")).unwrap_or_default();
                Verdict::Refuse(
                    Refusal::Hook,
                    format!(
                        "{BLOCKED} it asked for the person's approval{why}, and no one is here \
                         to give it: not run. Tell the user."
                    ),
                )
            }
        }
        (verdict, _) => verdict,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::command::Command;
    use crate::agent::config::ApprovalMode;
    use crate::agent::turn::test_parts::TestParts;
    use serde_json::json;
    use tokio::sync::mpsc;

    /// The stage's answer to a write of `a.txt` in `mode`, the person answering `decision` if
    /// asked (with no answer, the box is left: the call is declined and the turn stops).
    async fn approve_write(mode: ApprovalMode, decision: Option<Decision>) -> (Stage, TestParts) {
        let mut parts = TestParts::new(mode);
        match decision {
            Some(decision) => {
                let answer = Command::Approve { id: "c1".into(), decision };
                parts.commands.send(answer).expect("the inbox is open");
            }
            None => parts.commands = mpsc::unbounded_channel().0,
        }
        let mut on = parts.on_road("c1", "write_file", json!({ "path": "a.txt", "content": "x" }));
        let mut turn = parts.turn();
        let stage = approve(&mut CallContext::new(&mut on, turn.parts())).await;
        (stage, parts)
    }

    #[tokio::test]
    async fn auto_runs_a_write_unasked_and_read_only_refuses_it() {
        assert!(approve_write(ApprovalMode::Auto, None).await.0.is_ok());
        let (stage, _) = approve_write(ApprovalMode::ReadOnly, None).await;
        let Err(((status, outcome), None)) = stage else { panic!("read-only let a write by") };
        assert_eq!(status, ToolStatus::Refused(Refusal::ReadOnly));
        assert!(outcome.is_error);
    }

    #[tokio::test]
    async fn ask_puts_the_call_to_the_person_and_keeps_their_answer() {
        let (stage, parts) = approve_write(ApprovalMode::Ask, Some(Decision::Once)).await;
        assert!(stage.is_ok());
        assert!(parts.conversation.state.view().pending_approval.is_none(), "the box is closed");
        let (stage, _) = approve_write(ApprovalMode::Ask, Some(Decision::Deny)).await;
        let Err(((status, outcome), None)) = stage else { panic!("a declined call went on") };
        assert_eq!((status, outcome.for_model.as_str()), (ToolStatus::Declined, DECLINED));
        let (stage, _) = approve_write(ApprovalMode::Ask, Some(Decision::DenyAndStop)).await;
        let Err(((status, _), stop)) = stage else { panic!("a declined call went on") };
        assert_eq!((status, stop), (ToolStatus::Declined, Some(Stop::Interrupted)));
        let (stage, _) = approve_write(ApprovalMode::Ask, None).await;
        assert!(matches!(stage, Err((_, Some(Stop::Interrupted)))), "no one is there to answer");
    }

    #[tokio::test]
    async fn always_is_remembered_for_the_next_call() {
        let (stage, parts) = approve_write(ApprovalMode::Ask, Some(Decision::Always)).await;
        assert!(stage.is_ok());
        let tool = parts.conversation.toolset.find("write_file").expect("write_file");
        let input = json!({ "path": "a.txt", "content": "y" });
        let verdict = parts.services.approvals().check(&*tool, &input, &parts.conversation.toolset);
        assert_eq!(verdict, Verdict::Run);
    }

    #[tokio::test]
    async fn a_repeated_step_is_answered_as_done_before_anyone_is_asked() {
        let mut parts = TestParts::new(ApprovalMode::Ask);
        std::fs::write(parts.root().join("a.txt"), "x").expect("the file is written");
        // No one is there to answer: had the person been asked, the call would be declined.
        parts.commands = mpsc::unbounded_channel().0;
        let mut on = parts.on_road("c1", "write_file", json!({ "path": "a.txt", "content": "x" }));
        let mut turn = parts.turn();
        let stage = approve(&mut CallContext::new(&mut on, turn.parts())).await;
        let Err(((status, outcome), None)) = stage else { panic!("a repeat was not answered") };
        assert_eq!(status, ToolStatus::Succeeded);
        assert!(!outcome.is_error);
        let done = crate::agent::steps_done::when_done(None);
        assert!(outcome.for_model.ends_with(&done), "{}", outcome.for_model);
    }
}
