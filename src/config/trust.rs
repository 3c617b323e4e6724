//! What a workspace's own `.keel/config.toml` may not decide.
//!
//! That file comes with the workspace: a cloned repository ships it, and the model can write it.
//! So it may not say where requests go, with which key or in which protocol (`provider`,
//! `base_url`, `api_key`: a repository could send the person's key to its own server), nor speak
//! in keel's own voice (`nag_message`: it reaches the model as keel's `<reminder>`, where a
//! repository could claim "the person has switched approval to auto"), nor start MCP servers,
//! nor let secrets through to commands (`pass_env`), nor say what is hidden from the model
//! (`hidden_paths`, `readable_paths`: a repository could let `~/.ssh` through), nor price the
//! model (`prices`: a project could show its costly model as free), and it may make approvals
//! stricter — even than `--approval` — but never looser than the person's own setting. keel takes the rest of the
//! file as usual, and says once what it took ([`taken`]) and what it left out.

use super::{FileSettings, PROJECT_CONFIG};
use crate::agent::ApprovalMode;
use crate::runtime::sandbox::Mode as SandboxMode;
use std::fmt;

/// The keys a project's file may not set at all.
pub const PROJECT_MAY_NOT_SET: [&str; 9] = [
    "provider",
    "base_url",
    "api_key",
    "nag_message",
    "mcp_servers",
    "pass_env",
    "prices",
    "hidden_paths",
    "readable_paths",
];

/// Something the project's file set that keel did not take.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ignored {
    /// One of [`PROJECT_MAY_NOT_SET`].
    Key(&'static str),
    /// An approval mode looser than the person's own, which stays.
    LooserApproval { asked: ApprovalMode, kept: ApprovalMode },
    /// A sandbox mode looser than the person's own, which stays.
    LooserSandbox { asked: SandboxMode, kept: SandboxMode },
}

impl fmt::Display for Ignored {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Key(key) => write!(f, "`{key}`"),
            Self::LooserApproval { asked, kept } => write!(
                f,
                "`approval = \"{}\"` (looser than your `{}`)",
                approval_name(*asked),
                approval_name(*kept)
            ),
            Self::LooserSandbox { asked, kept } => {
                write!(f, "`sandbox = \"{}\"` (looser than your `{}`)", asked.name(), kept.name())
            }
        }
    }
}

/// The one message that says what was ignored, or `None` when nothing was.
pub fn notice(ignored: &[Ignored]) -> Option<String> {
    if ignored.is_empty() {
        return None;
    }
    let list: Vec<String> = ignored.iter().map(ToString::to_string).collect();
    Some(format!(
        "ignored {} in the workspace's {PROJECT_CONFIG}: a project's file may not choose the \
         provider, its URL or key, nor keel's reminder text, nor MCP servers, nor secrets for \
         commands, nor what is hidden from them, nor prices, nor loosen approvals or the \
         sandbox. Set them in your own config file, the environment or a flag.",
        list.join(", ")
    ))
}

/// How much a mode lets run without asking: read-only < ask < auto.
pub fn looseness(mode: ApprovalMode) -> u8 {
    mode.looseness()
}

/// The mode as `--approval` and the config files spell it.
pub fn approval_name(mode: ApprovalMode) -> &'static str {
    mode.name()
}

/// The project's settings less what it may not set, given the person's own approval mode (the
/// flag, else the user's file, else the front end's default); and what was left out. An approval
/// mode is kept only when it is stricter than the person's.
pub fn restrict(project: &FileSettings, person: ApprovalMode) -> (FileSettings, Vec<Ignored>) {
    let mut allowed = project.clone();
    let mut ignored = Vec::new();
    let mut drop_key = |present: bool, key: &'static str| {
        if present {
            ignored.push(Ignored::Key(key));
        }
    };
    drop_key(allowed.provider.take().is_some(), "provider");
    drop_key(allowed.base_url.take().is_some(), "base_url");
    drop_key(allowed.api_key.take().is_some(), "api_key");
    drop_key(allowed.nag_message.take().is_some(), "nag_message");
    // An MCP server is a program keel would start, or a server it would send to.
    drop_key(allowed.mcp_servers.take().is_some(), "mcp_servers");
    // Secrets a command would see, and the costs the person is shown.
    drop_key(allowed.pass_env.take().is_some(), "pass_env");
    drop_key(allowed.prices.take().is_some(), "prices");
    // What the model may read: only the person says.
    drop_key(allowed.hidden_paths.take().is_some(), "hidden_paths");
    drop_key(allowed.readable_paths.take().is_some(), "readable_paths");
    // Kept only where it tightens: then it wins over the person's mode, even over the flag.
    if let Some(asked) = allowed.approval.filter(|asked| looseness(*asked) >= looseness(person)) {
        allowed.approval = None;
        if asked != person {
            ignored.push(Ignored::LooserApproval { asked, kept: person });
        }
    }
    (allowed, ignored)
}

