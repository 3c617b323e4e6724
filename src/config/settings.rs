//! Every setting, declared once: its name and type, its default, the flag that sets it (clap's
//! attributes; `skip` for none), its environment variable, what a workspace's own file may do
//! with it (`declare::Workspace`), and the agent's field it goes to (`#[agent = FIELD]`). From
//! this table `declare::settings!` writes the config file's `FileSettings`, the command line's
//! `FlagSettings`, the precedence of the sources (`Given`), what a workspace may set (`restrict`,
//! `taken`) and the agent's copy. A new setting is one entry here, and a field where it is used
//! (`Config`, built in `merge`; `AgentConfig`).
//!
//! A flag's doc is its `--help`. The order is the order keel names settings in: in `--help`, in
//! "took …" and in "ignored …".

use super::declare::{Env, settings};
use crate::agent::{
    ApprovalMode, DEFAULT_CHECK_TIMEOUT_SECS, DEFAULT_COMPACT_AT, DEFAULT_MAX_CHILD_ROUNDS,
    DEFAULT_MAX_CHILD_TOKENS, DEFAULT_MAX_CHILDREN_PER_RESPONSE, DEFAULT_MAX_PARALLEL_AGENTS,
    DEFAULT_MAX_ROUNDS, DEFAULT_MAX_TOKENS, DEFAULT_NAG_MESSAGE, NagThreshold,
};
use crate::hooks::HooksConfig;
use crate::llm::WireFormat;
use crate::pricing::Price;
use crate::runtime::sandbox::Mode as SandboxMode;
use crate::tools::mcp::ServerConfig;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Why a round limit of 0 is refused, wherever it was set.
pub const ZERO_ROUNDS: &str = "must be at least 1: it is how many model responses one prompt \
     may take, and 0 would stop every prompt before the model answers";

