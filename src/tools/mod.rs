//! The tools the model can call, confined to the workspace.
//!
//! [`Tools`] holds the registry: the JSON schemas the model reads ([`Tools::specs`]) and the
//! dispatcher that runs a call ([`Tools::run`]). Whatever the model sends — an unknown name,
//! arguments of the wrong shape, a path outside the workspace — ends in a [`ToolOutcome`] marked
//! as an error that says what was wrong; running a tool never fails the agent loop.
//! The `todo` tool lives with the board (`crate::board`), since it changes agent state.

pub mod bash;
pub(crate) mod beneath;
pub mod call;
pub mod files;
pub mod gate;
pub mod guard;
pub mod mcp;
pub mod output;
pub mod pending;
pub mod preview;
pub mod sandbox;
pub mod search;
pub mod simple_command;
pub mod size_limit;
pub mod supervisor;
pub mod undo;
pub mod workspace;

use crate::llm::ToolSpec;
use crate::tools::mcp::Hub;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::path::PathBuf;
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

pub use call::{ToolCall, ToolName};
pub use sandbox::Sandbox;
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
    /// What keel learned of how a command ran, besides its output.
    pub command: CommandRun,
    /// The file (as shown) a write or an edit found already as the call would leave it: the
    /// call repeated a step, and changed nothing.
    pub already_done: Option<String>,
    /// What a search found, in a few words (`12 matches in 3 files`), shown beside its call.
    pub tally: Option<String>,
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

/// One file a tool call wrote, and what it held before (`None`: it did not exist).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FileChange {
    pub path: PathBuf,
    pub before: Option<Vec<u8>>,
    pub after: Vec<u8>,
    /// How many folders above the file the write created (it made them to put the file in).
    pub created_folders: usize,
}

/// What a running tool may use besides its arguments.
#[derive(Debug, Clone)]
pub struct ToolContext {
    /// Fires when the person interrupts the turn: stop and kill what was started.
    pub cancel: CancellationToken,
    /// Live output as it is produced, for the tool pane (bash only).
    pub live_output: Option<UnboundedSender<String>>,
    /// What a command waits for before it runs (undo's snapshot of the workspace); `None`: it
    /// runs at once.
    pub gate: Option<gate::Gate>,
}

