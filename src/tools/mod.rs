//! The tools the model can call, confined to the workspace.
//!
//! Each tool is one impl of [`tool::Tool`], registered in [`registry`]; [`Tools`] is what they
//! work on — the workspace, the sandbox commands run in, the MCP servers. Whatever the model
//! sends — an unknown name, arguments of the wrong shape, a path outside the workspace — ends in
//! a [`ToolOutcome`] marked as an error that says what was wrong; running a tool never fails the
//! agent loop.

pub mod bash;
pub mod call;
pub mod conversation;
pub mod files;
pub mod mcp;
pub mod names;
pub mod output;
pub mod preview;
pub mod registry;
pub mod search;
pub mod task;
pub mod todo;
pub mod tool;

use crate::runtime::change::FileChange;
use crate::runtime::path_error::PathError;
use crate::runtime::sandbox::{self, Sandbox};
use crate::runtime::{Workspace, gate};
use crate::tools::mcp::Hub;
use std::borrow::Cow;
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

pub use call::ToolCall;
pub use registry::ToolSet;
pub use tool::{Effect, Masking, Tool};

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
    /// What keel learned of how a command ran, besides its output.
    pub command: CommandRun,
    /// The file (as shown) a write or an edit found already as the call would leave it: the
    /// call repeated a step, and changed nothing.
    pub already_done: Option<String>,
    /// What a search found, in a few words (`12 matches in 3 files`), shown beside its call.
    pub tally: Option<String>,
    /// The call was cut short by a stop of its own (a child agent the person stopped through
    /// its approval): shown as interrupted, not failed.
    pub cut_short: bool,
}

/// How a command ran, as the agent needs to know it (all zero for other tools).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CommandRun {
    /// How long its shell, ready to run, was held at its [`gate`]: keel's time, not the
    /// command's.
    pub held: std::time::Duration,
    /// Its sandbox could not be set up, so nothing of it ran.
    pub sandbox_down: bool,
    /// Processes it started were still running when it was answered.
    pub left_running: bool,
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

/// What a running tool may use besides its arguments.
#[derive(Clone)]
pub struct ToolContext<'a> {
    /// Fires when the person interrupts the turn: stop and kill what was started.
    pub cancel: CancellationToken,
    /// Live output as it is produced, for the tool pane (bash only).
    pub live_output: Option<UnboundedSender<String>>,
    /// What a command waits for before it runs (undo's snapshot of the workspace); `None`: it
    /// runs at once.
    pub gate: Option<gate::Gate>,
    /// The conversation the call runs in (`todo`'s board, `task`'s children); `None` outside
    /// one.
    pub conversation: Option<&'a dyn conversation::Conversation>,
}

impl ToolContext<'_> {
    /// A context outside any conversation, with nothing to wait for and no live output.
    pub fn bare(cancel: CancellationToken) -> Self {
        Self { cancel, live_output: None, gate: None, conversation: None }
    }
}

impl std::fmt::Debug for ToolContext<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolContext")
            .field("cancel", &self.cancel)
            .field("gate", &self.gate)
            .field("conversation", &self.conversation.is_some())
            .finish_non_exhaustive()
    }
}

/// Why a tool call could not do what it was asked; the text is written for the model to act on.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// A path the call named could not be used.
    #[error(transparent)]
    Path(#[from] PathError),
    #[error(
        "`{path}` looks like a binary file (it contains NUL bytes); read_file only reads text."
    )]
    Binary { path: String },
    #[error("`{path}` is not UTF-8 text, so edit_file cannot change it; use write_file or bash.")]
    NotUtf8 { path: String },
    #[error(
        "`{path}` is {size} bytes, more than the {limit} bytes this tool changes; use bash instead."
    )]
    TooLarge { path: String, size: u64, limit: u64 },
    #[error(
        "Line {offset} of `{path}` lies beyond its first {window} bytes, which is as far as \
         read_file reads (they hold {lines} whole lines); read it with bash, e.g. `{command}`."
    )]
    BeyondReadWindow { path: String, offset: u64, lines: u64, window: u64, command: String },
    #[error("offset {offset} is past the end of `{path}`, which has {lines} lines.")]
    OffsetPastEnd { path: String, offset: u64, lines: u64 },
    #[error("old_text is empty; give the exact text to replace.")]
    EmptyOldText,
    #[error(
        "old_text was not found in `{path}`; read the file again and copy the text exactly, with \
         its whitespace and indentation."
    )]
    TextNotFound { path: String },
    #[error(
        "old_text occurs {count} times in `{path}`; include more surrounding lines so that it \
         matches exactly once."
    )]
    TextNotUnique { path: String, count: usize },
    #[error("{0}")]
    InvalidArguments(String),
    #[error("Unknown tool `{name}`. Available tools: {available}.")]
    UnknownTool { name: String, available: String },
}

