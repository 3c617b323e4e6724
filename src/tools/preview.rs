//! What a file tool call would change, as a unified diff, for the person to approve.
//!
//! [`preview`] decodes the call's arguments like [`Tools::run`] would, works out the change with
//! the same plan the tool itself uses, and diffs it — without writing anything. The plan opens
//! only regular files and never waits on one, so a write aimed at a FIFO or a device cannot
//! freeze the approval screen. Calls it cannot preview (other tools, bad arguments, an edit that
//! would fail, a refused target) give `None`: the tool's own error will say what is wrong when it
//! runs.

use super::diff::FileDiff;
use super::files::{self, PlannedChange};
use super::{Invocation, ToolName, Tools};
use serde_json::Value;

/// The unified diff a `write_file` or `edit_file` call would apply; `None` for anything else.
pub fn preview(tools: &Tools, name: &ToolName, input: &Value) -> Option<String> {
    let workspace = tools.workspace();
    let planned = match Tools::parse(name, input).ok()? {
        Invocation::WriteFile(args) => files::plan_write(workspace, &args),
        Invocation::EditFile(args) => files::plan_edit(workspace, &args),
        Invocation::Bash(_) | Invocation::ReadFile(_) => return None,
    };
    planned.ok().map(|change| diff(&change))
}

/// The change as a unified diff with `a/` and `b/` headers (`/dev/null` for a new file).
fn diff(change: &PlannedChange) -> String {
    FileDiff::new(&change.display, change.before.as_deref(), Some(&change.after)).unified
}
