//! The settings as each source gives them: a config file (`FileSettings`, every field optional)
//! and the command line (`FlagSettings`, flattened into `cli::Cli`). A new setting is written
//! here, in both where the command line may set it, and merged in `config::merge`.

use crate::agent::{ApprovalMode, NagThreshold};
use crate::llm::WireFormat;
use crate::pricing::Price;
use crate::runtime::sandbox::Mode as SandboxMode;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Why a round limit of 0 is refused, wherever it was set.
pub const ZERO_ROUNDS: &str = "must be at least 1: it is how many model responses one prompt \
     may take, and 0 would stop every prompt before the model answers";

/// The settings a config file may hold. Every field is optional.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileSettings {
    pub provider: Option<WireFormat>,
    pub model: Option<String>,
    pub base_url: Option<String>,
    pub api_key: Option<String>,
    pub max_tokens: Option<u32>,
    pub thinking_budget: Option<u32>,
    /// A number of rounds, or `"auto"`.
    pub nag_threshold: Option<NagThreshold>,
    pub nag_message: Option<String>,
    pub max_rounds: Option<u32>,
    pub approval: Option<ApprovalMode>,
    pub context_window: Option<u32>,
    pub compact_at: Option<f64>,
    /// Prices by model name, over keel's own table.
    pub prices: Option<BTreeMap<String, Price>>,
    /// The sandbox commands run in (see `sandbox_policy`).
    pub sandbox: Option<SandboxMode>,
    pub network: Option<bool>,
    /// Folders outside the workspace commands may write; the person's own file only.
    pub writable_roots: Option<Vec<PathBuf>>,
    /// MCP servers by name; only the person's own file may name them.
    pub mcp_servers: Option<BTreeMap<String, crate::tools::mcp::ServerConfig>>,
    /// Variables withheld as secrets that commands and MCP servers may see anyway; the person's
    /// own file only (see `runtime::withheld`).
    pub pass_env: Option<Vec<String>>,
    /// More paths hidden from commands and the model's tools (`~/…` or absolute); the person's
    /// own file only (see `runtime::sandbox::hidden`).
    pub hidden_paths: Option<Vec<PathBuf>>,
    /// Paths of keel's hidden list to let through; the person's own file only.
    pub readable_paths: Option<Vec<PathBuf>>,
    /// Hooks by event, in Claude Code's nesting; a workspace's run once the person trusts them.
    pub hooks: Option<crate::hooks::HooksConfig>,
    /// A child agent's budget of model responses (`task`).
    pub max_child_rounds: Option<u32>,
    /// A child agent's budget of input tokens, over all its requests.
    pub max_child_tokens: Option<u64>,
    /// Explorers of one response that run at the same time.
    pub max_parallel_agents: Option<usize>,
    /// Child agents one response may start; its further `task` calls are answered with an error.
    pub max_children_per_response: Option<usize>,
}

/// The settings given as flags: derived once, and flattened into the command line (`cli::Cli`),
/// so a new setting is written here and in `FileSettings`, and nowhere else.
#[derive(Debug, Clone, Default, PartialEq, clap::Args)]
pub struct FlagSettings {
    /// Which wire protocol to speak (default: the one whose key is set).
    #[arg(long, value_enum)]
    pub provider: Option<WireFormat>,

    /// The model to ask.
    #[arg(long)]
    pub model: Option<String>,

    /// The provider's base URL (Anthropic without /v1; OpenAI-compatible with /v1).
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,

    /// Output tokens per model response.
    #[arg(long, value_name = "N")]
    pub max_tokens: Option<u32>,

    /// Let the model think before it answers, with this many tokens of the output limit
    /// (Anthropic extended thinking; at least 1024, below --max-tokens; 0 = off).
    #[arg(long = "thinking", value_name = "BUDGET")]
    pub thinking_budget: Option<u32>,

    /// Tool rounds without a todo update before keel reminds the model (0 = never; `auto`:
    /// one more than the model's own steady rhythm, and at least 3).
    #[arg(long, value_name = "N|auto")]
    pub nag_threshold: Option<NagThreshold>,

    /// The model's context window in tokens; keel compacts the conversation to stay within it
    /// [default: the figure for the model's family, else 128000; a server's refusal corrects it].
    #[arg(long, value_name = "N")]
    pub context_window: Option<u32>,

    /// Model responses one prompt may take before keel stops it (at least 1).
    #[arg(long, value_name = "N", value_parser = at_least_one_round)]
    pub max_rounds: Option<u32>,

    /// When to ask before running commands and writing files [default: ask in the TUI, auto with -p].
    #[arg(long, value_enum)]
    pub approval: Option<ApprovalMode>,

    /// Where commands run: `workspace` lets them write only the workspace (not `.git/hooks`,
    /// `.git/config`, `.keel`) and a private /tmp; `read-only` only /tmp; `off` runs them
    /// unconfined [default: workspace].
    #[arg(long, value_enum, value_name = "MODE")]
    pub sandbox: Option<SandboxMode>,

    /// Let commands reach the network (by default they have loopback only).
    #[arg(long, num_args = 0, default_missing_value = "true")]
    pub network: Option<bool>,
}

/// `--max-rounds`: a count of model responses, so 0 would stop every prompt before it starts.
fn at_least_one_round(value: &str) -> Result<u32, String> {
    match value.parse::<u32>() {
        Ok(0) => Err(ZERO_ROUNDS.to_owned()),
        Ok(rounds) => Ok(rounds),
        Err(err) => Err(format!("{err}: give a number of model responses, such as 100")),
    }
}
