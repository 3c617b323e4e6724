//! The tools the model can call, confined to the workspace.
//!
//! [`Tools`] holds the registry: the JSON schemas the model reads ([`Tools::specs`]) and the
//! dispatcher that runs a call ([`Tools::run`]). Whatever the model sends — an unknown name,
//! arguments of the wrong shape, a path outside the workspace — ends in a [`ToolOutcome`] marked
//! as an error that says what was wrong; running a tool never fails the agent loop.
//! The `todo` tool lives with the board (`crate::todo`), since it changes agent state.

pub mod bash;
pub mod files;
pub mod output;
pub mod preview;
pub mod workspace;

use crate::llm::ToolSpec;
use serde_json::Value;
use std::path::PathBuf;
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

pub use workspace::Workspace;

/// What a finished tool call produced.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolOutcome {
    /// What the model reads: capped (see `output::MODEL_OUTPUT_LIMIT`).
    pub for_model: String,
    /// What the person sees: the full output, capped only to keep memory flat.
    pub for_display: String,
    pub is_error: bool,
    /// A command's exit code, when there was one.
    pub exit_code: Option<i32>,
    /// Files this call changed, with what they held before, for undo.
    pub changes: Vec<FileChange>,
}

impl ToolOutcome {
    /// A failed call whose message is the same for the model and the person.
    pub fn error(message: impl Into<String>) -> Self {
        let message = message.into();
        Self { for_model: message.clone(), for_display: message, is_error: true, ..Self::default() }
    }

    /// A successful call whose text is the same for the model and the person.
    pub fn ok(text: impl Into<String>) -> Self {
        let text = text.into();
        Self { for_model: text.clone(), for_display: text, ..Self::default() }
    }
}

/// One file a tool call wrote, and what it held before (`None`: it did not exist).
#[derive(Debug, Clone, PartialEq)]
pub struct FileChange {
    pub path: PathBuf,
    pub before: Option<Vec<u8>>,
    pub after: Vec<u8>,
}

/// What a running tool may use besides its arguments.
#[derive(Debug, Clone)]
pub struct ToolContext {
    /// Fires when the person interrupts the turn: stop and kill what was started.
    pub cancel: CancellationToken,
    /// Live output as it is produced, for the tool pane (bash only).
    pub live_output: Option<UnboundedSender<String>>,
}

/// The registry of workspace tools (stub).
#[derive(Debug, Clone)]
pub struct Tools {
    workspace: Workspace,
}

impl Tools {
    pub fn new(workspace: Workspace) -> Self {
        Self { workspace }
    }

    pub fn workspace(&self) -> &Workspace {
        &self.workspace
    }

    pub fn specs(&self) -> Vec<ToolSpec> {
        Vec::new()
    }

    pub async fn run(&self, name: &str, _input: &Value, _ctx: &ToolContext) -> ToolOutcome {
        ToolOutcome::error(format!("unknown tool '{name}'"))
    }

    pub fn summary(name: &str, _input: &Value) -> String {
        name.to_owned()
    }
}
