//! Where keel's settings come from, in this order of precedence:
//! flags > environment > `./.keel/config.toml` (in the workspace) >
//! `~/.config/keel/config.toml` (or `$XDG_CONFIG_HOME/keel/config.toml`) > defaults.
//!
//! The workspace's file is the project's, not the person's: it may not set the provider, its URL
//! or key, nor loosen approvals (see `trust`), and keel says what it took from it. Each setting
//! is declared once, in `settings`' table (`declare` reads it); reading files is `file`'s job,
//! merging `merge`'s. Model prices (`[prices."MODEL"]`, see `pricing`) only change what the
//! status bar shows, and come from the person's own file alone: a project could otherwise show
//! its costly model as free.

pub mod advice;
pub mod declare;
mod file;
pub mod mcp_import;
pub mod mcp_json;
mod merge;
mod settings;
pub mod trust;
pub mod window;

pub use crate::state_home::user_config_path;
pub use file::{parse_file, read_file};
pub use merge::{MIN_THINKING_BUDGET, merge};
pub use settings::{FileSettings, FlagSettings, Given, SETTINGS, ZERO_ROUNDS};
pub use trust::Ignored;
pub use window::{DEFAULT_CONTEXT_WINDOW, default_window};

use crate::agent::{AgentConfig, ApprovalMode, Budget, ChildSettings, NagThreshold};
use crate::llm::WireFormat;
use crate::pricing::{BadPrice, Prices};
use crate::runtime::sandbox::Policy as SandboxPolicy;
use crate::runtime::withheld::Withholding;
use crate::tools::mcp::config::Transport;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// The Anthropic API when no base URL is given (no `/v1`: the client adds it).
pub const DEFAULT_ANTHROPIC_BASE_URL: &str = "https://api.anthropic.com";
/// The OpenAI API when no base URL is given (with `/v1`, as OpenAI-compatible servers expect).
pub const DEFAULT_OPENAI_BASE_URL: &str = "https://api.openai.com/v1";
pub const DEFAULT_ANTHROPIC_MODEL: &str = "claude-sonnet-4-5";
pub const DEFAULT_OPENAI_MODEL: &str = "gpt-4.1";
/// The project's own settings file, relative to the workspace.
pub const PROJECT_CONFIG: &str = ".keel/config.toml";

/// Settings after every source has had its say.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// `None` when no provider was named and no key is set.
    pub provider: Option<WireFormat>,
    pub model: String,
    pub base_url: String,
    pub api_key: Option<String>,
    pub max_tokens: u32,
    /// Anthropic extended thinking's budget of tokens; `None` (or 0 where set) leaves it off.
    pub thinking_budget: Option<u32>,
    pub nag_threshold: NagThreshold,
    pub nag_message: String,
    pub max_rounds: u32,
    pub approval: ApprovalMode,
    /// The model's context window in tokens: as set, else the figure for its family.
    pub context_window: u32,
    /// Whether `context_window` was set rather than assumed for the model.
    pub context_window_set: bool,
    /// The share of the window less `max_tokens` at which keel compacts the history.
    pub compact_at: f64,
    /// Seconds a board item's check may run (`check_timeout`).
    pub check_timeout: u64,
    /// Where `approval` came from, for messages about it.
    pub approval_source: ApprovalSource,
    /// What the workspace's file set and keel did not take (see `trust`).
    pub ignored: Vec<Ignored>,
    /// Model prices: the files' over keel's own table.
    pub prices: Prices,
    /// What commands may do: `--sandbox`, `--network`, `writable_roots`.
    pub sandbox: SandboxPolicy,
    /// The MCP servers of the person's own config, by name.
    pub mcp_servers: Vec<crate::tools::mcp::Server>,
    /// Names the person's own config lets through to commands and MCP servers (`pass_env`).
    pub pass_env: Vec<String>,
    /// Paths the person's own config hides from commands and the model's tools (`hidden_paths`).
    pub hidden_paths: Vec<PathBuf>,
    /// Paths of keel's hidden list the person's own config lets through (`readable_paths`).
    pub readable_paths: Vec<PathBuf>,
    /// What the workspace's file set that keel took, each as `key = value`.
    pub project_settings: Vec<String>,
    /// The workspace's `.mcp.json`, if it has one: said, never started (see `mcp_json`).
    pub mcp_json: Option<mcp_json::McpJson>,
    /// The hooks of the person's config, then the workspace's (which run only once trusted).
    pub hooks: Vec<crate::hooks::HookSpec>,
    /// Each child agent's budget (`max_child_rounds`, `max_child_tokens`).
    pub child_budget: Budget,
    /// Explorers of one response that run at the same time.
    pub max_parallel_agents: usize,
    /// Child agents one response may start.
    pub max_children_per_response: usize,
}

