//! Preparing a launch: the command line and the environment turned into settings, the
//! workspace, the provider, the session and the tools; the agent spawned with them; and the front
//! end chosen, with what it starts with. Sub-commands are answered here and launch nothing.

use super::{Front, Launch, Prepared, UsageError, sandbox_report, sessions};
use color_eyre::eyre::WrapErr;
use keel::agent::journal::{self, SessionError, SessionStore};
use keel::agent::{self, ApprovalMode, Command, Sessions};
use keel::cli::{Cli, McpCommand, SubCommand};
use keel::config::{self, Config, advice};
use keel::headless;
use keel::hooks::Hooks;
use keel::hooks::trust::TrustStore;
use keel::instructions;
use keel::llm::WireFormat;
use keel::llm::{HttpSettings, Provider, Routes, retry::RetryPolicy, scripted};
use keel::tools::mcp;
use keel::tools::sandbox::session_tmp::SessionTmp;
use keel::tools::sandbox::{KeelFolders, Mode, Policy, Probing, keel_folders, process_limit};
use keel::tools::{Tools, Workspace};
use keel::tui::{self, TuiOptions};
use keel::visible::visible;
use std::io::Read;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

/// How long to wait for a TCP/TLS connection to the provider.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);
/// How long a response stream may stay silent before it counts as cut.
const IDLE_TIMEOUT: Duration = Duration::from_secs(120);
/// How long a response may go without an event that carries the answer (a server trickling
/// bytes or sending only keep-alives), unless `KEEL_STALL_TIMEOUT` says otherwise.
const STALL_TIMEOUT: Duration = Duration::from_secs(300);
const STALL_TIMEOUT_VAR: &str = "KEEL_STALL_TIMEOUT";
/// The headless demo's pause before each answer: quick, but still readable as it scrolls.
const HEADLESS_DEMO_PACE: Duration = Duration::from_millis(150);

