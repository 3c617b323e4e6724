//! The children of one response are bounded (`max_children_per_response`): the first so many of
//! its `task` calls run, and each one past the bound is answered with an error that names the
//! bound and says the model may call again in its next response. A response of thirty `task`
//! calls starts no more children than the bound, whatever the calls ask for.

use crate::agent::turn::Turn;
use crate::tools::{Effect, ToolCall};

impl Turn<'_> {
    /// For each of `calls` (one response's, in order), whether it is a `task` call past the
    /// bound; and the number of `task` calls the response made.
    pub(in crate::agent) fn past_children_bound(&self, calls: &[ToolCall]) -> (Vec<bool>, usize) {
        let bound = self.config.children.max_per_response.max(1);
        let mut delegations = 0;
        let past = calls
            .iter()
            .map(|call| {
                let delegates = self
                    .toolset
                    .find(&call.name)
                    .is_some_and(|tool| tool.effect() == Effect::Delegates);
                delegations += usize::from(delegates);
                delegates && delegations > bound
            })
            .collect();
        (past, delegations)
    }

    /// The answer to a `task` call past the bound, of a response that made `called` of them.
    pub(in crate::agent) fn past_bound_answer(&self, called: usize) -> String {
        let bound = self.config.children.max_per_response.max(1);
        format!(
            "Not run: one response may start at most {bound} child agents \
             (max_children_per_response), and this one called task {called} times, so only the \
             first {bound} ran. Call task again in your next response for the rest."
        )
    }
}
