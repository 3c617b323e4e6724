//! Preparing a launch, step by step: the workspace; the settings the command line, the
//! environment and the config files give; the hooks; the sandbox, probed in the background; the
//! MCP servers, started; then the agent spawned with its provider, tools and session, and the
//! front end chosen with what it starts with. A sub-command is answered at the first step that
//! has what it needs (`sub_commands`), and launches nothing.

use super::{Front, Prepared, Running, UsageError, provider, sandbox, sessions, sub_commands};
use color_eyre::eyre::WrapErr;
use keel::agent::journal;
use keel::agent::{self, AgentConfig, ApprovalMode, Command};
use keel::cli::{Cli, McpCommand, SubCommand};
use keel::config::{self, Config, advice};
use keel::headless;
use keel::hooks::Hooks;
use keel::hooks::trust::TrustStore;
use keel::instructions::{self, Found};
use keel::llm::{Provider, WireFormat, scripted};
use keel::runtime::Workspace;
use keel::runtime::sandbox::Probing;
use keel::tools::Tools;
use keel::tools::mcp;
use keel::tui::{self, TuiOptions};
use keel::visible::visible;
use std::io::Read;
use std::sync::Arc;

/// Prepares what `cli` asks for: a launch, or a sub-command's answer.
pub async fn prepare(cli: Cli) -> color_eyre::Result<Prepared> {
    let headless = cli.print.is_some();
    if let Some(id) = &cli.resume {
        // An id never names a path: refused before anything is opened.
        journal::check_id(id).map_err(|err| UsageError(err.to_string()))?;
    }
    let (workspace, demo_dir) = super::workspace::open(&cli)?;
    if let Some(code) = sub_commands::on_workspace(&cli, &workspace)? {
        return Ok(Prepared::Done(code));
    }
    let env = |name: &str| std::env::var(name).ok();
    let config = settings(&cli, &env, &workspace)?;
    let hidden = sandbox::hidden(&config, &env, &workspace)?;
    let workspace = workspace.hiding(hidden);
    let hooks = hooks(&cli, &config, &env, &workspace);
    if let Some(SubCommand::Hooks { command }) = cli.command {
        return Ok(Prepared::Done(super::hooks::answer(&hooks, command)));
    }
    let mut notices: Vec<String> = config
        .project_notice()
        .into_iter()
        .chain(config.ignored_notice())
        .chain(config.mcp_json_notice())
        .chain(hooks.untrusted_notice())
        .collect();
    // Probed meanwhile: `-p` tells of a missing sandbox, Landlock in its place or no process
    // bound once the probe answers (`Running::run`).
    let sandboxing = sandbox::start(&config, &workspace, &env, &mut notices)?;
    let hidden = workspace.hidden();
    if let Some(code) = sub_commands::on_config(&cli, &config, &sandboxing.probing, hidden) {
        return Ok(Prepared::Done(code));
    }
    if !headless {
        notices.extend(sandboxing.probing.get().notices());
    }
    for notice in &notices {
        eprintln!("keel: {}", visible(notice));
    }
    // Started now, in the background: the first screen does not wait for them.
    let mcp = mcp::Hub::start(
        config.mcp_servers.clone(),
        workspace.root(),
        &sandboxing.writable,
        keel::state_home::state_dir(&env).as_deref(),
    );
    if let Some(SubCommand::Mcp { command: McpCommand::List }) = cli.command {
        return Ok(Prepared::Done(sub_commands::mcp_list(&mcp).await));
    }
    let settled = Settled { workspace, demo_dir, config, hooks, notices, sandboxing, mcp };
    launch(&cli, settled).map(|running| Prepared::Running(Box::new(running)))
}

/// What the launch has settled before the agent starts.
struct Settled {
    workspace: Workspace,
    demo_dir: Option<tempfile::TempDir>,
    config: Config,
    hooks: Hooks,
    /// What the person has been told so far.
    notices: Vec<String>,
    sandboxing: sandbox::Sandboxing,
    mcp: mcp::Hub,
}

