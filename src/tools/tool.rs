//! One tool, as one impl: everything keel needs to know of a tool the model can call.
//!
//! A tool says its name and the schema the model reads, checks its input, says what it does to
//! the world ([`Effect`]), names a call in one line, says what masking keeps of an old result
//! ([`Masking`]), and runs. Approval, plan mode, masking and the read-only lists ask the tool;
//! none of them matches on a name. Adding a tool is a file with its impl and one line in
//! [`super::registry`]; a tool that forgot a property does not compile, and
//! `registry::tests` checks what the compiler cannot (unique names, schemas that are objects).

use super::files::repeat::Repeated;
use super::{ToolCall, ToolContext, ToolError, ToolOutcome, Tools, files};
use crate::runtime::Workspace;
use futures_util::future::BoxFuture;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// The longest one-line summary, in characters.
const SUMMARY_MAX_CHARS: usize = 200;
/// How much of a wrong string value an argument error quotes, in characters.
const QUOTE_MAX_CHARS: usize = 40;

/// What a call does to the world: what approval modes, plan mode and undo decide on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// Reads the workspace and changes nothing (`read_file`).
    Reads,
    /// Changes the conversation's own board, nothing in the workspace (`todo`).
    Plans,
    /// Writes files, each change recorded for undo (`write_file`, `edit_file`).
    WritesFiles,
    /// Runs a command, which may change whatever its sandbox lets it (`bash`).
    RunsCommand,
    /// Reaches outside what keel can see: an MCP server's tool. `marked_read_only` when its
    /// server marks it so (`readOnlyHint`): a claim of a program keel does not control, enough
    /// for the modes that only read, never for running it unasked.
    ReachesOutside { marked_read_only: bool },
    /// Hands a step to a child agent (`task`): the conversation runs it, and each of the child's
    /// own calls takes its own road, approved and confined as the parent's would be.
    Delegates,
}

impl Effect {
    /// Whether the call may change something: the calls an approval mode decides on.
    pub fn changes_things(self) -> bool {
        matches!(self, Self::WritesFiles | Self::RunsCommand | Self::ReachesOutside { .. })
    }

    /// Whether a call has a line in the tool pane: every one but a board update, the board
    /// being pinned beside the pane.
    pub fn shown_in_tool_pane(self) -> bool {
        self != Self::Plans
    }

    /// Whether the call may run where nothing may change (plan mode, `--approval read-only`),
    /// as far as the tool's effect tells: commands are judged by where they run.
    pub fn only_reads(self) -> bool {
        matches!(self, Self::Reads | Self::Plans | Self::ReachesOutside { marked_read_only: true })
    }

    /// Whether every change the call makes is in the file records it reports (undo needs no
    /// snapshot of the workspace around it).
    pub fn records_its_changes(self) -> bool {
        self == Self::WritesFiles
    }
}

/// What masking makes of an old result (`agent::compaction::mask`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Masking {
    /// A stub naming the command and how it ended: `[bash `pytest` → exit 1, 14.2 KB; elided —
    /// run it again if needed]`.
    Command,
    /// A stub naming what was read: `… read it again if needed`.
    Read,
    /// A stub naming the search and what it found: `[grep `needle src` → 40 matches in 1 file,
    /// 1.2 KB; elided — search again if needed]`.
    Search,
    /// A stub naming the call: `… call it again if needed`.
    Call,
    /// A board answer: one line once a later update superseded it; the current board stays.
    Board,
}

/// A tool the model can call.
pub trait Tool: Send + Sync {
    /// The name the model calls it by.
    fn name(&self) -> &str;
    /// What the model reads of it, besides the schema. Sent with every request: short.
    fn description(&self) -> &str;
    /// The JSON schema of its input.
    fn schema(&self) -> Value;
    /// Checks the input before anything else happens to the call; the error says what is wrong.
    fn check_input(&self, input: &Value) -> Result<(), ToolError>;
    /// What a call does to the world.
    fn effect(&self) -> Effect;
    /// One line naming what a call does: the command, the path, the board update.
    fn summary(&self, input: &Value) -> String;
    /// What masking keeps of an old result.
    fn masking(&self) -> Masking;
    /// Runs a call to its end. Never fails: whatever went wrong is an error outcome.
    fn run<'a>(
        &'a self,
        call: &'a ToolCall,
        on: &'a Tools,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, ToolOutcome>;

    /// What a call does, whole, for the person to approve: by default its summary.
    fn detail(&self, call: &ToolCall, _on: &Tools) -> String {
        self.summary(&call.input)
    }

    /// Whether a call would change nothing at all, so that there is nothing to approve (an edit
    /// whose `old_text` and `new_text` are the same).
    fn changes_nothing(&self, _input: &Value) -> bool {
        false
    }

    /// The command line a call runs (a tool that [`Effect::RunsCommand`]).
    fn command<'a>(&self, _input: &'a Value) -> Option<&'a str> {
        None
    }

    /// The change a call would make to a file, worked out without making it, and how a repeat
    /// of it is recognised (a tool that [`Effect::WritesFiles`]).
    fn planned_change(
        &self,
        _input: &Value,
        _workspace: &Workspace,
    ) -> Option<(files::PlannedChange, Repeated)> {
        None
    }

    /// How a repeat of a call that changed a file is recognised, from its input alone.
    fn repeat_of(&self, _input: &Value) -> Option<Repeated> {
        None
    }
}

/// The first line of `text`, cut at [`SUMMARY_MAX_CHARS`], marked with ` …` when cut.
pub fn first_line(text: &str) -> String {
    let mut lines = text.trim().lines();
    let first = lines.next().unwrap_or_default();
    let mut summary: String = first.chars().take(SUMMARY_MAX_CHARS).collect();
    if summary.len() < first.len() || lines.next().is_some() {
        summary.push_str(" …");
    }
    summary
}

/// The one-line summary of a call named by its argument `field` (a command, a path): its first
/// line, or the tool's name when the call has none.
pub fn field_summary(tool: &dyn Tool, input: &Value, field: &str) -> String {
    text_field(input, field).map_or_else(|| tool.name().to_owned(), first_line)
}

/// What a call named by its argument `field` does, whole: that argument exactly as the model
/// sent it, or the summary when the call has none.
pub fn field_detail(tool: &dyn Tool, input: &Value, field: &str) -> String {
    text_field(input, field).map_or_else(|| tool.summary(input), str::to_owned)
}

/// The string argument `field` of `input`, if there is one.
pub fn text_field<'a>(input: &'a Value, field: &str) -> Option<&'a str> {
    input.get(field)?.as_str()
}

/// Checks `input` against `tool`'s schema (for a message naming the argument), then decodes it.
pub fn decode<T: DeserializeOwned>(tool: &dyn Tool, input: &Value) -> Result<T, ToolError> {
    let name = tool.name();
    check_shape(name, &tool.schema(), input).map_err(ToolError::InvalidArguments)?;
    T::deserialize(input)
        .map_err(|err| ToolError::InvalidArguments(format!("`{name}`: invalid arguments: {err}.")))
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
