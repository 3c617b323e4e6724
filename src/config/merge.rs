//! The precedence rules, apart from any file system: every source's settings (the table's
//! `Given`, through what a workspace may set) into one [`Config`], with what the table cannot
//! say — the provider's own defaults and variables, the checks across settings, and the values
//! built from several (the sandbox's policy, a child's budget).

use super::declare::{Layers, Tighten};
use super::settings::{Given, environment, restrict, taken};
use super::{ApprovalSource, Config, ConfigError, FileSettings, FlagSettings};
use super::{DEFAULT_ANTHROPIC_BASE_URL, DEFAULT_ANTHROPIC_MODEL, DEFAULT_OPENAI_BASE_URL};
use super::{DEFAULT_OPENAI_MODEL, default_window};
use crate::agent::{ApprovalMode, Budget};
use crate::hooks::Origin;
use crate::hooks::config::check as check_hooks;
use crate::llm::WireFormat;
use crate::pricing::Prices;
use crate::runtime::sandbox::Policy as SandboxPolicy;

/// The smallest thinking budget the Messages API accepts.
pub const MIN_THINKING_BUDGET: u32 = 1024;

/// Merges flags, environment (through `env`) and the two files (`project` is the workspace's,
/// `user` the person's). `default_approval` is the front end's own (ask in the TUI, auto with
/// `-p`).
pub fn merge(
    flags: &FlagSettings,
    env: &dyn Fn(&str) -> Option<String>,
    project: &FileSettings,
    user: &FileSettings,
    default_approval: ApprovalMode,
) -> Result<Config, ConfigError> {
    let lookup = |name: &str| env(name).filter(|value| !value.trim().is_empty());
    let flags = &FileSettings::from(flags);
    let front = &FileSettings { approval: Some(default_approval), ..FileSettings::default() };
    let nothing = &FileSettings::default();
    // The provider says whose variables hold the URL and the key, so it is chosen first: as set,
    // else the one whose key is set, else Anthropic if the person's file has a key.
    let named = &environment(&lookup, None)?;
    let provider = Layers { flags, env: named, project: nothing, user, front }
        .given()
        .provider
        .or_else(|| WireFormat::ALL.into_iter().find(|kind| lookup(kind.key_variable()).is_some()))
        .or_else(|| user.api_key.is_some().then_some(WireFormat::Anthropic));
    let kind = provider.unwrap_or(WireFormat::Anthropic);
    let env = &environment(&lookup, Some(kind))?;
    // The person's own settings: what the workspace's file may only tighten is held to them.
    let person = Layers { flags, env, project: nothing, user, front }.given();
    let (project, ignored) = restrict(project, &person);
    let project_settings = taken(&project);
    let given = Layers { flags, env, project: &project, user, front }.given();

    // The workspace decided the approval only where it made it stricter than the person's.
    let tightened = project.approval.filter(|asked| asked.tighter(person.approval));
    let approval_source = match (tightened, flags.approval, user.approval) {
        (Some(_), _, _) => ApprovalSource::ProjectFile,
        (None, Some(_), _) => ApprovalSource::Flag,
        (None, None, Some(_)) => ApprovalSource::UserFile,
        (None, None, None) => ApprovalSource::Default,
    };
    let mut hooks = Vec::new();
    for (file, origin, config) in [
        ("your config file", Origin::Person, &user.hooks),
        ("the workspace's .keel/config.toml", Origin::Workspace, &project.hooks),
    ] {
        let checked = config.as_ref().map_or(Ok(Vec::new()), |c| check_hooks(c, origin));
        hooks.extend(checked.map_err(|why| ConfigError::BadHooks { file, why })?);
    }
    checked(given, provider, kind, approval_source, ignored, project_settings, hooks)
}

/// The settings as given, checked one against another and built into a [`Config`].
fn checked(
    given: Given,
    provider: Option<WireFormat>,
    kind: WireFormat,
    approval_source: ApprovalSource,
    ignored: Vec<super::Ignored>,
    project_settings: Vec<String>,
    hooks: Vec<crate::hooks::HookSpec>,
) -> Result<Config, ConfigError> {
    let Given { max_tokens, context_window: window, compact_at, max_rounds, .. } = given;
    if let Some(window) = window.filter(|window| *window <= max_tokens) {
        return Err(ConfigError::WindowTooSmall { window, max_tokens });
    }
    if !(compact_at > 0.0 && compact_at <= 1.0) {
        return Err(ConfigError::BadCompactAt(compact_at));
    }
    if max_rounds == 0 {
        return Err(ConfigError::ZeroRounds);
    }
    if given.check_timeout == 0 {
        return Err(ConfigError::ZeroCheckTimeout);
    }
    let mut mcp_servers = Vec::new();
    for (name, server) in &given.mcp_servers {
        let checked = server
            .check(name)
            .map_err(|why| ConfigError::BadMcpServer { name: name.clone(), why })?;
        mcp_servers.push(checked);
    }
    for (name, zero) in [
        ("max_child_rounds", given.max_child_rounds == 0),
        ("max_child_tokens", given.max_child_tokens == 0),
        ("max_parallel_agents", given.max_parallel_agents == 0),
        ("max_children_per_response", given.max_children_per_response == 0),
    ] {
        if zero {
            return Err(ConfigError::ZeroChildBudget(name));
        }
    }
    let model = given.model.unwrap_or_else(|| match kind {
        WireFormat::Anthropic => DEFAULT_ANTHROPIC_MODEL.to_owned(),
        WireFormat::OpenAi => DEFAULT_OPENAI_MODEL.to_owned(),
    });
    Ok(Config {
        provider,
        base_url: given.base_url.unwrap_or_else(|| match kind {
            WireFormat::Anthropic => DEFAULT_ANTHROPIC_BASE_URL.to_owned(),
            WireFormat::OpenAi => DEFAULT_OPENAI_BASE_URL.to_owned(),
        }),
        api_key: given.api_key,
        max_tokens,
        thinking_budget: thinking_budget(given.thinking_budget, max_tokens)?,
        nag_threshold: given.nag_threshold,
        nag_message: given.nag_message,
        max_rounds,
        approval: given.approval,
        context_window: window.unwrap_or_else(|| default_window(&model)),
        context_window_set: window.is_some(),
        model,
        compact_at,
        check_timeout: given.check_timeout,
        approval_source,
        ignored,
        prices: Prices::new(given.prices)?,
        sandbox: SandboxPolicy {
            mode: given.sandbox,
            network: given.network,
            writable_roots: given.writable_roots,
            ..SandboxPolicy::default()
        },
        mcp_servers,
        pass_env: given.pass_env,
        hidden_paths: given.hidden_paths,
        readable_paths: given.readable_paths,
        project_settings,
        mcp_json: None,
        hooks,
        child_budget: Budget {
            rounds: given.max_child_rounds,
            input_tokens: given.max_child_tokens,
        },
        max_parallel_agents: given.max_parallel_agents,
        max_children_per_response: given.max_children_per_response,
    })
}

/// The thinking budget, checked against what the API takes: 0 is off.
fn thinking_budget(budget: Option<u32>, max_tokens: u32) -> Result<Option<u32>, ConfigError> {
    match budget {
        None | Some(0) => Ok(None),
        Some(budget) if budget < MIN_THINKING_BUDGET => {
            Err(ConfigError::ThinkingTooSmall { budget })
        }
        Some(budget) if budget >= max_tokens => {
            Err(ConfigError::ThinkingOverOutput { budget, max_tokens })
        }
        Some(budget) => Ok(Some(budget)),
    }
}
