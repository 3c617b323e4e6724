//! The prepare stage: the call's arguments checked before anything else happens to it, and plan
//! mode's (or a child's read-only rules') refusal of what may change something. A command's
//! sandbox is settled here too, as far as it must be: what a command may do depends on it.

use super::{CallContext, Rules, Stage};
use crate::agent::children;
use crate::agent::plan_mode as plan;
use crate::agent::snapshot::{Refusal, ToolStatus};
use crate::agent::turn::watches::{assumed_sandbox, settle_sandbox};
use crate::llm::tool_input;
use crate::tools::sandbox::Confinement;
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