/// The settings, resolved; what the environment withholds from commands and MCP servers set
/// once, before any of them starts.
fn settings(
    cli: &Cli,
    env: &dyn Fn(&str) -> Option<String>,
    workspace: &Workspace,
) -> color_eyre::Result<Config> {
    // Headless runs have no one to ask; the demo works in a throwaway folder and is watched.
    let default_approval =
        if cli.print.is_some() || cli.demo { ApprovalMode::Auto } else { ApprovalMode::Ask };
    let config = config::resolve(&cli.settings, env, workspace.root(), default_approval)?;
    if config.thinking_budget.is_some() && config.provider == Some(WireFormat::OpenAi) {
        eprintln!(
            "keel: --thinking (thinking_budget) is for Anthropic's API and is not sent to an \
             OpenAI-compatible server; such a server's own reasoning is still shown and kept."
        );
    }
    let _ = keel::runtime::withheld::set(config.withholding());
    Ok(config)
}

/// The person's hooks run; the workspace's once trusted. `-p` never trusts on its own. The
/// demo's scripted model runs in a folder of its own, without them.
fn hooks(
    cli: &Cli,
    config: &Config,
    env: &dyn Fn(&str) -> Option<String>,
    workspace: &Workspace,
) -> Hooks {
    if cli.demo {
        return Hooks::none();
    }
    Hooks::new(
        config.hooks.clone(),
        workspace.root(),
        keel::state_home::state_dir(env).as_deref().map(TrustStore::in_state),
        cli.print.is_none(),
    )
}

/// The agent spawned over what is settled, and the front end it goes to.
fn launch(cli: &Cli, settled: Settled) -> color_eyre::Result<Running> {
    let Settled { workspace, demo_dir, config, hooks, mut notices, sandboxing, mcp } = settled;
    let headless = cli.print.is_some();
    let resuming = cli.continue_session || cli.resume.is_some();
    if headless && config.approval == ApprovalMode::Ask {
        return Err(UsageError(format!(
            "-p cannot ask before running tools: no one is there to answer. Use --approval auto \
             or --approval read-only ({} asked for ask).",
            config.approval_source.describe(config.approval)
        ))
        .into());
    }
    let given_prompt = cli.prompt().map_err(UsageError)?;
    let headless_prompt = match headless {
        true => Some(read_prompt(given_prompt.as_deref().unwrap_or(""), cli.demo || resuming)?),
        false => None,
    };
    // The project's AGENTS.md (else CLAUDE.md), read once: the prompt stays the same all along.
    let instructions = instructions::find(&workspace);
    let instructions_note = instructions.note();
    if let (Some(note), true) = (&instructions_note, headless) {
        eprintln!("keel: {}", visible(note));
    }
    let agent_config = agent_config(cli, &config, hooks, &instructions)?;
    let demo_place = cli.demo.then(|| scripted::DemoPlace {
        folder: workspace.root().to_path_buf(),
        temporary: demo_dir.is_some(),
        headless,
    });
    let provider = match &demo_place {
        Some(place) => Some(provider::demo(place, cli.demo_pace_ms, headless)?),
        None => provider::configured(&config)?,
    };
    let missing_key = advice::missing_key(config.provider, &|name| std::env::var(name).ok());
    if headless && provider.is_none() {
        return Err(UsageError(format!("{}, or try --demo", missing_key.replace('`', ""))).into());
    }
    if let (Some(place), true) = (&demo_place, headless) {
        eprintln!("keel: {}", visible(&place.describe()));
    }
    if !headless && !tui::has_terminal() {
        return Err(UsageError(
            "keel's screen needs a terminal, and there is none here (stdout or the keyboard is \
             not one). To run without one, give the prompt to -p: keel -p \"your task\" \
             --approval auto"
                .to_owned(),
        )
        .into());
    }
    let told = notices.len();
    let writable = &sandboxing.writable;
    let sessions = sessions::open(cli, &workspace, writable, demo_dir.is_some(), &mut notices)?;
    for notice in &notices[told..] {
        eprintln!("keel: {}", visible(notice));
    }
    let demo_prompt = match &provider {
        Some(Provider::Scripted(script)) => Some(script.prompt().to_owned()),
        _ => None,
    };
    let opening = Opening {
        headless_prompt,
        given_prompt,
        demo_prompt,
        first_run_help: provider
            .is_none()
            .then(|| format!("No model is configured: {missing_key}. Then start keel again.")),
        demo_place,
        instructions_note,
        notice: (!notices.is_empty()).then(|| notices.join("\n")),
        workspace: workspace.root().to_path_buf(),
        hidden: workspace.hidden().clone(),
    };
    let probing = sandboxing.probing.clone();
    let tools = Tools::new(workspace).with_probing_sandbox(probing.clone()).with_mcp(mcp.clone());
    let handle = agent::spawn_with_session(agent_config, provider, tools, sessions);
    let front = front(cli, &config, opening, probing);
    let session_tmp = sandboxing.session_tmp;
    Ok(Running { handle, front, mcp, demo_dir, session_tmp })
}

