//! The before stage: the PreToolUse hooks. A hook that blocks — exit 2, `permissionDecision:
//! "deny"`, or (this event fails closed) one that cannot start, is killed or times out — ends the
//! call with its reason. An `updatedInput` becomes the call's input, and goes through the
//! prepare stage again: a hook never gets past plan mode or the argument checks. An `allow` or
//! an `ask` is handed to the approve stage, which keeps keel's own rules either way.

use super::{OnRoad, Stage};
use crate::agent::event::AgentEvent;
use crate::agent::snapshot::{Refusal, ToolStatus};
use crate::agent::turn::hooks::{changed_note, for_model, tool_fields};
use crate::agent::turn::{INTERRUPTED, Turn};
use crate::hooks::{Event, Query, names};
use crate::tags::Tag;
use crate::tools::ToolOutcome;

/// What the model reads for a call a PreToolUse hook blocked, before the hook's reason.
pub const BLOCKED: &str = "Blocked by a PreToolUse hook:";

impl Turn<'_> {
    /// Runs the PreToolUse hooks over the call.
    pub(super) async fn before(&mut self, on: &mut OnRoad) -> Stage {
        if !self.services.hooks.has(Event::PreToolUse) {
            return Ok(());
        }
        let workspace = self.tools.workspace().root().to_path_buf();
        let fields = tool_fields(&on.call, &workspace);
        let name = on.call.name.clone();
        let fired = self
            .fire_hooks(Event::PreToolUse, Query::Tool(&name), fields, Some(&on.call.id))
            .await
            .map_err(|stop| {
                ((ToolStatus::Interrupted, ToolOutcome::error(INTERRUPTED)), Some(stop))
            })?;
        if let Some(reason) = fired.blocked() {
            let outcome = ToolOutcome::error(format!("{BLOCKED} {reason}"));
            return Err(((ToolStatus::Refused(Refusal::Hook), outcome), None));
        }
        on.permission = fired.permission();
        if let Some((command, updated)) = fired.updated_input() {
            let input = names::from_claude(&name, &on.call.input, updated, &workspace);
            if input != on.call.input {
                on.call.input = input;
                let summary = crate::visible::one_line(&on.call.summary());
                let command = crate::visible::one_line(command);
                self.emit(AgentEvent::Notice {
                    text: format!(
                        "PreToolUse hook `{command}` changed the call; it runs as: {name} {summary}"
                    ),
                });
                on.hook_notes.push(changed_note(&on.call.input));
                self.prepare(on).await?;
            }
        }
        for context in fired.context() {
            on.hook_notes.push(for_model(Tag::HookContext, Event::PreToolUse, &context));
        }
        Ok(())
    }
}
