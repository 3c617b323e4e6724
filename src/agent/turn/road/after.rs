//! The after stage: what the PreToolUse hooks said for the model goes with the result, then the
//! PostToolUse hooks run over a call that succeeded. The call has run: a hook that blocks (exit
//! 2, `decision: "block"`) cannot undo it, so its reason is told to the model beside the result,
//! as is any `additionalContext`.

use super::{CallContext, Finished};
use crate::agent::snapshot::ToolStatus;
use crate::agent::turn::Stop;
use crate::agent::turn::hooks::{HookRunner, for_model, tool_fields};
use crate::hooks::{Event, Query};
use crate::tags::Tag;
use serde_json::json;

/// Puts the hooks' words with the result of a call that ran, after its PostToolUse hooks.
pub(in crate::agent) async fn after(
    cx: &mut CallContext<'_>,
    ((status, mut outcome), mut stop): (Finished, Option<Stop>),
) -> (Finished, Option<Stop>) {
    let mut notes = std::mem::take(&mut cx.on.hook_notes);
    if status == ToolStatus::Succeeded
        && stop.is_none()
        && cx.shared.services.hooks.has(Event::PostToolUse)
    {
        let mut fields = tool_fields(&cx.on.call, cx.shared.tools.workspace().root());
        fields.insert(
            "tool_response".into(),
            json!({
                "output": outcome.for_model,
                "is_error": outcome.is_error,
                "success": !outcome.is_error,
                "exit_code": outcome.exit_code,
            }),
        );
        let (name, id) = (cx.on.call.name.clone(), cx.on.call.id.clone());
        let runner = HookRunner::new(cx.parts());
        match runner.fire(Event::PostToolUse, Query::Tool(&name), fields, Some(&id)).await {
            Ok(fired) => {
                if let Some(reason) = fired.blocked() {
                    notes.push(for_model(Tag::HookFeedback, Event::PostToolUse, &reason));
                }
                for context in fired.context() {
                    notes.push(for_model(Tag::HookContext, Event::PostToolUse, &context));
                }
            }
            Err(why) => stop = Some(why),
        }
    }
    for note in notes {
        outcome.for_model = format!("{}\n\n{note}", outcome.for_model.trim_end());
    }
    ((status, outcome), stop)
}
