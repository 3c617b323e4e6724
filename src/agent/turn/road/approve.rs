//! The approve stage: the approval mode's verdict on the call (`agent::approval`), a write or an
//! edit that would repeat a step already done answered as such before anyone is asked
//! (`turn::repeated_step`), and the person asked when the mode wants it.

use super::{OnRoad, Stage};
use crate::agent::Decision;
use crate::agent::approval::{DECLINED, Verdict};
use crate::agent::snapshot::ToolStatus;
use crate::agent::turn::{Stop, Turn};
use crate::tools::ToolOutcome;

impl Turn<'_> {
    /// Approves a call, or ends it: refused, declined, or already done.
    pub(super) async fn approve(&mut self, on: &mut OnRoad<'_>) -> Stage {
        let verdict = self.services.approvals().check(&*on.tool, &on.call.input, self.toolset);
        if let Some(done) = self.repeated_step(on, &verdict).await {
            return Err(((ToolStatus::Succeeded, done), None));
        }
        let declined = || (ToolStatus::Declined, ToolOutcome::error(DECLINED));
        match verdict {
            Verdict::Run => Ok(()),
            Verdict::Refuse(why) => Err(((ToolStatus::Declined, ToolOutcome::error(why)), None)),
            Verdict::Ask => match self.ask(on).await {
                Decision::Once => Ok(()),
                Decision::Always => {
                    self.services.approvals().allow_always(&*on.tool, &on.call.input);
                    Ok(())
                }
                Decision::Deny => Err((declined(), None)),
                Decision::DenyAndStop => Err((declined(), Some(Stop::Interrupted))),
            },
        }
    }
}
