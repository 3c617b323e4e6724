//! The one table of what keel's tools are called: by the model (`read_file`), by Claude Code's
//! hooks and rules (`Read`), and on the screen. Every place that names a tool reads it here: the
//! tools' impls ([`super::Tool::name`]), the hooks (a matcher takes either name, a hook's JSON
//! says `tool_name` as Claude Code does), and the TUI.
//!
//! An MCP tool is not in the table: its one name, `mcp__SERVER__TOOL`, is the same in Claude
//! Code, so every lookup here hands back a name the table does not hold unchanged.

/// What one tool is called, by whom.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolNames<'a> {
    /// The name the model calls it by, and the history and the session log keep.
    pub model: &'a str,
    /// Claude Code's name for the same tool, which its hooks' matchers and rules use.
    pub claude: &'a str,
    /// What the screen calls it: the tool pane, the conversation, the approval box, the pager.
    pub screen: &'a str,
}

impl<'a> ToolNames<'a> {
    /// A tool with one name for all (an MCP tool).
    pub const fn same(name: &'a str) -> Self {
        Self { model: name, claude: name, screen: name }
    }
}

pub const TODO: ToolNames<'static> =
    ToolNames { model: "todo", claude: "TodoWrite", screen: "todo" };
pub const BASH: ToolNames<'static> = ToolNames { model: "bash", claude: "Bash", screen: "bash" };
pub const READ_FILE: ToolNames<'static> =
    ToolNames { model: "read_file", claude: "Read", screen: "read_file" };
pub const WRITE_FILE: ToolNames<'static> =
    ToolNames { model: "write_file", claude: "Write", screen: "write_file" };
pub const EDIT_FILE: ToolNames<'static> =
    ToolNames { model: "edit_file", claude: "Edit", screen: "edit_file" };
pub const GREP: ToolNames<'static> = ToolNames { model: "grep", claude: "Grep", screen: "grep" };
pub const GLOB: ToolNames<'static> = ToolNames { model: "glob", claude: "Glob", screen: "glob" };
pub const TASK: ToolNames<'static> = ToolNames { model: "task", claude: "Task", screen: "task" };

/// Every tool of keel's own, a row each.
pub const TABLE: [ToolNames<'static>; 8] =
    [TODO, BASH, READ_FILE, WRITE_FILE, EDIT_FILE, GREP, GLOB, TASK];

/// The row of the tool the model calls `model`.
pub fn by_model(model: &str) -> Option<&'static ToolNames<'static>> {
    TABLE.iter().find(|row| row.model == model)
}

/// The row of the tool Claude Code calls `claude`.
pub fn by_claude(claude: &str) -> Option<&'static ToolNames<'static>> {
    TABLE.iter().find(|row| row.claude == claude)
}

/// Claude Code's name for the tool the model calls `model`: itself where the table has no row
/// (an MCP tool).
pub fn claude_name(model: &str) -> &str {
    by_model(model).map_or(model, |row| row.claude)
}

/// The model's name for the tool Claude Code calls `claude`: itself where the table has no row
/// (an MCP tool).
pub fn model_name(claude: &str) -> &str {
    by_claude(claude).map_or(claude, |row| row.model)
}

/// What the screen calls the tool the model calls `model`: itself where the table has no row.
pub fn screen_name(model: &str) -> &str {
    by_model(model).map_or(model, |row| row.screen)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::registry;
    use std::collections::HashSet;

    #[test]
    fn every_registered_tool_has_exactly_one_row() {
        let registered = registry::builtin_names();
        for name in &registered {
            let rows = TABLE.iter().filter(|row| row.model == *name).count();
            assert_eq!(rows, 1, "{name} has {rows} rows");
        }
        assert_eq!(registered.len(), TABLE.len(), "a row names no registered tool");
    }

    #[test]
    fn names_are_unique_both_ways_and_lookups_go_both_ways() {
        let unique = |names: HashSet<&str>| names.len() == TABLE.len();
        assert!(unique(TABLE.iter().map(|row| row.model).collect()));
        assert!(unique(TABLE.iter().map(|row| row.claude).collect()));
        assert!(unique(TABLE.iter().map(|row| row.screen).collect()));
        for row in &TABLE {
            assert_eq!(model_name(claude_name(row.model)), row.model);
            assert_eq!(by_claude(row.claude), Some(row));
        }
        assert_eq!(claude_name("bash"), "Bash");
        assert_eq!(model_name("TodoWrite"), "todo");
        assert_eq!(claude_name("mcp__fs__read"), "mcp__fs__read");
        assert_eq!(model_name("mcp__fs__read"), "mcp__fs__read");
        assert_eq!(screen_name("mcp__fs__read"), "mcp__fs__read");
    }
}
