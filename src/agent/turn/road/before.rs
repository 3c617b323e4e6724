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
use crate::hooks::{Event, Fired, Query, names};
use crate::tags::Tag;
use crate::tools::ToolOutcome;

/// What the model reads for a call a PreToolUse hook blocked, before the hook's reason.
pub const BLOCKED: &str = "Blocked by a PreToolUse hook:";

/// Runs the PreToolUse hooks over the call.
pub(super) async fn before(cx: &mut CallContext<'_>) -> Stage {
    if !cx.shared.services.hooks.has(Event::PreToolUse) {
        return Ok(());
    }
    let fields = tool_fields(&cx.on.call, cx.shared.tools.workspace().root());
    let (name, id) = (cx.on.call.name.clone(), cx.on.call.id.clone());
    let fired = HookRunner::new(cx.parts())
        .fire(Event::PreToolUse, Query::Tool(&name), fields, Some(&id))
        .await
        .map_err(|stop| ((ToolStatus::Interrupted, ToolOutcome::error(INTERRUPTED)), Some(stop)))?;
    heed(cx, &fired).await
}

/// What the call does with what its PreToolUse hooks said: a block ends it; a decision is kept
/// for approval; a changed input replaces its own and is prepared again; what they add for the
/// model goes with its result.
async fn heed(cx: &mut CallContext<'_>, fired: &Fired) -> Stage {
    if let Some(reason) = fired.blocked() {
        let outcome = ToolOutcome::error(format!("{BLOCKED} {reason}"));
        return Err(((ToolStatus::Refused(Refusal::Hook), outcome), None));
    }
    cx.on.permission = fired.permission();
    if let Some((command, updated)) = fired.updated_input() {
        let workspace = cx.shared.tools.workspace().root();
        let name = cx.on.call.name.clone();
        let input = names::from_claude(&name, &cx.on.call.input, updated, workspace);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::config::ApprovalMode;
    use crate::agent::turn::road::OnRoad;
    use crate::agent::turn::test_parts::TestParts;
    use crate::hooks::{Permission, Ran, Reply, Verdict};
    use serde_json::{Value, json};
    use std::time::Duration;

    /// What one PreToolUse hook said: `verdict`, and the input it gave back, if any.
    fn fired(verdict: Verdict, updated_input: Option<Value>) -> Fired {
        let reply = Reply { updated_input, ..Reply::verdict(verdict) };
        let ran =
            Ran { event: Event::PreToolUse, command: "guard".into(), reply, took: Duration::ZERO };
        Fired { runs: vec![ran], lost_trust: None }
    }

    /// The stage's end for a write of `a` with what `said` says, in `parts`.
    async fn heed_write(parts: &mut TestParts, said: &Fired) -> (Stage, OnRoad) {
        let mut on = parts.on_road("c1", "write_file", json!({ "path": "a", "content": "" }));
        let mut turn = parts.turn();
        let stage = heed(&mut CallContext::new(&mut on, turn.parts()), said).await;
        (stage, on)
    }

    #[tokio::test]
    async fn a_block_ends_the_call_with_its_reason() {
        let mut parts = TestParts::new(ApprovalMode::Auto);
        let said = fired(Verdict::Blocked("no writes today".into()), None);
        let (stage, _) = heed_write(&mut parts, &said).await;
        let Err(((status, outcome), None)) = stage else { panic!("the block was not kept") };
        assert_eq!(status, ToolStatus::Refused(Refusal::Hook));
        assert_eq!(outcome.for_model, format!("{BLOCKED} no writes today"));
        assert!(outcome.is_error);
    }

    #[tokio::test]
    async fn with_no_hooks_the_call_goes_on_unchanged() {
        let mut parts = TestParts::new(ApprovalMode::Auto);
        let input = json!({ "path": "a", "content": "" });
        let mut on = parts.on_road("c1", "write_file", input.clone());
        let mut turn = parts.turn();
        assert!(before(&mut CallContext::new(&mut on, turn.parts())).await.is_ok());
        assert_eq!(on.call.input, input);
        assert!(on.hook_notes.is_empty() && on.permission.is_none());
    }

    #[tokio::test]
    async fn a_decision_is_kept_for_approval_and_context_goes_with_the_result() {
        let mut parts = TestParts::new(ApprovalMode::Auto);
        let mut said = fired(Verdict::Fine, None);
        said.runs[0].reply.permission = Some(Permission::Allow);
        said.runs[0].reply.context = Some("the tests are slow".into());
        let (stage, on) = heed_write(&mut parts, &said).await;
        assert!(stage.is_ok());
        assert_eq!(on.permission, Some(Permission::Allow));
        let note = for_model(Tag::HookContext, Event::PreToolUse, "the tests are slow");
        assert_eq!(on.hook_notes, [note]);
    }

    #[tokio::test]
    async fn an_updated_input_replaces_the_calls_and_the_model_is_told() {
        let mut parts = TestParts::new(ApprovalMode::Auto);
        let said = fired(Verdict::Fine, Some(json!({ "content": "changed\n" })));
        let (stage, on) = heed_write(&mut parts, &said).await;
        assert!(stage.is_ok());
        assert_eq!(on.call.input, json!({ "path": "a", "content": "changed\n" }));
        assert_eq!(on.hook_notes, [changed_note(&on.call.input)]);
        let told = parts.told();
        assert!(
            told.iter().any(|event| matches!(event, AgentEvent::Notice { text }
                if text.starts_with("PreToolUse hook `guard` changed the call; it runs as: write_file"))),
            "{told:?}"
        );
    }

    #[tokio::test]
    async fn an_updated_input_is_prepared_again() {
        let mut parts = TestParts::new(ApprovalMode::Auto);
        let said = fired(Verdict::Fine, Some(json!({ "content": 7 })));
        let (stage, on) = heed_write(&mut parts, &said).await;
        let Err(((status, outcome), None)) = stage else { panic!("bad arguments got through") };
        assert_eq!(status, ToolStatus::Failed);
        assert!(outcome.for_model.contains("content"), "{}", outcome.for_model);
        assert_eq!(on.call.input["content"], 7);
        // Plan mode holds a changed call too.
        let mut parts = TestParts::new(ApprovalMode::Auto);
        parts.conversation.state.set_plan_mode(true);
        let said = fired(Verdict::Fine, Some(json!({ "content": "x" })));
        let (stage, _) = heed_write(&mut parts, &said).await;
        assert!(matches!(stage, Err(((ToolStatus::Refused(Refusal::PlanMode), _), None))));
    }
}