/// Why a tool call could not do what it was asked; the text is written for the model to act on.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    #[error(
        "Path `{path}` is outside the workspace {}; tools may only use files inside it.",
        .root.display()
    )]
    OutsideWorkspace { path: String, root: PathBuf },
    #[error(
        "Path `{path}` leads through a symlink to {}, which is outside the workspace {}.",
        .target.display(),
        .root.display()
    )]
    SymlinkEscape { path: String, target: PathBuf, root: PathBuf },
    #[error("Invalid path `{path}`: {reason}.")]
    InvalidPath { path: String, reason: String },
    #[error("{path}: {source}")]
    Io { path: String, source: std::io::Error },
    #[error("`{path}` does not exist (write_file creates new files).")]
    NotFound { path: String },
    #[error("`{path}` is a directory, not a file; list it with bash (`ls`).")]
    IsDirectory { path: String },
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
        "`{path}` is {kind}, not a regular file; the file tools only read and write regular files \
         (reading a FIFO or a device could wait forever)."
    )]
    NotRegularFile { path: String, kind: &'static str },
    #[error("`{path}` is {place}, which keel never changes: {reason}.")]
    ProtectedPath { path: String, place: String, reason: &'static str },
    #[error("Could not write `{path}`: {step}{source}; {left}.")]
    WriteFailed { path: String, step: &'static str, source: std::io::Error, left: String },
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

/// How much of a wrong string value an argument error quotes, in characters.
const QUOTE_MAX_CHARS: usize = 40;

/// A workspace tool call with its arguments decoded.
#[derive(Debug, Clone, PartialEq)]
pub enum Invocation {
    Bash(bash::BashArgs),
    ReadFile(files::ReadArgs),
    WriteFile(files::WriteArgs),
    EditFile(files::EditArgs),
    Grep(search::GrepArgs),
    Glob(search::GlobArgs),
}

/// The registry of workspace tools, and the MCP servers' tools when there are servers.
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

    /// The tools as the model is told about them.
    pub fn specs(&self) -> Vec<ToolSpec> {
        let spec = |name: ToolName, description: &str, input_schema| ToolSpec {
            name: name.as_str().to_owned(),
            description: description.to_owned(),
            input_schema,
        };
        vec![
            spec(ToolName::Bash, bash::DESCRIPTION, bash::schema()),
            spec(ToolName::ReadFile, files::READ_DESCRIPTION, files::read_schema()),
            spec(ToolName::WriteFile, files::WRITE_DESCRIPTION, files::write_schema()),
            spec(ToolName::EditFile, files::EDIT_DESCRIPTION, files::edit_schema()),
            spec(ToolName::Grep, search::GREP_DESCRIPTION, search::grep_schema()),
            spec(ToolName::Glob, search::GLOB_DESCRIPTION, search::glob_schema()),
        ]
        .into_iter()
        .chain(self.mcp.specs())
        .collect()
    }

    /// Decodes a call; the error says which argument is missing or of the wrong type.
    pub fn parse(name: &ToolName, input: &Value) -> Result<Invocation, ToolError> {
        let tool = name.as_str();
        match name {
            ToolName::Bash => decode(tool, &bash::schema(), input).map(Invocation::Bash),
            ToolName::ReadFile => {
                decode(tool, &files::read_schema(), input).map(Invocation::ReadFile)
            }
            ToolName::WriteFile => {
                decode(tool, &files::write_schema(), input).map(Invocation::WriteFile)
            }
            ToolName::EditFile => {
                decode(tool, &files::edit_schema(), input).map(Invocation::EditFile)
            }
            ToolName::Grep => decode(tool, &search::grep_schema(), input).map(Invocation::Grep),
            ToolName::Glob => decode(tool, &search::glob_schema(), input).map(Invocation::Glob),
            ToolName::Todo | ToolName::Mcp(_) | ToolName::Unknown(_) => {
                Err(ToolError::UnknownTool {
                    name: tool.to_owned(),
                    available: ToolName::WORKSPACE.map(|name| name.as_str().to_owned()).join(", "),
                })
            }
        }
    }

    /// Runs a call to the end. Never fails: whatever went wrong comes back as an error outcome.
    pub async fn run(&self, name: &ToolName, input: &Value, ctx: &ToolContext) -> ToolOutcome {
        if let ToolName::Mcp(exposed) = name {
            return self.mcp.call(exposed, input, &ctx.cancel).await;
        }
        let call = match Self::parse(name, input) {
            Ok(call) => call,
            Err(err) => return ToolOutcome::error(err.to_string()),
        };
        match call {
            Invocation::Bash(args) => {
                bash::run(self.workspace.root(), &args, self.sandbox.settled().await, ctx).await
            }
            Invocation::ReadFile(args) => {
                self.blocking(move |workspace| files::read(workspace, &args).map(ToolOutcome::ok))
                    .await
            }
            Invocation::WriteFile(args) => {
                self.blocking(move |workspace| files::plan_write(workspace, &args)?.apply()).await
            }
            Invocation::EditFile(args) => {
                self.blocking(move |workspace| files::plan_edit(workspace, &args)?.apply()).await
            }
            Invocation::Grep(args) => {
                let stop = ctx.cancel.clone();
                self.blocking(move |workspace| Ok(search::grep(workspace, &args, &stop).into()))
                    .await
            }
            Invocation::Glob(args) => {
                let stop = ctx.cancel.clone();
                self.blocking(move |workspace| Ok(search::glob(workspace, &args, &stop).into()))
                    .await
            }
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

/// Checks `input` against the tool's schema (for a message naming the argument), then decodes it.
fn decode<T: DeserializeOwned>(tool: &str, schema: &Value, input: &Value) -> Result<T, ToolError> {
    check_shape(tool, schema, input).map_err(ToolError::InvalidArguments)?;
    T::deserialize(input)
        .map_err(|err| ToolError::InvalidArguments(format!("`{tool}`: invalid arguments: {err}.")))
}

/// The first way `input` departs from `schema`: not an object, a required argument missing, or an
/// argument of the wrong type. Only the schema features the tools use are understood.
fn check_shape(tool: &str, schema: &Value, input: &Value) -> Result<(), String> {
    let Some(object) = input.as_object() else {
        return Err(format!("`{tool}` takes a JSON object of arguments, got {}.", describe(input)));
    };
    let properties = schema.get("properties").and_then(Value::as_object);
    let required = schema.get("required").and_then(Value::as_array);
    for name in required.into_iter().flatten().filter_map(Value::as_str) {
        if object.get(name).is_none_or(Value::is_null) {
            let expected = properties
                .and_then(|props| props.get(name))
                .map_or_else(String::new, |prop| format!(" ({})", expected(prop)));
            return Err(format!("`{tool}`: missing required argument `{name}`{expected}."));
        }
    }
    for (name, prop) in properties.into_iter().flatten() {
        let Some(value) = object.get(name).filter(|value| !value.is_null()) else {
            continue;
        };
        let fits = match prop.get("type").and_then(Value::as_str) {
            Some("string") => value.is_string(),
            Some("integer") => value.as_u64().is_some_and(|number| {
                number >= prop.get("minimum").and_then(Value::as_u64).unwrap_or(0)
            }),
            Some("boolean") => value.is_boolean(),
            _ => true,
        };
        if !fits {
            return Err(format!(
                "`{tool}`: argument `{name}` must be {}, got {}.",
                expected(prop),
                describe(value)
            ));
        }
    }
    Ok(())
}

/// What a schema property asks for, in words: `a string`, `a whole number ≥ 1`.
fn expected(prop: &Value) -> String {
    match prop.get("type").and_then(Value::as_str) {
        Some("string") => "a string".to_owned(),
        Some("boolean") => "true or false".to_owned(),
        Some("integer") => {
            let minimum = prop.get("minimum").and_then(Value::as_u64).unwrap_or(0);
            format!("a whole number ≥ {minimum}")
        }
        Some(other) => format!("of type {other}"),
        None => "a value".to_owned(),
    }
}

/// A JSON value in a few words, quoting at most the start of a string.
fn describe(value: &Value) -> String {
    match value {
        Value::Null => "null".to_owned(),
        Value::Bool(flag) => format!("the boolean {flag}"),
        Value::Number(number) => format!("the number {number}"),
        Value::String(text) => {
            let quoted: String = text.chars().take(QUOTE_MAX_CHARS).collect();
            let more = if quoted.len() < text.len() { "…" } else { "" };
            format!("the string {quoted:?}{more}")
        }
        Value::Array(_) => "an array".to_owned(),
        Value::Object(_) => "an object".to_owned(),
    }
}
