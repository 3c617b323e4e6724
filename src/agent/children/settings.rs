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
