//! The before stage: the PreToolUse hooks. A hook that blocks — exit 2, `permissionDecision:
//! "deny"`, or (this event fails closed) one that cannot start, is killed or times out — ends the
//! call with its reason. An `updatedInput` becomes the call's input, and goes through the
//! prepare stage again: a hook never gets past plan mode or the argument checks. An `allow` or
//! an `ask` is handed to the approve stage, which keeps keel's own rules either way.

use super::{CallContext, Stage, prepare};
use crate::agent::event::AgentEvent;
use crate::agent::snapshot::{Refusal, ToolStatus};
use crate::agent::turn::INTERRUPTED;
use crate::agent::turn::hooks::{HookRunner, changed_note, for_model, tool_fields};
use crate::hooks::{Event, Query, names};
use crate::tags::Tag;
use crate::tools::ToolOutcome;

/// What the model reads for a call a PreToolUse hook blocked, before the hook's reason.
pub const BLOCKED: &str = "Blocked by a PreToolUse hook:";

/// Runs the PreToolUse hooks over the call.
pub(super) async fn before(cx: &mut CallContext<'_>) -> Stage {
    if !cx.shared.services.hooks.has(Event::PreToolUse) {
        return Ok(());
    }
    let workspace = cx.shared.tools.workspace().root().to_path_buf();
    let fields = tool_fields(&cx.on.call, &workspace);
    let (name, id) = (cx.on.call.name.clone(), cx.on.call.id.clone());
    let fired = HookRunner::new(cx.parts())
        .fire(Event::PreToolUse, Query::Tool(&name), fields, Some(&id))
        .await
        .map_err(|stop| ((ToolStatus::Interrupted, ToolOutcome::error(INTERRUPTED)), Some(stop)))?;
    if let Some(reason) = fired.blocked() {
        let outcome = ToolOutcome::error(format!("{BLOCKED} {reason}"));
        return Err(((ToolStatus::Refused(Refusal::Hook), outcome), None));
    }
    cx.on.permission = fired.permission();
    if let Some((command, updated)) = fired.updated_input() {
        let input = names::from_claude(&name, &cx.on.call.input, updated, &workspace);
        if input != cx.on.call.input {
            cx.on.call.input = input;
            let summary = crate::visible::one_line(&cx.on.call.summary());
            let command = crate::visible::one_line(command);
            cx.conv.emit(AgentEvent::Notice {
                text: format!(
                    "PreToolUse hook `{command}` changed the call; it runs as: {name} {summary}"
                ),
            });
            cx.on.hook_notes.push(changed_note(&cx.on.call.input));
            prepare(cx).await?;
        }
    }
    for context in fired.context() {
        cx.on.hook_notes.push(for_model(Tag::HookContext, Event::PreToolUse, &context));
    }
    Ok(())
}
