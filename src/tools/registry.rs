//! Every tool keel has, in one list, and the set one conversation offers its model.
//!
//! [`BUILTIN`] is the one place a tool is registered: a line here and a file with its impl
//! ([`Tool`]). A [`ToolSet`] is what one conversation's model is told of and may call — keel's
//! own tools (the board only where it is on), then the MCP servers' tools as they are listed
//! now. [`describe`] finds the tool behind any name the history holds, whichever set offered it,
//! for what is said of old calls (summaries, masking).

use super::bash::tool::Bash;
use super::files::{edit_file::EditFile, read_file::ReadFile, write_file::WriteFile};
use super::mcp::{Hub, is_mcp, tool::McpTool};
use super::search::{glob_tool::Glob, grep_tool::Grep};
use super::todo::Todo;
use super::tool::{Effect, Tool};
use super::{ToolCall, ToolError};
use crate::llm::ToolSpec;
use std::sync::{Arc, LazyLock};

/// keel's own tools, in the order the model is told of them.
static BUILTIN: LazyLock<[Arc<dyn Tool>; 7]> = LazyLock::new(|| {
    [
        Arc::new(Todo),
        Arc::new(Bash),
        Arc::new(ReadFile),
        Arc::new(WriteFile),
        Arc::new(EditFile),
        Arc::new(Grep),
        Arc::new(Glob),
    ]
});

/// The tool behind `name` as a call in the history names it: one of keel's own, or an MCP
/// tool (known by its name alone); `None` for a name the model made up.
pub fn describe(name: &str) -> Option<Arc<dyn Tool>> {
    builtin(name).or_else(|| is_mcp(name).then(|| Arc::new(McpTool::unlisted(name)) as _))
}

fn builtin(name: &str) -> Option<Arc<dyn Tool>> {
    BUILTIN.iter().find(|tool| tool.name() == name).cloned()
}

/// The tools one conversation offers its model.
#[derive(Clone)]
pub struct ToolSet {
    own: Vec<Arc<dyn Tool>>,
    /// The MCP servers whose tools are offered besides.
    mcp: Hub,
}

impl std::fmt::Debug for ToolSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.own.iter().map(|tool| tool.name()).collect();
        f.debug_struct("ToolSet").field("own", &names).finish_non_exhaustive()
    }
}

impl ToolSet {
    /// keel's tools, with the board or without it (`--no-todo`), and `mcp`'s servers' tools.
    pub fn new(board: bool, mcp: Hub) -> Self {
        let own = BUILTIN
            .iter()
            .filter(|tool| board || tool.effect() != Effect::Plans)
            .cloned()
            .collect();
        Self { own, mcp }
    }

    /// The tool a call names, if this set offers one by that name. An MCP name no server lists
    /// is still an MCP tool: its run says why it cannot be called.
    pub fn find(&self, name: &str) -> Option<Arc<dyn Tool>> {
        if let Some(tool) = self.own.iter().find(|tool| tool.name() == name) {
            return Some(Arc::clone(tool));
        }
        if !is_mcp(name) {
            return None;
        }
        Some(Arc::new(match self.mcp.find(name) {
            Some((server, tool)) => McpTool::listed(server.name, tool),
            None => McpTool::unlisted(name),
        }))
    }

    /// The tool a call names, or the error the model gets for a name no tool has.
    pub fn resolve(&self, call: &ToolCall) -> Result<Arc<dyn Tool>, ToolError> {
        self.find(&call.name).ok_or_else(|| ToolError::UnknownTool {
            name: call.name.clone(),
            available: self.names().join(", "),
        })
    }

    /// keel's own tools of this set, by name, in order.
    pub fn names(&self) -> Vec<&str> {
        self.own.iter().map(|tool| tool.name()).collect()
    }

    /// keel's own tools of this set that may run in every approval mode and in plan mode: those
    /// that only read, then those that only plan.
    pub fn reading(&self) -> Vec<&str> {
        let mut names = self.with_effect(|effect| effect == Effect::Reads);
        names.extend(self.with_effect(|effect| effect != Effect::Reads && effect.only_reads()));
        names
    }

    /// keel's own tools of this set whose effect is one `wanted` takes, by name, in order.
    pub fn with_effect(&self, wanted: impl Fn(Effect) -> bool) -> Vec<&str> {
        self.own.iter().filter(|tool| wanted(tool.effect())).map(|tool| tool.name()).collect()
    }

    /// The tools as the model is told of them: keel's own, then the MCP servers'. A server that
    /// stopped keeps its tools listed, so that the model calling one learns why it cannot run.
    pub fn specs(&self) -> Vec<ToolSpec> {
        self.own
            .iter()
            .map(|tool| ToolSpec {
                name: tool.name().to_owned(),
                description: tool.description().to_owned(),
                input_schema: tool.schema(),
            })
            .chain(self.mcp.specs())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn every_tool_has_a_unique_name_and_an_object_schema() {
        let mut names = HashSet::new();
        for tool in BUILTIN.iter() {
            assert!(names.insert(tool.name()), "{} is registered twice", tool.name());
            assert_eq!(tool.schema()["type"], "object", "{}", tool.name());
            assert!(!tool.description().is_empty(), "{}", tool.name());
            assert!(!is_mcp(tool.name()), "{} takes the MCP prefix", tool.name());
            assert!(describe(tool.name()).is_some());
        }
    }

    #[test]
    fn a_set_without_the_board_offers_no_todo_and_reads_what_only_reads() {
        let with = ToolSet::new(true, Hub::default());
        let without = ToolSet::new(false, Hub::default());
        assert!(with.find("todo").is_some() && without.find("todo").is_none());
        assert_eq!(with.reading(), ["read_file", "grep", "glob", "todo"]);
        assert_eq!(
            without.names(),
            ["bash", "read_file", "write_file", "edit_file", "grep", "glob"]
        );
        assert!(with.find("rm_rf").is_none());
        let mcp = with.find("mcp__fs__read").map(|tool| tool.effect());
        assert_eq!(
            mcp,
            Some(Effect::ReachesOutside { marked_read_only: false }),
            "an unlisted MCP tool may do anything"
        );
    }
}