impl Config {
    /// The agent's settings: everything the agent task takes from the resolved configuration,
    /// with what only the front end knows (the system prompt with the project's instructions,
    /// whether the board is on, whether the session starts in plan mode).
    pub fn agent_config(&self, system_prompt: String, board: bool, plan: bool) -> AgentConfig {
        self.settings_into(AgentConfig {
            system_prompt,
            context_window_assumed: !self.context_window_set,
            board,
            plan,
            routes: crate::llm::Routes::new(default_window),
            children: ChildSettings {
                budget: self.child_budget,
                max_parallel: self.max_parallel_agents,
                max_per_response: self.max_children_per_response,
                ..ChildSettings::default()
            },
            ..AgentConfig::default()
        })
    }

    /// The one line that tells the person what the workspace's file was not allowed to set.
    pub fn ignored_notice(&self) -> Option<String> {
        trust::notice(&self.ignored)
    }

    /// The one line that tells the person what keel took from the workspace's file.
    pub fn project_notice(&self) -> Option<String> {
        (!self.project_settings.is_empty()).then(|| {
            format!(
                "took {} from the workspace's {PROJECT_CONFIG}",
                self.project_settings.join(", ")
            )
        })
    }

    /// What keel keeps from commands and MCP servers, as this config shapes it: `pass_env`, the
    /// servers' `bearer_token_env_var`, the provider key.
    pub fn withholding(&self) -> Withholding {
        let tokens = self.mcp_servers.iter().filter_map(|server| match &server.transport {
            Transport::Http { bearer_token_env_var: Some(variable), .. } => {
                Some((variable.clone(), server.name.clone()))
            }
            _ => None,
        });
        Withholding::new(self.pass_env.clone(), tokens, self.api_key.as_deref())
    }

    /// The one line that says what the workspace's `.mcp.json` holds and how to use it.
    pub fn mcp_json_notice(&self) -> Option<String> {
        self.mcp_json.as_ref().map(mcp_json::McpJson::notice)
    }
}

/// Which setting decided the approval mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApprovalSource {
    Flag,
    /// The workspace's file, which only ever makes it stricter.
    ProjectFile,
    UserFile,
    /// The front end's own default: ask in the TUI, auto with `-p` and in the demo.
    Default,
}

impl ApprovalSource {
    /// How the person set `mode` this way, in their own words: `--approval ask`, ….
    pub fn describe(self, mode: ApprovalMode) -> String {
        let name = trust::approval_name(mode);
        match self {
            Self::Flag => format!("--approval {name}"),
            Self::ProjectFile => {
                format!("approval = \"{name}\" in the workspace's {PROJECT_CONFIG}")
            }
            Self::UserFile => format!("approval = \"{name}\" in your config file"),
            Self::Default => format!("the default approval, {name}"),
        }
    }
}

/// A setting that could not be read.
#[derive(Debug, Error)]
pub enum ConfigError {
    #[error("{path}:{line}:{column}: {key}{message}")]
    Parse { path: PathBuf, line: usize, column: usize, key: String, message: String },
    #[error("{path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("{variable}={value:?} is not a provider keel knows: use anthropic or openai")]
    BadProvider { variable: &'static str, value: String },
    #[error(
        "thinking_budget {budget} is below {MIN_THINKING_BUDGET}, the least the API takes \
         (0 turns thinking off)"
    )]
    ThinkingTooSmall { budget: u32 },
    #[error(
        "thinking_budget {budget} must be less than max_tokens {max_tokens}: thinking counts \
         toward the output limit, so raise --max-tokens (or max_tokens) as well"
    )]
    ThinkingOverOutput { budget: u32, max_tokens: u32 },
    #[error(
        "context_window {window} leaves no room for the conversation: it must be larger than \
         max_tokens {max_tokens}, which the answer may take of it (raise --context-window or \
         lower --max-tokens)"
    )]
    WindowTooSmall { window: u32, max_tokens: u32 },
    #[error(
        "compact_at {0} must be above 0 and at most 1: it is the share of the context window \
         (less max_tokens) at which keel compacts the conversation"
    )]
    BadCompactAt(f64),
    #[error("max_rounds {ZERO_ROUNDS}")]
    ZeroRounds,
    #[error("prices: {0}")]
    BadPrice(#[from] BadPrice),
    #[error("mcp_servers.{name} {why}")]
    BadMcpServer { name: String, why: String },
    #[error("{file}: {why}")]
    BadHooks { file: &'static str, why: String },
    #[error("{0} must be at least 1: a child agent needs room for one model response")]
    ZeroChildBudget(&'static str),
    #[error("check_timeout must be at least 1: it is the seconds a board item's check may run")]
    ZeroCheckTimeout,
}

/// Merges flags, environment (through `env`) and the two config files. `default_approval` is
/// the front end's own (ask in the TUI, auto with `-p`).
pub fn resolve(
    flags: &FlagSettings,
    env: &dyn Fn(&str) -> Option<String>,
    workspace: &Path,
    default_approval: ApprovalMode,
) -> Result<Config, ConfigError> {
    let project = read_file(&workspace.join(PROJECT_CONFIG))?;
    let user = match user_config_path(env) {
        Some(path) => read_file(&path)?,
        None => FileSettings::default(),
    };
    let mut config = merge(flags, env, &project, &user, default_approval)?;
    config.mcp_json = mcp_json::find(workspace);
    Ok(config)
}