/// Prepares what `cli` asks for: a launch, or a sub-command's answer.
pub async fn prepare(cli: Cli) -> color_eyre::Result<Prepared> {
    let resuming = cli.continue_session || cli.resume.is_some();
    let headless = cli.print.is_some();
    if let Some(id) = &cli.resume {
        // An id never names a path: refused before anything is opened.
        journal::check_id(id).map_err(|err| UsageError(err.to_string()))?;
    }
    let (workspace, demo_dir) = workspace(&cli)?;
    match cli.command {
        Some(SubCommand::Sessions) => return sessions::list(&workspace).map(Prepared::Done),
        Some(SubCommand::Undo) => return sessions::undo(&workspace).map(Prepared::Done),
        Some(SubCommand::Mcp { .. } | SubCommand::Sandbox | SubCommand::Hooks { .. }) | None => {}
    }
    let env = |name: &str| std::env::var(name).ok();
    // Headless runs have no one to ask; the demo works in a throwaway folder and is watched.
    let default_approval =
        if headless || cli.demo { ApprovalMode::Auto } else { ApprovalMode::Ask };
    let config = config::resolve(&cli.settings, &env, workspace.root(), default_approval)?;
    if config.thinking_budget.is_some() && config.provider == Some(WireFormat::OpenAi) {
        eprintln!(
            "keel: --thinking (thinking_budget) is for Anthropic's API and is not sent to an \
             OpenAI-compatible server; such a server's own reasoning is still shown and kept."
        );
    }
    // Set once, before any command or MCP server starts: what neither gets of keel's environment.
    let _ = keel::tools::withheld::set(config.withholding());
    // The person's hooks run; the workspace's once trusted. `-p` never trusts on its own. The
    // demo's scripted model runs in a folder of its own, without them.
    let hooks = match cli.demo {
        true => Hooks::none(),
        false => Hooks::new(
            config.hooks.clone(),
            workspace.root(),
            keel::state_home::state_dir(&env).as_deref().map(TrustStore::in_state),
            !headless,
        ),
    };
    if let Some(SubCommand::Hooks { command }) = cli.command {
        return Ok(Prepared::Done(super::hooks::answer(&hooks, command)));
    }
    // Probed meanwhile: `-p` tells of a missing sandbox once the probe answers (`Launch::run`).
    let mut notices: Vec<String> = config
        .project_notice()
        .into_iter()
        .chain(config.ignored_notice())
        .chain(config.mcp_json_notice())
        .chain(hooks.untrusted_notice())
        .collect();
    let mut policy = config.sandbox.clone();
    policy.max_processes = max_processes()?;
    // No program keel runs outside the sandbox is taken from where commands may write.
    let writable = policy.writable_places(workspace.root());
    let (folders, session_tmp) = keel_folders(&policy, &env, &mut notices);
    let sandbox = Probing::for_commands(policy, workspace.root(), folders);
    if let Some(SubCommand::Sandbox) = cli.command {
        let vars: Vec<_> = std::env::vars_os().collect();
        println!("{}", sandbox_report::render(&config, sandbox.get(), &vars));
        return Ok(Prepared::Done(ExitCode::SUCCESS));
    }
    if let Some(SubCommand::Mcp { command: McpCommand::Import }) = cli.command {
        let found = config.mcp_json.clone();
        let text = found.map_or_else(
            || "# The workspace has no .mcp.json.\n".to_owned(),
            |found| found.as_toml(),
        );
        print!("{text}");
        return Ok(Prepared::Done(ExitCode::SUCCESS));
    }
    if !headless {
        notices.extend(sandbox.get().problem().map(str::to_owned));
    }
    for notice in &notices {
        eprintln!("keel: {}", visible(notice));
    }
    // Started now, in the background: the first screen does not wait for them.
    let mcp = mcp::Hub::start(
        config.mcp_servers.clone(),
        workspace.root(),
        &writable,
        keel::state_home::state_dir(&env).as_deref(),
    );
    if let Some(SubCommand::Mcp { command: McpCommand::List }) = cli.command {
        mcp.settled().await;
        let servers = mcp.servers();
        println!("{}", mcp::listing::render(&servers));
        mcp.shutdown();
        // A server that failed is a failed listing, for scripts that check it.
        let failed =
            servers.iter().any(|server| matches!(server.status, mcp::hub::Status::Failed(_)));
        return Ok(Prepared::Done(if failed {
            ExitCode::from(super::EXIT_FAILED)
        } else {
            ExitCode::SUCCESS
        }));
    }
    if headless && config.approval == ApprovalMode::Ask {
        return Err(UsageError(format!(
            "-p cannot ask before running tools: no one is there to answer. Use --approval auto \
             or --approval read-only ({} asked for ask).",
            config.approval_source.describe(config.approval)
        ))
        .into());
    }
    let given_prompt = cli.prompt().map_err(UsageError)?;
    let headless_prompt = match (headless, &given_prompt) {
        (true, Some(prompt)) => Some(read_prompt(prompt, cli.demo || resuming)?),
        (true, None) => Some(read_prompt("", cli.demo || resuming)?),
        (false, _) => None,
    };
    // The project's AGENTS.md (else CLAUDE.md), read once: the prompt stays the same all along.
    let instructions = instructions::find(&workspace);
    let instructions_note = instructions.note();
    if let (Some(note), true) = (&instructions_note, headless) {
        eprintln!("keel: {}", visible(note));
    }
    let mut agent_config = config.agent_config(
        instructions::system_prompt(&keel::prompt::system_prompt(!cli.no_todo), &instructions),
        !cli.no_todo,
        cli.plan,
    );
    agent_config.routes = routes(&config, &env, agent_config.routes)?;
    agent_config.hooks = Arc::new(hooks);
    agent_config.children.system_prompt =
        instructions::system_prompt(&keel::prompt::child_system_prompt(), &instructions);
    let demo_place = cli.demo.then(|| scripted::DemoPlace {
        folder: workspace.root().to_path_buf(),
        temporary: demo_dir.is_some(),
        headless,
    });
    let provider = match &demo_place {
        Some(place) => {
            let pace = cli.demo_pace_ms.map(Duration::from_millis).unwrap_or(
                if headless_prompt.is_some() { HEADLESS_DEMO_PACE } else { scripted::HUMAN_PACE },
            );
            let script =
                scripted::ScriptedProvider::demo(pace).wrap_err("the demo script is broken")?;
            Some(Provider::Scripted(script.ran_in(place)))
        }
        None => build_provider(&config)?,
    };

    let missing_key = advice::missing_key(config.provider, &env);
    if headless_prompt.is_some() && provider.is_none() {
        return Err(UsageError(format!("{}, or try --demo", missing_key.replace('`', ""))).into());
    }
    if let (Some(place), true) = (&demo_place, headless) {
        eprintln!("keel: {}", visible(&place.describe()));
    }
    let demo_prompt = match &provider {
        Some(Provider::Scripted(script)) => Some(script.prompt().to_owned()),
        _ => None,
    };
    let first_run_help = provider
        .is_none()
        .then(|| format!("No model is configured: {missing_key}. Then start keel again."));
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
    let sessions = open_session(&cli, &workspace, &writable, demo_dir.is_some(), &mut notices)?;
    for notice in &notices[told..] {
        eprintln!("keel: {}", visible(notice));
    }
    let notice = (!notices.is_empty()).then(|| notices.join("\n"));
    let workspace_root = workspace.root().to_path_buf();
    let tools = Tools::new(workspace).with_probing_sandbox(sandbox.clone()).with_mcp(mcp.clone());
    let handle = agent::spawn_with_session(agent_config, provider, tools, sessions);
    let front = match headless_prompt {
        Some(prompt) => {
            let start = match (prompt.is_empty(), demo_prompt) {
                (true, _) if resuming => Command::Continue,
                (true, Some(demo_prompt)) => Command::Submit(demo_prompt),
                _ => Command::Submit(prompt),
            };
            let printing = headless::Printing {
                format: cli.output_format,
                plan: cli.plan,
                price: config.prices.of(&config.model),
            };
            Front::Headless { start, printing, sandbox }
        }
        None => {
            // A prompt on the command line is sent as `claude "…"` and `codex "…"` send theirs;
            // the TUI still asks before anything changes.
            let start = match given_prompt.map(|prompt| prompt.trim().to_owned()) {
                Some(prompt) if !prompt.is_empty() => Some(Command::Submit(prompt)),
                _ if demo_prompt.is_some() && !resuming => Some(Command::PlayDemo),
                _ => None,
            };
            let options = TuiOptions {
                first_run_help,
                demo: demo_place,
                notice,
                instructions_note,
                no_color: tui::no_color_requested(std::env::var_os("NO_COLOR").as_deref()),
                prices: config.prices.clone(),
                workspace: Some(workspace_root),
            };
            Front::Tui { start, options }
        }
    };
    Ok(Prepared::Launch(Box::new(Launch { handle, front, mcp, demo_dir, session_tmp })))
}

