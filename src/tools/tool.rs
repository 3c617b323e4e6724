//! One tool, as one impl: everything keel needs to know of a tool the model can call.
//!
//! A tool states once what it is ([`Declared`]: its names, the schema the model reads, what it
//! does to the world — [`Effect`] —, what masking keeps of an old result — [`Masking`] —, the
//! argument a call is named by) and how a call runs; checking the input, naming a call in one
//! line and whole have defaults it overrides only where it differs. Approval, plan mode,
//! masking and the read-only lists ask the tool; none of them matches on a name. Adding a tool
//! is a file with its impl, a row in [`super::names`] and one line in [`super::registry`]; a
//! tool that forgot a property does not compile, and the tests of both check what the compiler
//! cannot (unique names, one row each, schemas that are objects).

use super::files::repeat::Repeated;
use super::names::ToolNames;
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
    /// Hands a step to a child agent (`task`), a conversation of its own whose every call takes
    /// its own road, approved and confined as the parent's would be. `may_change`: the child
    /// may change the workspace (undo snapshots around it, as around a command); one that may
    /// not only explores, and runs beside the other explorers of its response.
    Delegates { may_change: bool },
}

impl Effect {
    /// Whether the call may change something: the calls an approval mode decides on.
    pub fn changes_things(self) -> bool {
        matches!(self, Self::WritesFiles | Self::RunsCommand | Self::ReachesOutside { .. })
    }

    /// Whether the call may change the workspace, so that undo's group begins before it: what
    /// approval decides on, and a child that may change things (snapshotted around, as a
    /// command is).
    pub fn changes_workspace(self) -> bool {
        self.changes_things() || self == Self::Delegates { may_change: true }
    }

    /// Whether the call updates the conversation's board (`todo`).
    pub fn updates_board(self) -> bool {
        self == Self::Plans
    }

    /// Whether the call starts a child agent (`max_children_per_response` counts it).
    pub fn starts_child(self) -> bool {
        matches!(self, Self::Delegates { .. })
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

/// What a tool states of itself once; [`Tool`]'s defaults answer from it.
#[derive(Clone, Copy)]
pub struct Declared<'a> {
    /// Its names: the model's, Claude Code's, the screen's ([`super::names`]).
    pub names: ToolNames<'a>,
    /// What the model reads of it, besides the schema. Sent with every request: short.
    pub description: &'a str,
    /// The JSON schema of its input.
    pub schema: Schema<'a>,
    /// What a call does to the world.
    pub effect: Effect,
    /// What masking keeps of an old result: by default, what its effect suggests.
    pub masking: Masking,
    /// The string argument a call is named by (a command, a path): its first line is the call's
    /// summary, the whole of it what the person approves. `None`: the tool's name, unless the
    /// tool says more itself.
    pub named_by: Option<&'static str>,
}

/// Where a tool's input schema comes from.
#[derive(Clone, Copy)]
pub enum Schema<'a> {
    /// Made by keel, when asked.
    Made(fn() -> Value),
    /// As a server listed it.
    Listed(&'a Value),
}

impl<'a> Declared<'a> {
    /// A tool called `names`, described to the model as `description`, taking what `schema`
    /// says, doing `effect`; masked as its effect suggests, each call named by the tool's name.
    pub const fn new(
        names: ToolNames<'a>,
        description: &'a str,
        schema: Schema<'a>,
        effect: Effect,
    ) -> Self {
        let masking = match effect {
            Effect::Reads => Masking::Read,
            Effect::RunsCommand => Masking::Command,
            Effect::Plans => Masking::Board,
            Effect::WritesFiles | Effect::ReachesOutside { .. } | Effect::Delegates { .. } => {
                Masking::Call
            }
        };
        Self { names, description, schema, effect, masking, named_by: None }
    }

    /// The same, each call named by its argument `field`.
    pub const fn named_by(self, field: &'static str) -> Self {
        Self { named_by: Some(field), ..self }
    }

    /// The same, masked as `masking` says.
    pub const fn masked(self, masking: Masking) -> Self {
        Self { masking, ..self }
    }
}

/// What a tool's run is: a future that ends in the call's outcome.
pub type ToolRun<'a> = BoxFuture<'a, ToolOutcome>;

/// A tool the model can call. A tool states what it is once ([`Tool::declared`]) and how a call
/// runs ([`Tool::run`]); the rest has defaults it overrides only where it differs.
pub trait Tool: Send + Sync {
    /// What it states of itself: names, description, schema, effect, masking, what names a call.
    fn declared(&self) -> Declared<'_>;

