//! The command line: flags, and how they turn into settings.

use crate::config::FlagSettings;
use crate::headless::OutputFormat;
use clap::{Parser, Subcommand};
use std::path::PathBuf;

const AFTER_HELP: &str = "\
Headless mode (-p) runs every tool without asking: there is no one to ask. Use --approval read-only
to forbid commands and writes; --approval ask is refused with -p.

Environment: ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL (no /v1), OPENAI_API_KEY, OPENAI_BASE_URL (with /v1),
KEEL_PROVIDER, KEEL_MODEL.
Commands run sandboxed (bwrap; Landlock where bwrap cannot run): --sandbox off runs them unconfined;
KEEL_BWRAP names the bwrap program, KEEL_LANDLOCK=off turns Landlock off.
Commands and MCP servers get no secrets: `keel sandbox` lists the variables withheld, and why.
Config files: ./.keel/config.toml in the workspace (it may not set provider, base_url, api_key, prices
or pass_env, nor loosen approval or the sandbox; its hooks run only once you trust them: keel hooks
trust), then ~/.config/keel/config.toml (or $XDG_CONFIG_HOME/keel/config.toml).
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

    /// Plan mode: the model may read but not change anything, and ends with a plan on the board
    /// for you to edit and approve (with -p: print the planned board and exit).
    #[arg(long, conflicts_with = "no_todo")]
    pub plan: bool,

    /// No board: the model gets no todo tool and no reminder.
    #[arg(long)]
    pub no_todo: bool,

    /// The settings a flag gives, over the environment and the config files.
    #[command(flatten)]
    pub settings: FlagSettings,

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
    /// Where commands run, and which variables of your environment commands and MCP servers do
    /// not get (names only), with the rule.
    Sandbox,
    /// The MCP servers of your config.
    Mcp {
        #[command(subcommand)]
        command: McpCommand,
    },
    /// The hooks of your config and of the workspace's .keel/config.toml.
    Hooks {
        #[command(subcommand)]
        command: HooksSubcommand,
    },
}

/// `keel hooks …`.
#[derive(Debug, Clone, Copy, Subcommand)]
pub enum HooksSubcommand {
    /// Print each hook, whose file it is in, whether it runs, and exit.
    List,
    /// Trust the workspace's hooks as they are now (their commands and the files they run):
    /// they run from then on, until one of them changes.
    Trust,
    /// Forget the trust in this workspace's hooks: they stop running.
    Forget,
}

/// `keel mcp …`.
#[derive(Debug, Clone, Copy, Subcommand)]
pub enum McpCommand {
    /// Start each configured MCP server, print its state and tools, stop them and exit.
    List,
    /// Print the servers of the workspace's .mcp.json as your own config file takes them
    /// ([mcp_servers.NAME]), to copy there if you trust them; nothing is started.
    Import,
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
}
