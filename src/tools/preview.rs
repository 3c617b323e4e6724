//! What a file tool call would change, as a unified diff, for the person to approve.
//!
//! [`preview`] decodes the call's arguments as the tool would, works out the change with
//! the same plan the tool itself uses, and diffs it — without writing anything. The plan opens
//! only regular files and never waits on one, so a write aimed at a FIFO or a device cannot
//! freeze the approval screen. Calls it cannot preview (other tools, bad arguments, an edit that
//! would fail, a refused target) give `None`: the tool's own error will say what is wrong when it
//! runs.

use super::files::PlannedChange;
use super::{Tool, Tools, registry};
use crate::runtime::Workspace;
use crate::runtime::change::FileDiff;
use serde_json::Value;

/// The unified diff a call of a tool that writes files would apply; `None` for anything else.
pub fn preview(tool: &dyn Tool, input: &Value, workspace: &Workspace) -> Option<String> {
    tool.planned_change(input, workspace).map(|(change, _)| diff(&change))
}

/// The diff a call of the tool named `name` would apply, outside a conversation (what the tests
/// drive).
pub fn preview_named(tools: &Tools, name: &str, input: &Value) -> Option<String> {
    preview(&*registry::describe(name)?, input, tools.workspace())
}

/// The change as a unified diff with `a/` and `b/` headers (`/dev/null` for a new file).
fn diff(change: &PlannedChange) -> String {
    FileDiff::new(&change.display, change.before.as_deref(), Some(&change.after)).unified
}
