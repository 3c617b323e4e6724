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
//! stricter — even than `--approval` — but never looser than the person's own setting. keel takes
//! the rest of the file as usual, and says once what it took and what it left out. Which setting
//! is which is the table's (`settings.rs`: `workspace: Never`, `Tightens`); this module says it.

use super::PROJECT_CONFIG;
use crate::agent::ApprovalMode;
use crate::runtime::sandbox::Mode as SandboxMode;
use std::fmt;

/// Something the project's file set that keel did not take.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ignored {
    /// A key the project's file may not set at all, or not to that value.
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

/// The mode as `--approval` and the config files spell it.
pub fn approval_name(mode: ApprovalMode) -> &'static str {
    mode.name()
}