/// The longest value [`taken`] quotes, in characters.
const VALUE_MAX_CHARS: usize = 40;

/// What the project's file (as [`restrict`] left it) set that keel took, each as `key = value`,
/// in the file's field order; what `ignored` names is left out.
pub fn taken(project: &FileSettings, ignored: &[Ignored]) -> Vec<String> {
    let dropped = |key: &str| {
        ignored.iter().any(|ignored| match ignored {
            Ignored::Key(ignored) => *ignored == key,
            Ignored::LooserApproval { .. } => key == "approval",
            Ignored::LooserSandbox { .. } => key == "sandbox",
        })
    };
    let text = |value: &str| {
        let mut shown: String = value.chars().take(VALUE_MAX_CHARS).collect();
        if shown.len() < value.len() {
            shown.push('…');
        }
        format!("{:?}", crate::visible::visible(&shown))
    };
    // Every field, named: a new setting must say here how it is shown.
    let FileSettings {
        provider,
        model,
        base_url,
        api_key,
        max_tokens,
        thinking_budget,
        nag_threshold,
        nag_message,
        max_rounds,
        approval,
        context_window,
        compact_at,
        prices,
        sandbox,
        network,
        writable_roots,
        mcp_servers,
        pass_env,
        hidden_paths,
        readable_paths,
        max_child_rounds,
        max_child_tokens,
        max_parallel_agents,
        max_children_per_response,
        // Told apart: they run only once the person trusts them (`hooks::Hooks::untrusted_notice`).
        hooks: _,
    } = project;
    let named = |key: &'static str, set: bool| set.then(|| key.to_owned());
    let settings: [(&str, Option<String>); 24] = [
        ("provider", named("provider", provider.is_some())),
        ("model", model.as_deref().map(text)),
        ("base_url", named("base_url", base_url.is_some())),
        ("api_key", named("api_key", api_key.is_some())),
        ("max_tokens", max_tokens.map(|n| n.to_string())),
        ("thinking_budget", thinking_budget.map(|n| n.to_string())),
        ("nag_threshold", nag_threshold.map(|n| n.to_string())),
        ("nag_message", named("nag_message", nag_message.is_some())),
        ("max_rounds", max_rounds.map(|n| n.to_string())),
        ("approval", approval.map(|mode| format!("{:?}", approval_name(mode)))),
        ("context_window", context_window.map(|n| n.to_string())),
        ("compact_at", compact_at.map(|share| share.to_string())),
        ("prices", named("prices", prices.is_some())),
        ("sandbox", sandbox.map(|mode| format!("{:?}", mode.name()))),
        ("network", network.map(|on| on.to_string())),
        ("writable_roots", named("writable_roots", writable_roots.is_some())),
        ("mcp_servers", named("mcp_servers", mcp_servers.is_some())),
        ("pass_env", named("pass_env", pass_env.is_some())),
        ("hidden_paths", named("hidden_paths", hidden_paths.is_some())),
        ("readable_paths", named("readable_paths", readable_paths.is_some())),
        ("max_child_rounds", max_child_rounds.map(|n| n.to_string())),
        ("max_child_tokens", max_child_tokens.map(|n| n.to_string())),
        ("max_parallel_agents", max_parallel_agents.map(|n| n.to_string())),
        ("max_children_per_response", max_children_per_response.map(|n| n.to_string())),
    ];
    settings
        .into_iter()
        .filter(|(key, _)| !dropped(key))
        .filter_map(|(key, value)| {
            let value = value?;
            Some(if value == key { value } else { format!("{key} = {value}") })
        })
        .collect()
}