settings! {
    /// Which wire protocol to speak (default: the one whose key is set).
    #[arg(long, value_enum)]
    provider: WireFormat, workspace: Never, env: Env::Var("KEEL_PROVIDER");

    /// The model to ask.
    #[arg(long)]
    model: String, workspace: May, env: Env::Var("KEEL_MODEL");

    /// The provider's base URL (Anthropic without /v1; OpenAI-compatible with /v1).
    #[arg(long, value_name = "URL")]
    base_url: String, workspace: Never, env: Env::OfProvider(WireFormat::base_url_variable);

    /// The provider's API key (in the environment: the provider's own variable).
    #[arg(skip)]
    api_key: String, workspace: Never, env: Env::OfProvider(WireFormat::key_variable);

    /// Output tokens per model response.
    #[agent = max_tokens]
    #[arg(long, value_name = "N")]
    max_tokens: u32 = DEFAULT_MAX_TOKENS, workspace: May;

    /// Let the model think before it answers, with this many tokens of the output limit
    /// (Anthropic extended thinking; at least 1024, below --max-tokens; 0 = off).
    #[agent = thinking_budget]
    #[arg(long = "thinking", value_name = "BUDGET")]
    thinking_budget: u32, workspace: May;

    /// Tool rounds without a todo update before keel reminds the model (0 = never; `auto`:
    /// one more than the model's own steady rhythm, and at least 3).
    #[agent = nag_threshold]
    #[arg(long, value_name = "N|auto")]
    nag_threshold: NagThreshold = NagThreshold::default(), workspace: May;

    /// The reminder's text: keel's own voice, so the person's file alone sets it.
    #[agent = nag_message]
    #[arg(skip)]
    nag_message: String = DEFAULT_NAG_MESSAGE.to_owned(), workspace: Never;

    /// The model's context window in tokens; keel compacts the conversation to stay within it
    /// [default: the figure for the model's family, else 128000; a server's refusal corrects it].
    #[agent = context_window]
    #[arg(long, value_name = "N")]
    context_window: u32, workspace: May;

    /// Model responses one prompt may take before keel stops it (at least 1).
    #[agent = max_rounds]
    #[arg(long, value_name = "N", value_parser = at_least_one_round)]
    max_rounds: u32 = DEFAULT_MAX_ROUNDS, workspace: May;

    /// Seconds a board item's check may run before it is killed, and fails (at least 1).
    #[agent = check_timeout]
    #[arg(skip)]
    check_timeout: u64 = DEFAULT_CHECK_TIMEOUT_SECS, workspace: May;

    /// MCP servers by name: programs keel would start, servers it would send to.
    #[arg(skip)]
    mcp_servers: BTreeMap<String, ServerConfig> = BTreeMap::new(), workspace: Never;

    /// Variables withheld as secrets that commands and MCP servers may see anyway (see
    /// `runtime::withheld`).
    #[arg(skip)]
    pass_env: Vec<String> = Vec::new(), workspace: Never;

    /// Prices by model name, over keel's own table.
    #[arg(skip)]
    prices: BTreeMap<String, Price> = BTreeMap::new(), workspace: Never;

    /// More paths hidden from commands and the model's tools (`~/…` or absolute; see
    /// `runtime::sandbox::hidden`).
    #[arg(skip)]
    hidden_paths: Vec<PathBuf> = Vec::new(), workspace: Never;

    /// Paths of keel's hidden list to let through.
    #[arg(skip)]
    readable_paths: Vec<PathBuf> = Vec::new(), workspace: Never;

    /// When to ask before running commands and writing files [default: ask in the TUI, auto with -p].
    #[agent = approval]
    #[arg(long, value_enum)]
    approval: ApprovalMode = ApprovalMode::Ask, workspace: Tightens;

    /// The share of the context window, less max_tokens, at which keel compacts the history.
    #[agent = compact_at]
    #[arg(skip)]
    compact_at: f64 = DEFAULT_COMPACT_AT, workspace: May;

    /// Where commands run: `workspace` lets them write only the workspace (not `.git/hooks`,
    /// `.git/config`, `.keel`) and a private /tmp; `read-only` only /tmp; `off` runs them
    /// unconfined [default: workspace].
    #[arg(long, value_enum, value_name = "MODE")]
    sandbox: SandboxMode = SandboxMode::default(), workspace: Tightens;

    /// Let commands reach the network (by default they have loopback only).
    #[arg(long, num_args = 0, default_missing_value = "true")]
    network: bool = false, workspace: Tightens;

    /// Folders outside the workspace commands may write.
    #[arg(skip)]
    writable_roots: Vec<PathBuf> = Vec::new(), workspace: Never;

    /// Hooks by event, in Claude Code's nesting; a workspace's run once the person trusts them.
    #[arg(skip)]
    hooks: HooksConfig, workspace: Trusted;

    /// A child agent's budget of model responses (`task`).
    #[arg(skip)]
    max_child_rounds: u32 = DEFAULT_MAX_CHILD_ROUNDS, workspace: Tightens;

    /// A child agent's budget of input tokens, over all its requests.
    #[arg(skip)]
    max_child_tokens: u64 = DEFAULT_MAX_CHILD_TOKENS, workspace: Tightens;

    /// Explorers of one response that run at the same time.
    #[arg(skip)]
    max_parallel_agents: usize = DEFAULT_MAX_PARALLEL_AGENTS, workspace: Tightens;

    /// Child agents one response may start; its further `task` calls are answered with an error.
    #[arg(skip)]
    max_children_per_response: usize = DEFAULT_MAX_CHILDREN_PER_RESPONSE, workspace: Tightens;
}

/// `--max-rounds`: a count of model responses, so 0 would stop every prompt before it starts.
fn at_least_one_round(value: &str) -> Result<u32, String> {
    match value.parse::<u32>() {
        Ok(0) => Err(ZERO_ROUNDS.to_owned()),
        Ok(rounds) => Ok(rounds),
        Err(err) => Err(format!("{err}: give a number of model responses, such as 100")),
    }
}

#[cfg(test)]
mod tests;