/// The session to save to: a new one, or the one `--continue`/`--resume` names, replayed. A demo
/// in a throwaway folder saves nothing. What the person should know goes to `notices`;
/// `writable` are the folders commands may write, where undo's `git` is never taken from.
fn open_session(
    cli: &Cli,
    workspace: &Workspace,
    writable: &[std::path::PathBuf],
    throwaway: bool,
    notices: &mut Vec<String>,
) -> color_eyre::Result<Sessions> {
    let resuming = cli.continue_session || cli.resume.is_some();
    if throwaway {
        return Ok(Sessions::Off);
    }
    let store = match SessionStore::from_env(workspace.root()) {
        Ok(store) => store.commands_write(writable),
        Err(err) if !resuming => {
            notices.push(format!("is not saving this session: {err}"));
            return Ok(Sessions::Off);
        }
        Err(err) => return Err(UsageError(err.to_string()).into()),
    };
    sessions::adopt_legacy_logs(&store, notices);
    let opened = if let Some(id) = &cli.resume {
        store.open(id)
    } else if cli.continue_session {
        store.open_newest()
    } else {
        return Ok(Sessions::New(store));
    };
    match opened {
        Ok((log, restored)) => {
            for warning in &restored.warnings {
                eprintln!("keel: {}", visible(warning));
            }
            Ok(Sessions::Resume(store, log, restored))
        }
        // The TUI offers what `-p` can only suggest: a session of its own.
        Err(err @ SessionError::Locked { .. }) if cli.print.is_none() => {
            notices.push(format!(
                "started a new session: {err}, and a session is written by one process at a time"
            ));
            Ok(Sessions::New(store))
        }
        Err(err @ SessionError::Locked { .. }) => Err(UsageError(format!(
            "{err}; a session is written by one process at a time. Leave out --continue or \
             --resume to start a new session, or wait for that process to end."
        ))
        .into()),
        Err(err) => Err(UsageError(err.to_string()).into()),
    }
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

/// The workspace: `--workdir`, a fresh temporary folder for the demo, or the current directory.
fn workspace(cli: &Cli) -> color_eyre::Result<(Workspace, Option<tempfile::TempDir>)> {
    let (root, temp) = match (&cli.workdir, cli.demo) {
        (Some(dir), _) => (dir.clone(), None),
        (None, true) => {
            let dir = tempfile::Builder::new()
                .prefix("keel-demo-")
                .tempdir()
                .wrap_err("cannot create the demo workspace")?;
            (dir.path().to_path_buf(), Some(dir))
        }
        (None, false) => {
            (std::env::current_dir().wrap_err("cannot read the current directory")?, None)
        }
    };
    let mut workspace = Workspace::new(root.clone())
        .map_err(|err| UsageError(format!("workspace {}: {err}", root.display())))?;
    if temp.is_none()
        && let Ok(store) = SessionStore::from_env(workspace.root())
    {
        // What a write or an undo killed mid-way left in the workspace goes now.
        workspace = workspace.noting_writes_in(store.pending_dir());
        keel::tools::pending::sweep(&workspace);
    }
    Ok((workspace, temp))
}

/// How long a response may make no progress: `KEEL_STALL_TIMEOUT` seconds, else the default.
fn stall_timeout() -> color_eyre::Result<Duration> {
    match std::env::var(STALL_TIMEOUT_VAR) {
        Err(_) => Ok(STALL_TIMEOUT),
        Ok(text) => match text.trim().parse::<u64>() {
            Ok(seconds) if seconds > 0 => Ok(Duration::from_secs(seconds)),
            _ => Err(UsageError(format!(
                "{STALL_TIMEOUT_VAR} must be a whole number of seconds above 0, not {:?}",
                visible(&text)
            ))
            .into()),
        },
    }
}

/// keel's own folders as the sandbox keeps them, and the session's `/tmp` (made here, removed
/// when the session ends). Without a state folder, or with the sandbox off, each command gets an
/// empty `/tmp` of its own, or the host's.
fn keel_folders(
    policy: &Policy,
    env: &dyn Fn(&str) -> Option<String>,
    notices: &mut Vec<String>,
) -> (KeelFolders, Option<SessionTmp>) {
    let mut folders = KeelFolders::from_env(env);
    let state = keel::state_home::state_dir(env);
    let Some(state) = state.filter(|_| policy.mode != Mode::Off) else { return (folders, None) };
    folders.cover = keel_folders::prepare_cover(&state).ok();
    let session_tmp = match SessionTmp::create(&state) {
        Ok(tmp) => Some(tmp),
        Err(err) => {
            notices.push(format!(
                "gives each command an empty /tmp of its own: the session's could not be made in \
                 {} ({err})",
                state.display()
            ));
            None
        }
    };
    folders.tmp = session_tmp.as_ref().map(|tmp| tmp.path().to_path_buf());
    (folders, session_tmp)
}

/// The bound on a command's processes that keel's environment sets, if it sets one.
fn max_processes() -> color_eyre::Result<Option<u64>> {
    match std::env::var(process_limit::VARIABLE) {
        Err(_) => Ok(None),
        Ok(text) => Ok(Some(process_limit::parse(&text).map_err(UsageError)?)),
    }
}

/// The configured provider, or `None` when there is no key.
fn build_provider(config: &Config) -> color_eyre::Result<Option<Provider>> {
    let (Some(kind), Some(api_key)) = (config.provider, config.api_key.clone()) else {
        return Ok(None);
    };
    let settings = settings(config.base_url.clone(), api_key, config.model.clone())?;
    // A client that cannot be built means a bad setting (a base URL that is not a URL).
    Provider::over(kind, settings).map(Some).map_err(|err| UsageError(err.to_string()).into())
}

/// The settings of a client of `model` at `base_url` with `api_key`.
fn settings(base_url: String, api_key: String, model: String) -> color_eyre::Result<HttpSettings> {
    Ok(HttpSettings {
        base_url,
        api_key,
        model,
        connect_timeout: CONNECT_TIMEOUT,
        idle_timeout: IDLE_TIMEOUT,
        stall_timeout: stall_timeout()?,
        retry: RetryPolicy::default(),
    })
}

/// Where `/model` may go besides the configured provider: the other protocol, where its key is
/// set in the environment (at its base URL variable's address, else the vendor's).
fn routes(
    config: &Config,
    env: &dyn Fn(&str) -> Option<String>,
    routes: Routes,
) -> color_eyre::Result<Routes> {
    let mut routes = routes;
    for kind in WireFormat::ALL {
        if Some(kind) == config.provider {
            continue;
        }
        let Some(api_key) = env(kind.key_variable()).filter(|key| !key.trim().is_empty()) else {
            continue;
        };
        let base_url = env(kind.base_url_variable())
            .filter(|url| !url.trim().is_empty())
            .unwrap_or_else(|| match kind {
                WireFormat::Anthropic => config::DEFAULT_ANTHROPIC_BASE_URL.to_owned(),
                WireFormat::OpenAi => config::DEFAULT_OPENAI_BASE_URL.to_owned(),
            });
        routes = routes.with(kind, settings(base_url, api_key, String::new())?);
    }
    Ok(routes)
}