    /// Runs a call to its end. Never fails: whatever went wrong is an error outcome.
    fn run<'a>(
        &'a self,
        call: &'a ToolCall,
        on: &'a Tools,
        ctx: &'a ToolContext<'a>,
    ) -> ToolRun<'a>;

    /// The name the model calls it by.
    fn name(&self) -> &str {
        self.declared().names.model
    }

    /// What the model reads of it, besides the schema.
    fn description(&self) -> &str {
        self.declared().description
    }

    /// The JSON schema of its input.
    fn schema(&self) -> Value {
        match self.declared().schema {
            Schema::Made(make) => make(),
            Schema::Listed(schema) => schema.clone(),
        }
    }

    /// Checks the input before anything else happens to the call; the error says what is wrong.
    /// By default: that the input has the schema's shape (what [`decode`] checks first).
    fn check_input(&self, input: &Value) -> Result<(), ToolError> {
        check_shape(self.name(), &self.schema(), input).map_err(ToolError::InvalidArguments)
    }

    /// What a call of it may do to the world, whatever its input.
    fn effect(&self) -> Effect {
        self.declared().effect
    }

    /// What this call does to the world: by default the tool's [`Tool::effect`]; a tool whose
    /// calls differ by their input (`task`) decides per call.
    fn effect_of(&self, _input: &Value) -> Effect {
        self.effect()
    }

    /// Whether this call runs at once with the calls next to it in the response that say the
    /// same (the explorers of `task`); by default each call runs on its own.
    fn runs_beside_others(&self, _input: &Value) -> bool {
        false
    }

    /// One line naming what a call does: the command, the path, the board update. By default
    /// the first line of the argument it is named by, else the tool's name.
    fn summary(&self, input: &Value) -> String {
        let named = self.declared().named_by.and_then(|field| text_field(input, field));
        named.map_or_else(|| self.name().to_owned(), first_line)
    }

    /// What masking keeps of an old result.
    fn masking(&self) -> Masking {
        self.declared().masking
    }

    /// What a call does, whole, for the person to approve: by default the argument it is named
    /// by, exactly as the model sent it, else its summary.
    fn detail(&self, call: &ToolCall, _on: &Tools) -> String {
        let named = self.declared().named_by.and_then(|field| text_field(&call.input, field));
        named.map_or_else(|| self.summary(&call.input), str::to_owned)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::registry::describe;
    use serde_json::json;

    fn tool(name: &str) -> std::sync::Arc<dyn Tool> {
        describe(name).unwrap()
    }

    #[test]
    fn masking_follows_the_effect_unless_a_tool_says_otherwise() {
        let masking: Vec<Masking> = ["bash", "read_file", "write_file", "grep", "todo", "task"]
            .into_iter()
            .map(|name| tool(name).masking())
            .collect();
        use Masking::{Board, Call, Command, Read, Search};
        assert_eq!(masking, [Command, Read, Call, Search, Board, Call]);
        assert_eq!(tool("mcp__fs__read").masking(), Call);
    }

    #[test]
    fn a_call_is_named_by_its_declared_argument_else_by_the_tool() {
        let bash = tool("bash");
        assert_eq!(bash.name(), "bash");
        assert_eq!(bash.summary(&json!({"command": "ls\nrm x"})), "ls …");
        assert_eq!(bash.summary(&json!({})), "bash");
        assert_eq!(tool("edit_file").summary(&json!({"path": "src/a.rs"})), "src/a.rs");
        assert_eq!(tool("glob").summary(&json!({"pattern": "*.rs", "path": "src"})), "*.rs src");
    }

    #[test]
    fn the_input_is_checked_against_the_schema_by_default() {
        let err = tool("read_file").check_input(&json!({"path": 3})).unwrap_err().to_string();
        assert!(err.contains("argument `path` must be a string"), "{err}");
        let err = tool("bash").check_input(&json!({})).unwrap_err().to_string();
        assert!(err.contains("missing required argument `command`"), "{err}");
        assert!(tool("write_file").check_input(&json!({"path": "a", "content": ""})).is_ok());
        let unknown = json!({"pattern": "x", "-i": true});
        assert!(tool("grep").check_input(&unknown).is_err(), "a search decodes whole");
    }
}
