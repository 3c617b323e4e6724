//! A tool call as keel handles it: the id the model gave it, which tool it names (one keel knows,
//! or a name the model made up) and the arguments exactly as the model sent them.
//!
//! The history keeps calls as `ContentBlock::ToolUse` (the provider-neutral wire form); the agent
//! turns each into a [`ToolCall`] once, and from there on decides by [`ToolName`], not by string.

use crate::board;
use crate::message::ContentBlock;
use serde_json::Value;

/// The longest one-line summary, in characters.
const SUMMARY_MAX_CHARS: usize = 200;

/// The tools the model may call.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ToolName {
    /// The board (`crate::board`); run by the agent itself, since it changes agent state.
    Todo,
    Bash,
    ReadFile,
    WriteFile,
    EditFile,
    /// The search tools (`crate::tools::search`): read-only, run in-process.
    Grep,
    Glob,
    /// A tool of an MCP server, by the name the model calls it (`mcp__SERVER__TOOL`).
    Mcp(String),
    /// A name the model made up; answered with an error that lists the real ones.
    Unknown(String),
}

impl ToolName {
    /// The workspace tools, in the order the model is told about them.
    pub const WORKSPACE: [ToolName; 6] = [
        ToolName::Bash,
        ToolName::ReadFile,
        ToolName::WriteFile,
        ToolName::EditFile,
        ToolName::Grep,
        ToolName::Glob,
    ];

    /// The tool a name from the model refers to.
    pub fn parse(name: &str) -> Self {
        match name {
            board::TOOL_NAME => Self::Todo,
            "bash" => Self::Bash,
            "read_file" => Self::ReadFile,
            "write_file" => Self::WriteFile,
            "edit_file" => Self::EditFile,
            "grep" => Self::Grep,
            "glob" => Self::Glob,
            other if crate::tools::mcp::is_mcp(other) => Self::Mcp(other.to_owned()),
            other => Self::Unknown(other.to_owned()),
        }
    }

    /// The name as the model calls it.
    pub fn as_str(&self) -> &str {
        match self {
            Self::Todo => board::TOOL_NAME,
            Self::Bash => "bash",
            Self::ReadFile => "read_file",
            Self::WriteFile => "write_file",
            Self::EditFile => "edit_file",
            Self::Grep => "grep",
            Self::Glob => "glob",
            Self::Mcp(name) | Self::Unknown(name) => name,
        }
    }

    /// Whether the tool runs commands or changes files: the calls an approval mode decides on.
    /// An MCP tool may do anything its server does, so it counts as one.
    pub fn changes_things(&self) -> bool {
        matches!(self, Self::Bash | Self::WriteFile | Self::EditFile | Self::Mcp(_))
    }

    /// Whether what the tool changes is all in the file records it reports (so undo needs no
    /// workspace snapshot around it).
    pub fn records_its_changes(&self) -> bool {
        matches!(self, Self::WriteFile | Self::EditFile)
    }

    /// The argument that says what a call does, for one-line summaries.
    fn summary_field(&self) -> Option<&'static str> {
        match self {
            Self::Bash => Some("command"),
            Self::ReadFile | Self::WriteFile | Self::EditFile => Some("path"),
            Self::Todo | Self::Grep | Self::Glob | Self::Mcp(_) | Self::Unknown(_) => None,
        }
    }
}

impl std::fmt::Display for ToolName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One call the model asked for.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    pub id: String,
    pub name: ToolName,
    pub input: Value,
}

impl ToolCall {
    /// The call a history block holds, if it is one.
    pub fn from_block(block: &ContentBlock) -> Option<Self> {
        match block {
            ContentBlock::ToolUse { id, name, input } => {
                Some(Self { id: id.clone(), name: ToolName::parse(name), input: input.clone() })
            }
            _ => None,
        }
    }

    /// One line naming what the call does: the command, the path, or the board update.
    pub fn summary(&self) -> String {
        summary(&self.name, &self.input)
    }

    /// What the call does, whole: the command or the path exactly as the model sent it, an MCP
    /// call's arguments as pretty JSON (the one-line summary when the tool has no such argument).
    pub fn detail(&self) -> String {
        if let ToolName::Mcp(_) = self.name {
            return serde_json::to_string_pretty(&self.input).unwrap_or_default();
        }
        self.name
            .summary_field()
            .and_then(|field| self.input.get(field)?.as_str())
            .map_or_else(|| self.summary(), str::to_owned)
    }
}

/// One line naming what a call of `name` with `input` does: the command for `bash`, the path for
/// the file tools, the pattern and where it looks for a search, the counts of a board update;
/// the tool's name when the input says nothing.
pub fn summary(name: &ToolName, input: &Value) -> String {
    if *name == ToolName::Todo {
        return board::summarize_update(input);
    }
    // An MCP tool's arguments are its own: all of them, as compact JSON; a search's, its pattern
    // and where it looks.
    let arguments = match name {
        ToolName::Mcp(_) => Some(input.to_string()),
        ToolName::Grep | ToolName::Glob => crate::tools::search::summary(input),
        _ => None,
    };
    let Some(text) = arguments
        .as_deref()
        .or_else(|| name.summary_field().and_then(|field| input.get(field)?.as_str()))
    else {
        return name.as_str().to_owned();
    };
    let mut lines = text.trim().lines();
    let first = lines.next().unwrap_or_default();
    let mut summary: String = first.chars().take(SUMMARY_MAX_CHARS).collect();
    if summary.len() < first.len() || lines.next().is_some() {
        summary.push_str(" …");
    }
    summary
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_round_trip_and_unknown_ones_are_kept() {
        for name in
            ["todo", "bash", "read_file", "write_file", "edit_file", "grep", "glob", "rm_rf"]
        {
            assert_eq!(ToolName::parse(name).as_str(), name);
        }
        assert_eq!(ToolName::parse("rm_rf"), ToolName::Unknown("rm_rf".into()));
        assert_eq!(ToolName::parse("mcp__fs__read"), ToolName::Mcp("mcp__fs__read".into()));
        assert!(ToolName::parse("mcp__fs__read").changes_things(), "an MCP tool is approved");
        let mcp = ToolName::parse("mcp__fs__read");
        assert_eq!(summary(&mcp, &json!({"path": "a", "n": 1})), r#"{"n":1,"path":"a"}"#);
    }

    #[test]
    fn only_commands_and_writes_change_things() {
        let names = ["todo", "bash", "read_file", "write_file", "edit_file", "grep", "glob", "x"];
        let changing: Vec<&str> =
            names.into_iter().filter(|name| ToolName::parse(name).changes_things()).collect();
        assert_eq!(changing, ["bash", "write_file", "edit_file"]);
    }

    #[test]
    fn a_call_is_read_from_its_block() {
        let block = ContentBlock::ToolUse {
            id: "t1".into(),
            name: "bash".into(),
            input: json!({"command": "ls"}),
        };
        let call = ToolCall::from_block(&block).unwrap();
        assert_eq!((call.id.as_str(), &call.name), ("t1", &ToolName::Bash));
        assert_eq!(call.summary(), "ls");
        assert!(ToolCall::from_block(&ContentBlock::Text { text: "x".into() }).is_none());
    }
}
