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
