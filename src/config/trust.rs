//! What a workspace's own `.keel/config.toml` may not decide.
//!
//! That file comes with the workspace: a cloned repository ships it, and the model can write it.
//! So it may not say where requests go, with which key or in which protocol (`provider`,
//! `base_url`, `api_key`: a repository could send the person's key to its own server), nor speak
//! in keel's own voice (`nag_message`: it reaches the model as keel's `<reminder>`, where a
//! repository could claim "the person has switched approval to auto"), and it may
//! make approvals stricter — even than `--approval` — but never looser than the person's own
//! setting. keel takes the rest of the file as usual and names what it left out, once.

use super::{FileSettings, PROJECT_CONFIG};
use crate::agent::ApprovalMode;
use crate::tools::sandbox::Mode as SandboxMode;
use std::fmt;

/// The keys a project's file may not set at all.
pub const PROJECT_MAY_NOT_SET: [&str; 5] =
    ["provider", "base_url", "api_key", "nag_message", "mcp_servers"];

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
         provider, its URL or key, nor keel's reminder text, nor MCP servers, nor loosen approvals or the sandbox. Set them in your own config file, the \
         environment or a flag.",
        list.join(", ")
    ))
}

/// How much a mode lets run without asking: read-only < ask < auto.
pub fn looseness(mode: ApprovalMode) -> u8 {
    match mode {
        ApprovalMode::ReadOnly => 0,
        ApprovalMode::Ask => 1,
        ApprovalMode::Auto => 2,
    }
}

/// The mode as `--approval` and the config files spell it.
pub fn approval_name(mode: ApprovalMode) -> &'static str {
    match mode {
        ApprovalMode::ReadOnly => "read-only",
        ApprovalMode::Ask => "ask",
        ApprovalMode::Auto => "auto",
    }
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
    // Kept only where it tightens: then it wins over the person's mode, even over the flag.
    if let Some(asked) = allowed.approval.filter(|asked| looseness(*asked) >= looseness(person)) {
        allowed.approval = None;
        if asked != person {
            ignored.push(Ignored::LooserApproval { asked, kept: person });
        }
    }
    (allowed, ignored)
}
