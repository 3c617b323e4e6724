//! The approve stage: the approval mode's verdict on the call (`agent::approval`), a write or an
//! edit that would repeat a step already done answered as such before anyone is asked
//! (`turn::repeated_step`), and the person asked when the mode wants it.

use super::before::BLOCKED;
use super::{OnRoad, Stage};
use crate::agent::approval::{DECLINED, Verdict};
use crate::agent::command::Decision;
use crate::agent::event::AgentEvent;
use crate::agent::snapshot::{Refusal, ToolStatus};
use crate::agent::turn::{Stop, Turn};
use crate::hooks::Permission;
use crate::tools::ToolOutcome;

impl Turn<'_> {
    /// Approves a call, or ends it: refused, declined, or already done.
    pub(super) async fn approve(&mut self, on: &mut OnRoad) -> Stage {
        let verdict = self.services.approvals().check(&*on.tool, &on.call.input, self.toolset);
        let verdict = self.with_hooks_permission(on, verdict);
        if let Some(done) = self.repeated_step(on, &verdict).await {
            return Err(((ToolStatus::Succeeded, done), None));
        }
        let declined = || (ToolStatus::Declined, ToolOutcome::error(DECLINED));
        match verdict {
            Verdict::Run => self.within_rules(on).await,
            Verdict::Refuse(refusal, why) => {
                Err(((ToolStatus::Refused(refusal), ToolOutcome::error(why)), None))
            }
            Verdict::Ask => match self.ask(on).await {
                Decision::Once => self.still_allowed(on).await,
                Decision::Always => {
                    self.services.approvals().allow_always(&*on.tool, &on.call.input);
                    self.still_allowed(on).await
                }
                Decision::Deny => Err((declined(), None)),
                Decision::DenyAndStop => Err((declined(), Some(Stop::Interrupted))),
            },
        }
    }

    /// A call the person allowed, looked at again as things stand after their answer: plan mode
    /// (or, for a child, its parent's) or a stricter approval mode may have come on while the
    /// box waited, and what they refuse stays refused.
    async fn still_allowed(&mut self, on: &mut OnRoad) -> Stage {
        self.within_rules(on).await?;
        match self.services.approvals().check(&*on.tool, &on.call.input, self.toolset) {
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
    fn with_hooks_permission(&mut self, on: &mut OnRoad, verdict: Verdict) -> Verdict {
        match (verdict, on.permission.take()) {
            (Verdict::Ask, Some(Permission::Allow))
                if self.services.approvals().hook_may_allow(&*on.tool) =>
            {
                Verdict::Run
            }
            (Verdict::Run, Some(Permission::Ask(reason))) => {
                if self.services.hooks.interactive() {
                    if let Some(reason) = reason {
                        self.state.emit(AgentEvent::Notice {
                            text: format!("A PreToolUse hook asks for your approval: {reason}"),
                        });
                    }
                    Verdict::Ask
                } else {
                    let why = reason.map(|why| format!(" ({why})")).unwrap_or_default();
                    Verdict::Refuse(
                        Refusal::Hook,
                        format!(
                            "{BLOCKED} it asked for the person's approval{why}, and no one is \
                             here to give it: not run. Tell the user."
                        ),
                    )
                }
            }
            (verdict, _) => verdict,
        }
    }
}
