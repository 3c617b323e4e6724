//! Every tool keel has, in one list, and the set one conversation offers its model.
//!
//! [`BUILTIN`] is the one place a tool is registered: a line here and a file with its impl
//! ([`Tool`]). A [`ToolSet`] is what one conversation's model is told of and may call — keel's
//! own tools (the board only where it is on), then the MCP servers' tools as they are listed
//! now. [`describe`] finds the tool behind any name the history holds, whichever set offered it,
//! for what is said of old calls (summaries, masking).

use super::bash::tool::Bash;
use super::files::changing::{EDIT_FILE, WRITE_FILE};
use super::files::read_file::ReadFile;
use super::mcp::{Hub, is_mcp, tool::McpTool};
use super::search::searching::{GLOB, GREP};
use super::task::Task;
use super::todo::Todo;
use super::tool::{Effect, Tool};
use super::{ToolCall, ToolError};
use crate::llm::ToolSpec;
use std::sync::{Arc, LazyLock};

/// keel's own tools, in the order the model is told of them.
static BUILTIN: LazyLock<[Arc<dyn Tool>; 8]> = LazyLock::new(|| {
    [
        Arc::new(Todo),
        Arc::new(Bash),
        Arc::new(ReadFile),
        Arc::new(WRITE_FILE),
        Arc::new(EDIT_FILE),
        Arc::new(GREP),
        Arc::new(GLOB),
        Arc::new(Task),
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

/// The names of keel's own tools, in order.
#[cfg(test)]
pub(super) fn builtin_names() -> Vec<&'static str> {
    BUILTIN.iter().map(|tool| tool.name()).collect()
}

/// The tools one conversation offers its model.
#[derive(Clone)]
pub struct ToolSet {
    own: Vec<Arc<dyn Tool>>,
    /// The MCP servers whose tools are offered besides.
    mcp: Hub,
    /// Why this set's calls run under read-only rules (a child agent's), in words for the model
    /// whose change is refused; `None`: the conversation's own rules alone.
    read_only: Option<Arc<str>>,
    /// Only the MCP tools their servers mark read-only are offered.
    mcp_reading_only: bool,
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
            .filter(|tool| board || !tool.effect().updates_board())
            .cloned()
            .collect();
        Self { own, mcp, read_only: None, mcp_reading_only: false }
    }

    /// The set a child agent of this one's conversation is offered: the same tools but the board
    /// and delegation (a child neither keeps the board nor has children of its own). An explorer
    /// (`explore`) keeps only the tools that read, commands (which run in the read-only sandbox)
    /// and the MCP tools marked read-only. `read_only`: why the child's calls run under
    /// read-only rules, when they do (an explorer's always do).
    pub fn for_child(&self, explore: bool, read_only: Option<String>) -> Self {
        let keeps = |effect: Effect| match effect {
            effect if effect.updates_board() || effect.starts_child() => false,
            _ if explore => effect.only_reads() || effect == Effect::RunsCommand,
            _ => true,
        };
        Self {
            own: self.own.iter().filter(|tool| keeps(tool.effect())).cloned().collect(),
            mcp: self.mcp.clone(),
            read_only: read_only.map(Arc::from).or_else(|| self.read_only.clone()),
            mcp_reading_only: explore || self.mcp_reading_only,
        }
    }

    /// Why this set's calls run under read-only rules, if they do.
    pub fn read_only(&self) -> Option<&str> {
        self.read_only.as_deref()
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
            .chain(self.mcp.specs().into_iter().filter(|spec| self.offers_mcp(&spec.name)))
            .collect()
    }

    /// Whether the MCP tool named `name` is offered: every one, or only those marked read-only.
    fn offers_mcp(&self, name: &str) -> bool {
        !self.mcp_reading_only || self.mcp.find(name).is_some_and(|(_, tool)| tool.read_only)
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
            ["bash", "read_file", "write_file", "edit_file", "grep", "glob", "task"]
        );
        assert!(with.find("rm_rf").is_none());
        assert!(with.find("task").is_some() && without.find("task").is_some());
        let mcp = with.find("mcp__fs__read").map(|tool| tool.effect());
        assert_eq!(
            mcp,
            Some(Effect::ReachesOutside { marked_read_only: false }),
            "an unlisted MCP tool may do anything"
        );
    }

    #[test]
    fn a_child_has_no_board_and_no_children_and_an_explorer_only_reads() {
        let parent = ToolSet::new(true, Hub::default());
        let general = parent.for_child(false, None);
        assert_eq!(
            general.names(),
            ["bash", "read_file", "write_file", "edit_file", "grep", "glob"]
        );
        assert_eq!(general.read_only(), None);
        let explorer = parent.for_child(true, Some("it explores".into()));
        assert_eq!(explorer.names(), ["bash", "read_file", "grep", "glob"]);
        assert_eq!(explorer.read_only(), Some("it explores"));
        let under_plan = parent.for_child(false, Some("plan mode".into()));
        assert!(under_plan.find("write_file").is_some(), "its writes are refused with the reason");
        assert_eq!(under_plan.read_only(), Some("plan mode"));
    }
}
