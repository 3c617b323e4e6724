//! How a conversation's children run: keel's child system prompt, each child's budget, how many
//! explorers run at once, how many one response may start — and the defaults.

/// Model responses a child may take before keel stops it.
pub const DEFAULT_MAX_CHILD_ROUNDS: u32 = 30;
/// Input tokens a child's requests may take in all before keel stops it.
pub const DEFAULT_MAX_CHILD_TOKENS: u64 = 400_000;
/// Explorers that run at the same time.
pub const DEFAULT_MAX_PARALLEL_AGENTS: usize = 3;
/// Children one response may start; its further `task` calls are answered with an error.
pub const DEFAULT_MAX_CHILDREN_PER_RESPONSE: usize = 8;

/// How a conversation's children run.
#[derive(Debug, Clone, PartialEq)]
pub struct ChildSettings {
    /// keel's child system prompt, with the project's instructions.
    pub system_prompt: String,
    /// Each child's budget.
    pub budget: Budget,
    /// Explorers of one response that run at the same time (at least 1).
    pub max_parallel: usize,
    /// Children one response may start (at least 1): the first this many `task` calls run.
    pub max_per_response: usize,
}

impl Default for ChildSettings {
    fn default() -> Self {
        Self {
            system_prompt: crate::prompt::child_system_prompt(),
            budget: Budget::default(),
            max_parallel: DEFAULT_MAX_PARALLEL_AGENTS,
            max_per_response: DEFAULT_MAX_CHILDREN_PER_RESPONSE,
        }
    }
}

/// What a child may spend before keel stops it, whichever runs out first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// Model responses.
    pub rounds: u32,
    /// Input tokens, over all its requests.
    pub input_tokens: u64,
}

impl Default for Budget {
    fn default() -> Self {
        Self { rounds: DEFAULT_MAX_CHILD_ROUNDS, input_tokens: DEFAULT_MAX_CHILD_TOKENS }
    }
}

impl Budget {
    /// Why a child that has taken `rounds` model responses and `used` input tokens must stop
    /// before its next request (`next`: about how many input tokens it takes), if it must: the
    /// reason its report gives. The next request counts, so a child stops within its budget
    /// rather than one request past it.
    pub fn spent(&self, rounds: u32, used: u64, next: impl FnOnce() -> u64) -> Option<String> {
        if rounds >= self.rounds {
            return Some(format!(
                "it used its budget of {} model responses (max_child_rounds)",
                self.rounds
            ));
        }
        let next = next();
        (used.saturating_add(next) > self.input_tokens).then(|| {
            format!(
                "its next request, about {next} input tokens, would take it past its budget of \
                 {} (max_child_tokens) with the {used} it has used",
                self.input_tokens
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_stops_at_whichever_budget_runs_out_first_and_says_which() {
        let budget = Budget { rounds: 3, input_tokens: 1_000 };
        assert_eq!(budget.spent(2, 400, || 500), None, "within both");
        assert_eq!(
            budget.spent(3, 0, || 0).as_deref(),
            Some("it used its budget of 3 model responses (max_child_rounds)")
        );
        assert_eq!(
            budget.spent(1, 700, || 400).as_deref(),
            Some(
                "its next request, about 400 input tokens, would take it past its budget of \
                 1000 (max_child_tokens) with the 700 it has used"
            ),
            "the next request counts"
        );
        let rounds_first = budget.spent(3, 5_000, || 5_000).unwrap();
        assert!(rounds_first.contains("max_child_rounds"), "{rounds_first}");
    }
}
