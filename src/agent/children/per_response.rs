//! The children of one response are bounded (`max_children_per_response`): the first so many of
//! its `task` calls run, and each one past the bound is answered with an error that names the
//! bound and says the model may call again in its next response. A response of thirty `task`
//! calls starts no more children than the bound, whatever the calls ask for.

use super::ChildSettings;
use crate::tools::{ToolCall, ToolSet};

/// For each of `calls` (one response's, in order), whether it starts a child past the bound;
/// and the number of calls that start one.
pub(in crate::agent) fn past_bound(
    settings: &ChildSettings,
    toolset: &ToolSet,
    calls: &[ToolCall],
) -> (Vec<bool>, usize) {
    let bound = settings.max_per_response.max(1);
    let mut delegations = 0;
    let past = calls
        .iter()
        .map(|call| {
            let tool = toolset.find(&call.name);
            let delegates = tool.is_some_and(|tool| tool.effect_of(&call.input).starts_child());
            delegations += usize::from(delegates);
            delegates && delegations > bound
        })
        .collect();
    (past, delegations)
}

/// The answer to a `task` call past the bound, of a response that made `called` of them.
pub(in crate::agent) fn answer(settings: &ChildSettings, called: usize) -> String {
    let bound = settings.max_per_response.max(1);
    format!(
        "Not run: one response may start at most {bound} child agents \
         (max_children_per_response), and this one called task {called} times, so only the \
         first {bound} ran. Call task again in your next response for the rest."
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::mcp::Hub;
    use serde_json::json;

    fn call(name: &str, input: serde_json::Value) -> ToolCall {
        ToolCall { id: String::new(), name: name.to_owned(), input }
    }

    #[test]
    fn the_first_so_many_children_run_and_the_rest_are_told_why() {
        let settings = ChildSettings { max_per_response: 2, ..ChildSettings::default() };
        let toolset = ToolSet::new(true, Hub::default());
        let calls = [
            call("task", json!({"prompt": "look"})),
            call("read_file", json!({"path": "a"})),
            call("task", json!({"prompt": "do", "item": "1"})),
            call("task", json!({"prompt": "look again"})),
            call("todo", json!({"items": []})),
            call("task", json!({"prompt": "and again"})),
        ];
        let (past, called) = past_bound(&settings, &toolset, &calls);
        assert_eq!(past, vec![false, false, false, true, false, true]);
        assert_eq!(called, 4);
        assert_eq!(
            answer(&settings, called),
            "Not run: one response may start at most 2 child agents (max_children_per_response), \
             and this one called task 4 times, so only the first 2 ran. Call task again in your \
             next response for the rest."
        );
        let unbounded = ChildSettings { max_per_response: 0, ..ChildSettings::default() };
        let (past, _) = past_bound(&unbounded, &toolset, &calls[..3]);
        assert_eq!(past, vec![false, false, true], "a bound of 0 is taken as 1");
    }
}
