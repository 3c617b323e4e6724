//! The prepare stage: the call's arguments checked before anything else happens to it, and plan
//! mode's (or a child's read-only rules') refusal of what may change something. A command's
//! sandbox is settled here too, as far as it must be: what a command may do depends on it.

use super::{OnRoad, Rules, Stage};
use crate::agent::children;
use crate::agent::plan_mode as plan;
use crate::agent::snapshot::{Refusal, ToolStatus};
use crate::agent::turn::Turn;
use crate::llm::tool_input;
use crate::runtime::sandbox::Confinement;
use crate::tools::{Effect, ToolOutcome};
use serde_json::Value;

impl Turn<'_> {
    /// Prepares a call: its arguments, and plan mode.
    pub(super) async fn prepare(&mut self, on: &mut OnRoad) -> Stage {
        let input = &on.call.input;
        let problem = argument_problem(input)
            .or_else(|| on.tool.check_input(input).err().map(|err| err.to_string()));
        if let Some(problem) = problem {
            return Err(((ToolStatus::Failed, ToolOutcome::error(problem)), None));
        }
        // A call its server cannot take is answered so, never put to the person.
        if matches!(on.effect, Effect::ReachesOutside { .. })
            && let Some(answer) = self.tools.mcp().cannot_call(&on.call.name)
        {
            return Err(((ToolStatus::Failed, answer), None));
        }
        // Only commands depend on what the sandbox can do. A command that runs without asking
        // does not wait for the sandbox's probe: it starts in the sandbox the probe finds where
        // it works, and its own start tells whether it came up. Under read-only rules it waits,
        // a child's as the parent's: what it may do depends on the probe's answer.
        if on.effect == Effect::RunsCommand {
            on.assumed = self.assumed_sandbox(&*on.tool, input);
            if on.assumed.is_none() {
                self.settle_sandbox().await;
            }
        }
        self.within_rules(on).await
    }

    /// Refuses a call the read-only rules in force now do not allow (`Turn::read_only_rules`):
    /// plan mode's, or a child's. Asked as the call is prepared, and again once it is approved,
    /// since plan mode may have come on meanwhile — for a child, by its parent's.
    pub(super) async fn within_rules(&mut self, on: &mut OnRoad) -> Stage {
        let Some(rules) = self.read_only_rules() else {
            return Ok(());
        };
        let command = on.effect == Effect::RunsCommand;
        // A command that was to start before the probe answered waits for it after all: the
        // read-only sandbox is the probed one.
        if command && on.assumed.take().is_some() {
            self.settle_sandbox().await;
        }
        let confined =
            command && self.tools_for_call().sandbox().confinement() == Confinement::Confined;
        let input = &on.call.input;
        let refusal = match rules {
            // A child's read-only rules, and why it runs under them.
            Rules::Child(why) => children::refusal(&*on.tool, input, confined, why)
                .map(|why| (Refusal::ReadOnly, why)),
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
