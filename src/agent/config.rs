//! The agent's settings: [`AgentConfig`] (what the command line and the config files resolve to,
//! `config::resolve`), the approval modes, and the defaults keel starts from.

use super::children::settings::{Budget, ChildSettings};
use super::reminder::{self, NagThreshold};
use serde::{Deserialize, Serialize};

/// The reminder keel adds when the model has not touched its board for a while. It asks for the
/// update alongside the next step: a response spent on the board alone costs a whole request.
pub const DEFAULT_NAG_MESSAGE: &str = "<reminder>Update your todos in the same response as your \
next step's tool call, not in a response of its own.</reminder>";
/// Tool rounds without a `todo` call before the reminder is added.
pub const DEFAULT_NAG_THRESHOLD: u32 = reminder::DEFAULT_THRESHOLD;
/// Model responses one user turn may take before keel stops it.
pub const DEFAULT_MAX_ROUNDS: u32 = 100;
/// Output tokens asked for per response.
pub const DEFAULT_MAX_TOKENS: u32 = 8192;
pub use crate::llm::DEFAULT_CONTEXT_WINDOW;
/// Seconds a board item's check may run when the person's config does not say.
pub const DEFAULT_CHECK_TIMEOUT_SECS: u64 = 300;
/// The share of the context window, less `max_tokens`, at which keel compacts the history.
pub const DEFAULT_COMPACT_AT: f64 = 0.8;

/// When keel asks before running a tool that changes something.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum ApprovalMode {
    /// Ask before `bash`, `write_file` and `edit_file`.
    #[default]
    #[value(help = "Ask before commands and file changes")]
    Ask,
    /// Run everything inside the workspace without asking.
    #[value(help = "Run everything inside the workspace")]
    Auto,
    /// Refuse every write and command.
    #[value(help = "Refuse every command and write")]
    ReadOnly,
}

impl ApprovalMode {
    /// The mode as `--approval`, the config files and `/approval` spell it.
    pub fn name(self) -> &'static str {
        match self {
            Self::ReadOnly => "read-only",
            Self::Ask => "ask",
            Self::Auto => "auto",
        }
    }

    /// How much the mode lets run without asking: read-only < ask < auto.
    pub fn looseness(self) -> u8 {
        match self {
            Self::ReadOnly => 0,
            Self::Ask => 1,
            Self::Auto => 2,
        }
    }
}

/// How the agent behaves; fixed for the life of the task.
#[derive(Debug, Clone)]
pub struct AgentConfig {
    pub system_prompt: String,
    pub max_tokens: u32,
    /// Anthropic extended thinking's budget of tokens; `None` leaves it off.
    pub thinking_budget: Option<u32>,
    /// `Fixed(0)` turns the reminder off.
    pub nag_threshold: NagThreshold,
    pub nag_message: String,
    pub max_rounds: u32,
    pub approval: ApprovalMode,
    /// The model's context window in tokens (a server's "too long" answer corrects it).
    pub context_window: u32,
    /// Whether `context_window` is keel's figure for the model rather than one set.
    pub context_window_assumed: bool,
    /// The share of the window less `max_tokens` at which the history is compacted.
    pub compact_at: f64,
    /// Whether the model has the board at all (`--no-todo` takes the tool and the reminder away).
    pub board: bool,
    /// Start in plan mode (`--plan`): the model may read, not change, and ends with a board.
    pub plan: bool,
    /// The providers `/model` may switch to, and the windows of models.
    pub routes: crate::llm::Routes,
    /// The workspace's hooks, handed to its services: every conversation goes through them.
    pub hooks: std::sync::Arc<crate::hooks::Hooks>,
    /// How the conversation's child agents (`task`) run.
    pub children: ChildSettings,
    /// A budget that stops a turn in place of `max_rounds`: a child agent's own.
    pub budget: Option<Budget>,
    /// Seconds a board item's check may run before it is killed (and fails).
    pub check_timeout: u64,
}

impl AgentConfig {
    /// Whether these are a child agent's settings: a child's conversation carries its own budget.
    pub fn is_child(&self) -> bool {
        self.budget.is_some()
    }
}

impl Default for AgentConfig {
    fn default() -> Self {
        Self {
            system_prompt: String::new(),
            max_tokens: DEFAULT_MAX_TOKENS,
            thinking_budget: None,
            nag_threshold: NagThreshold::default(),
            nag_message: DEFAULT_NAG_MESSAGE.to_owned(),
            max_rounds: DEFAULT_MAX_ROUNDS,
            approval: ApprovalMode::Auto,
            context_window: DEFAULT_CONTEXT_WINDOW,
            context_window_assumed: true,
            compact_at: DEFAULT_COMPACT_AT,
            board: true,
            plan: false,
            routes: crate::llm::Routes::default(),
            hooks: std::sync::Arc::default(),
            children: ChildSettings::default(),
            budget: None,
            check_timeout: DEFAULT_CHECK_TIMEOUT_SECS,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tags::Tag;

    #[test]
    fn the_reminder_is_in_keels_own_tag() {
        assert!(DEFAULT_NAG_MESSAGE.starts_with(&Tag::Reminder.open()));
        assert!(DEFAULT_NAG_MESSAGE.ends_with(&Tag::Reminder.close()));
    }
}