/// The agent's settings: the system prompts with the project's instructions, the routes
/// `/model` may take, the hooks.
fn agent_config(
    cli: &Cli,
    config: &Config,
    hooks: Hooks,
    instructions: &Found,
) -> color_eyre::Result<AgentConfig> {
    let mut agent_config = config.agent_config(
        instructions::system_prompt(&keel::prompt::system_prompt(!cli.no_todo), instructions),
        !cli.no_todo,
        cli.plan,
    );
    let env = |name: &str| std::env::var(name).ok();
    agent_config.routes = provider::routes(config, &env, agent_config.routes)?;
    agent_config.hooks = Arc::new(hooks);
    agent_config.children.system_prompt =
        instructions::system_prompt(&keel::prompt::child_system_prompt(), instructions);
    Ok(agent_config)
}

/// What the front end opens with.
struct Opening {
    /// `-p`'s prompt (empty: go on, or play the demo).
    headless_prompt: Option<String>,
    /// The prompt given on the command line, for the TUI to send at once.
    given_prompt: Option<String>,
    /// The demo's prompt, when the model is the demo.
    demo_prompt: Option<String>,
    first_run_help: Option<String>,
    demo_place: Option<scripted::DemoPlace>,
    instructions_note: Option<String>,
    /// What the person was told as keel started, for the TUI to show.
    notice: Option<String>,
    workspace: std::path::PathBuf,
    /// The paths hidden from the model, which `@` never lists.
    hidden: keel::runtime::sandbox::hidden::Hidden,
}

/// The front end, and what it starts with.
fn front(cli: &Cli, config: &Config, opening: Opening, sandbox: Probing) -> Front {
    let resuming = cli.continue_session || cli.resume.is_some();
    if let Some(prompt) = opening.headless_prompt {
        let start = match (prompt.is_empty(), opening.demo_prompt) {
            (true, _) if resuming => Command::Continue,
            (true, Some(demo_prompt)) => Command::Submit(demo_prompt),
            _ => Command::Submit(prompt),
        };
        let printing = headless::Printing {
            format: cli.output_format,
            plan: cli.plan,
            price: config.prices.of(&config.model),
        };
        return Front::Headless { start, printing, sandbox };
    }
    // A prompt on the command line is sent as `claude "…"` and `codex "…"` send theirs; the TUI
    // still asks before anything changes.
    let start = match opening.given_prompt.map(|prompt| prompt.trim().to_owned()) {
        Some(prompt) if !prompt.is_empty() => Some(Command::Submit(prompt)),
        _ if opening.demo_prompt.is_some() && !resuming => Some(Command::PlayDemo),
        _ => None,
    };
    let options = TuiOptions {
        first_run_help: opening.first_run_help,
        demo: opening.demo_place,
        notice: opening.notice,
        instructions_note: opening.instructions_note,
        no_color: tui::no_color_requested(std::env::var_os("NO_COLOR").as_deref()),
        prices: config.prices.clone(),
        workspace: Some(opening.workspace),
        hidden: opening.hidden,
        clock: tui::view::board::marks::Clock::local(),
    };
    Front::Tui { start, options }
}

/// The prompt for `-p`: the argument, or stdin for `-`.
fn read_prompt(arg: &str, may_be_empty: bool) -> color_eyre::Result<String> {
    let prompt = if arg == "-" {
        let mut text = String::new();
        std::io::stdin().read_to_string(&mut text).wrap_err("cannot read the prompt from stdin")?;
        text
    } else {
        arg.to_owned()
    };
    if prompt.trim().is_empty() && !may_be_empty {
        return Err(UsageError("-p needs a prompt (or `-p -` to read it from stdin)".into()).into());
    }
    Ok(prompt.trim().to_owned())
}
