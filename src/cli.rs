//! The command line: flags, and how they turn into settings.

use crate::agent::{ApprovalMode, NagThreshold};
use crate::config::{FlagSettings, ProviderKind};
use crate::headless::OutputFormat;
use clap::{Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

const AFTER_HELP: &str = "\
Headless mode (-p) runs every tool without asking: there is no one to ask. Use --approval read-only
to forbid commands and writes; --approval ask is refused with -p.

Environment: ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL (no /v1), OPENAI_API_KEY, OPENAI_BASE_URL (with /v1),
KEEL_PROVIDER, KEEL_MODEL.
Config files: ./.keel/config.toml in the workspace (it may not set provider, base_url or api_key, nor
loosen approval), then ~/.config/keel/config.toml (or $XDG_CONFIG_HOME/keel/config.toml).
Sessions and undo snapshots: ~/.local/state/keel (or $XDG_STATE_HOME/keel), never the workspace.
Exit codes: 0 success, 1 the run failed, 2 usage or configuration error.";

/// keel — a terminal coding agent that plans on a task board and does not drift.
#[derive(Debug, Parser)]
#[command(name = "keel", version, about, after_help = AFTER_HELP, args_conflicts_with_subcommands = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<SubCommand>,

    /// Run headless: send PROMPT, print progress to stderr and the answer to stdout.
    /// `-p -` reads the prompt from stdin; with --demo the prompt may be left out. The prompt
    /// may also come last, after other flags (`keel -p --max-rounds 3 "PROMPT"`).
    #[arg(short = 'p', long = "print", value_name = "PROMPT", num_args = 0..=1, default_missing_value = "")]
    pub print: Option<String>,

    /// The prompt: without -p, keel opens with it sent; with -p, the prompt to run headless.
    #[arg(value_name = "PROMPT")]
    pub prompt: Option<String>,

    /// With -p: `text`, or `json` for one JSON event per line on stdout.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub output_format: OutputFormat,

    /// Play the built-in demo: a scripted model, real tools, a fresh temporary workspace
    /// (unless --workdir is given). Needs no key and no network.
    #[arg(long)]
    pub demo: bool,

    /// The demo's pause before each answer, in milliseconds.
    #[arg(long, value_name = "MS", hide = true)]
    pub demo_pace_ms: Option<u64>,

    /// Which wire protocol to speak (default: the one whose key is set).
    #[arg(long, value_enum)]
    pub provider: Option<ProviderKind>,

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

    /// Plan mode: the model may read but not change anything, and ends with a plan on the board
    /// for you to edit and approve (with -p: print the planned board and exit).
    #[arg(long, conflicts_with = "no_todo")]
    pub plan: bool,

    /// No board: the model gets no todo tool and no reminder.
    #[arg(long)]
    pub no_todo: bool,

    /// The model's context window in tokens; keel compacts the conversation to stay within it
    /// [default: the figure for the model's family, else 128000; a server's refusal corrects it].
    #[arg(long, value_name = "N")]
    pub context_window: Option<u32>,

    /// Model responses one prompt may take before keel stops it (at least 1).
    #[arg(long, value_name = "N", value_parser = at_least_one_round)]
    pub max_rounds: Option<u32>,

    /// When to ask before running commands and writing files [default: ask in the TUI, auto with -p].
    #[arg(long, value_enum)]
    pub approval: Option<ApprovalArg>,

    /// The workspace: tools cannot reach outside it [default: the current directory].
    #[arg(long, value_name = "DIR", global = true)]
    pub workdir: Option<PathBuf>,

    /// Reopen the session of this workspace written last (with -p and no prompt: finish its last
    /// turn).
    #[arg(short = 'c', long = "continue", conflicts_with = "resume")]
    pub continue_session: bool,

    /// Reopen the session with this id, as `keel sessions` lists it (an id, never a path).
    #[arg(long, value_name = "ID")]
    pub resume: Option<String>,
}

/// Commands besides running the agent.
#[derive(Debug, Subcommand)]
pub enum SubCommand {
    /// List the saved sessions of this workspace, the one written last at the end: id, start
    /// time, board, first prompt.
    Sessions,
    /// Take back what the last prompt that changed files changed, bash included; repeat to step
    /// back.
    Undo,
    /// The MCP servers of your config.
    Mcp {
        #[command(subcommand)]
        command: McpCommand,
    },
}

/// `keel mcp …`.
#[derive(Debug, Clone, Copy, Subcommand)]
pub enum McpCommand {
    /// Start each configured MCP server, print its state and tools, stop them and exit.
    List,
}

/// `--approval` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ApprovalArg {
    /// Ask before commands and file changes.
    Ask,
    /// Run everything inside the workspace.
    Auto,
    /// Refuse every command and write.
    ReadOnly,
}

impl From<ApprovalArg> for ApprovalMode {
    fn from(arg: ApprovalArg) -> Self {
        match arg {
            ApprovalArg::Ask => Self::Ask,
            ApprovalArg::Auto => Self::Auto,
            ApprovalArg::ReadOnly => Self::ReadOnly,
        }
    }
}

/// `--max-rounds`: a count of model responses, so 0 would stop every prompt before it starts.
fn at_least_one_round(value: &str) -> Result<u32, String> {
    match value.parse::<u32>() {
        Ok(0) => Err(crate::config::ZERO_ROUNDS.to_owned()),
        Ok(rounds) => Ok(rounds),
        Err(err) => Err(format!("{err}: give a number of model responses, such as 100")),
    }
}

impl Cli {
    /// The prompt given on the command line: `-p PROMPT`, or the one that comes last. Two
    /// prompts are a usage error rather than one of them silently dropped.
    pub fn prompt(&self) -> Result<Option<String>, String> {
        match (self.print.as_deref(), self.prompt.as_deref()) {
            (Some(given), Some(last)) if !given.is_empty() => Err(format!(
                "two prompts given ({given:?} after -p and {last:?}): give one, after -p or last"
            )),
            (_, Some(last)) => Ok(Some(last.to_owned())),
            (Some(given), None) => Ok(Some(given.to_owned())),
            (None, None) => Ok(None),
        }
    }

    /// The settings given as flags, for `config::resolve`.
    pub fn flag_settings(&self) -> FlagSettings {
        FlagSettings {
            provider: self.provider,
            model: self.model.clone(),
            base_url: self.base_url.clone(),
            max_tokens: self.max_tokens,
            thinking_budget: self.thinking_budget,
            nag_threshold: self.nag_threshold,
            max_rounds: self.max_rounds,
            approval: self.approval.map(Into::into),
            context_window: self.context_window,
        }
    }
}