/// What the tools work on: the workspace, the sandbox its commands run in, and the MCP servers.
#[derive(Debug, Clone)]
pub struct Tools {
    workspace: Workspace,
    sandbox: sandbox::Probing,
    mcp: Hub,
}

impl Tools {
    /// The tools of `workspace`, running commands unconfined until [`Tools::with_sandbox`] says
    /// otherwise (keel's front ends always do).
    pub fn new(workspace: Workspace) -> Self {
        Self { workspace, sandbox: sandbox::Probing::known(Sandbox::off()), mcp: Hub::default() }
    }

    /// The same tools, running commands in `sandbox`.
    pub fn with_sandbox(self, sandbox: Sandbox) -> Self {
        Self { sandbox: sandbox::Probing::known(sandbox), ..self }
    }

    /// The same tools, running commands in the sandbox `probing` finds.
    pub fn with_probing_sandbox(self, probing: sandbox::Probing) -> Self {
        Self { sandbox: probing, ..self }
    }

    /// The same tools, with the tools of `hub`'s servers besides.
    pub fn with_mcp(self, hub: Hub) -> Self {
        Self { mcp: hub, ..self }
    }

    /// The MCP servers.
    pub fn mcp(&self) -> &Hub {
        &self.mcp
    }

    pub fn workspace(&self) -> &Workspace {
        &self.workspace
    }

    /// The same tools, with commands given at most `mode`'s freedom (plan mode: read-only).
    pub fn confined_to(&self, mode: sandbox::Mode) -> Self {
        Self { sandbox: sandbox::Probing::known(self.sandbox().at_most(mode)), ..self.clone() }
    }

    /// The sandbox commands run in, once its probe has answered (waited for here).
    pub fn sandbox(&self) -> &Sandbox {
        self.sandbox.get()
    }

    /// The sandbox commands run in, its probe perhaps still running.
    pub fn probing_sandbox(&self) -> &sandbox::Probing {
        &self.sandbox
    }

    /// Runs one call of the tool named `name` outside any conversation (a board update has no
    /// board to change here): what the tests and benches drive. A name no tool has is answered
    /// as the model would be.
    pub async fn run(
        &self,
        name: &str,
        input: &serde_json::Value,
        ctx: &ToolContext<'_>,
    ) -> ToolOutcome {
        let call = ToolCall { id: String::new(), name: name.to_owned(), input: input.clone() };
        match registry::ToolSet::new(false, self.mcp.clone()).resolve(&call) {
            Ok(tool) => self.run_tool(&*tool, &call, ctx).await,
            Err(unknown) => ToolOutcome::error(unknown.to_string()),
        }
    }

    /// Runs `call` of `tool` here to its end. Never fails: whatever went wrong comes back as an
    /// error outcome. keel's own tags in what the model reads of it are defused
    /// (`crate::tags`): a command's output, a file or a server's answer cannot pass for keel.
    pub async fn run_tool(
        &self,
        tool: &dyn Tool,
        call: &ToolCall,
        ctx: &ToolContext<'_>,
    ) -> ToolOutcome {
        let mut outcome = tool.run(call, self, ctx).await;
        if let Cow::Owned(defused) = crate::tags::defuse(&outcome.for_model) {
            outcome.for_model = defused;
        }
        outcome
    }

    /// Runs file work on `args` (decoded, or the error that says why not) off the async threads.
    pub async fn file_job<A, F>(&self, args: Result<A, ToolError>, job: F) -> ToolOutcome
    where
        A: Send + 'static,
        F: FnOnce(&Workspace, A) -> Result<ToolOutcome, ToolError> + Send + 'static,
    {
        match args {
            Ok(args) => self.blocking(move |workspace| job(workspace, args)).await,
            Err(err) => ToolOutcome::error(err.to_string()),
        }
    }

    /// File work runs off the async threads: a large read must not stall the UI or the stream.
    async fn blocking<F>(&self, job: F) -> ToolOutcome
    where
        F: FnOnce(&Workspace) -> Result<ToolOutcome, ToolError> + Send + 'static,
    {
        let workspace = self.workspace.clone();
        match tokio::task::spawn_blocking(move || job(&workspace)).await {
            Ok(Ok(outcome)) => outcome,
            Ok(Err(err)) => ToolOutcome::error(err.to_string()),
            Err(err) => ToolOutcome::error(format!("The tool stopped unexpectedly: {err}")),
        }
    }
}
