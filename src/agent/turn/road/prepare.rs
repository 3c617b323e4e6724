//! The prepare stage: the call's arguments checked before anything else happens to it, and plan
//! mode's (or a child's read-only rules') refusal of what may change something. A command's
//! sandbox is settled here too, as far as it must be: what a command may do depends on it.

use super::{CallContext, Rules, Stage};
use crate::agent::children;
use crate::agent::plan_mode as plan;
use crate::agent::snapshot::{Refusal, ToolStatus};
use crate::agent::turn::watches::{assumed_sandbox, settle_sandbox};
use crate::llm::tool_input;
use crate::runtime::sandbox::Confinement;
use crate::tools::{Effect, ToolOutcome};
use serde_json::Value;

/// Prepares a call: its arguments, and plan mode.
pub(super) async fn prepare(cx: &mut CallContext<'_>) -> Stage {
    let input = &cx.on.call.input;
    let problem = argument_problem(input)
        .or_else(|| cx.on.tool.check_input(input).err().map(|err| err.to_string()));
    if let Some(problem) = problem {
        return Err(((ToolStatus::Failed, ToolOutcome::error(problem)), None));
    }
    // A call its server cannot take is answered so, never put to the person.
    if matches!(cx.on.effect, Effect::ReachesOutside { .. })
        && let Some(answer) = cx.shared.tools.mcp().cannot_call(&cx.on.call.name)
    {
        return Err(((ToolStatus::Failed, answer), None));
    }
    // Only commands depend on what the sandbox can do. A command that runs without asking does
    // not wait for the sandbox's probe: it starts in the sandbox the probe finds where it works,
    // and its own start tells whether it came up. Under read-only rules it waits, a child's as
    // the parent's: what it may do depends on the probe's answer.
    if cx.on.effect == Effect::RunsCommand {
        cx.on.assumed = assumed_sandbox(&cx.conv, cx.shared, &*cx.on.tool, &cx.on.call.input);
        if cx.on.assumed.is_none() {
            settle_sandbox(cx.shared.services, cx.conv.state).await;
        }
    }
    within_rules(cx).await
}

/// Refuses a call the read-only rules in force now do not allow (`Handle::read_only_rules`):
/// plan mode's, or a child's. Asked as the call is prepared, and again once it is approved,
/// since plan mode may have come on meanwhile — for a child, by its parent's.
pub(super) async fn within_rules(cx: &mut CallContext<'_>) -> Stage {
    let Some(rules) = cx.conv.read_only_rules() else {
        return Ok(());
    };
    let command = cx.on.effect == Effect::RunsCommand;
    // A command that was to start before the probe answered waits for it after all: the
    // read-only sandbox is the probed one.
    if command && cx.on.assumed.take().is_some() {
        settle_sandbox(cx.shared.services, cx.conv.state).await;
    }
    let confined = command && cx.tools_for_call().sandbox().confinement() == Confinement::Confined;
    let (on, input) = (&*cx.on, &cx.on.call.input);
    let refusal = match rules {
        // A child's read-only rules, and why it runs under them.
        Rules::Child(why) => {
            children::refusal(&*on.tool, input, confined, why).map(|why| (Refusal::ReadOnly, why))
        }
        Rules::PlanMode => {
            plan::refusal(&*on.tool, input, confined).map(|why| (Refusal::PlanMode, why))
        }
    };
    match refusal {
        Some((refusal, why)) => {
            Err(((ToolStatus::Refused(refusal), ToolOutcome::error(why)), None))
        }
        None => Ok(()),
    }
}

/// What is wrong with a tool call's arguments before any tool looks at them. Providers keep
/// arguments that were not a JSON object under a marker (see `llm::tool_input`); the scripted
/// model may hand over any value.
fn argument_problem(input: &Value) -> Option<String> {
    if let Some(message) = tool_input::invalid_input_message(input) {
        return Some(message);
    }
    let raw = match input {
        Value::Object(_) => return None,
        Value::String(raw) => raw.clone(),
        other => other.to_string(),
    };
    tool_input::invalid_input_message(&tool_input::parse(&raw))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::config::ApprovalMode;
    use crate::agent::turn::test_parts::TestParts;
    use serde_json::json;

    #[tokio::test]
    async fn bad_arguments_are_answered_with_the_error() {
        let mut parts = TestParts::new(ApprovalMode::Auto);
        let mut on = parts.on_road("c1", "write_file", json!({ "path": 7 }));
        let mut turn = parts.turn();
        let ended = prepare(&mut CallContext::new(&mut on, turn.parts())).await;
        let Err(((status, outcome), stop)) = ended else { panic!("bad arguments went on") };
        assert_eq!(status, ToolStatus::Failed);
        assert!(outcome.is_error && outcome.for_model.contains("content"), "{}", outcome.for_model);
        assert_eq!(stop, None);
    }

    #[tokio::test]
    async fn arguments_that_are_not_an_object_are_answered_before_the_tool_looks() {
        let mut parts = TestParts::new(ApprovalMode::Auto);
        let mut on = parts.on_road("c1", "read_file", json!("{\"path\": "));
        let mut turn = parts.turn();
        let ended = prepare(&mut CallContext::new(&mut on, turn.parts())).await;
        let Err(((status, outcome), _)) = ended else { panic!("broken JSON went on") };
        assert_eq!(status, ToolStatus::Failed);
        assert!(outcome.is_error);
    }

    #[tokio::test]
    async fn plan_mode_refuses_a_write_and_lets_a_read_through() {
        let mut parts = TestParts::new(ApprovalMode::Auto);
        parts.conversation.state.set_plan_mode(true);
        let input = json!({ "path": "a.txt", "content": "hi\n" });
        let mut write = parts.on_road("c1", "write_file", input);
        let mut read = parts.on_road("c2", "read_file", json!({ "path": "a.txt" }));
        let mut turn = parts.turn();
        let ended = prepare(&mut CallContext::new(&mut write, turn.parts())).await;
        let Err(((status, outcome), None)) = ended else { panic!("plan mode let a write by") };
        assert_eq!(status, ToolStatus::Refused(Refusal::PlanMode));
        assert!(
            outcome.is_error && outcome.for_model.starts_with(plan::REFUSED),
            "{}",
            outcome.for_model
        );
        assert!(prepare(&mut CallContext::new(&mut read, turn.parts())).await.is_ok());
        assert!(!parts.root().join("a.txt").exists());
    }

    #[tokio::test]
    async fn a_child_under_read_only_rules_is_refused_with_its_reason() {
        let mut parts = TestParts::new(ApprovalMode::Auto);
        let toolset = parts.conversation.toolset.for_child(false, Some("it explores".into()));
        parts.conversation.toolset = toolset;
        let mut on = parts.on_road("c1", "write_file", json!({ "path": "a", "content": "" }));
        let mut turn = parts.turn();
        let ended = prepare(&mut CallContext::new(&mut on, turn.parts())).await;
        let Err(((status, outcome), None)) = ended else { panic!("a read-only child wrote") };
        assert_eq!(status, ToolStatus::Refused(Refusal::ReadOnly));
        assert!(outcome.for_model.contains("it explores"), "{}", outcome.for_model);
    }
}
