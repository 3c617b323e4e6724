//! What a file tool call would change, as a unified diff, for the person to approve.
//!
//! [`preview`] decodes the call's arguments like [`Tools::run`] would, works out the change with
//! the same plan the tool itself uses, and diffs it — without writing anything. The plan opens
//! only regular files and never waits on one, so a write aimed at a FIFO or a device cannot
//! freeze the approval screen. Calls it cannot preview (other tools, bad arguments, an edit that
//! would fail, a refused target) give `None`: the tool's own error will say what is wrong when it
//! runs.

use super::files::{self, PlannedChange};
use super::{Invocation, ToolName, Tools};
use serde_json::Value;
use similar::TextDiff;

/// Lines of unchanged context around each change.
const CONTEXT_LINES: usize = 3;
/// Content beyond this size is summarised rather than diffed, to keep approval quick.
const MAX_PREVIEW_BYTES: usize = 1024 * 1024;

/// The unified diff a `write_file` or `edit_file` call would apply; `None` for anything else.
pub fn preview(tools: &Tools, name: &ToolName, input: &Value) -> Option<String> {
    let workspace = tools.workspace();
    let planned = match Tools::parse(name, input).ok()? {
        Invocation::WriteFile(args) => files::plan_write(workspace, &args),
        Invocation::EditFile(args) => files::plan_edit(workspace, &args),
        Invocation::Bash(_)
        | Invocation::ReadFile(_)
        | Invocation::Grep(_)
        | Invocation::Glob(_) => return None,
    };
    planned.ok().map(|change| diff(&change))
}

/// The change as a unified diff with `a/` and `b/` headers (`/dev/null` for a new file).
fn diff(change: &PlannedChange) -> String {
    let before_len = change.before.as_ref().map_or(0, Vec::len);
    if before_len > MAX_PREVIEW_BYTES || change.after.len() > MAX_PREVIEW_BYTES {
        return format!(
            "{}: {before_len} bytes → {} bytes (too large to show as a diff)\n",
            change.display,
            change.after.len()
        );
    }
    let before = change.before.as_deref().map(String::from_utf8_lossy).unwrap_or_default();
    let after = String::from_utf8_lossy(&change.after);
    if change.before.is_some() && before == after {
        return format!("{}: no changes\n", change.display);
    }
    let old_header = if change.before.is_some() {
        format!("a/{}", change.display)
    } else {
        "/dev/null".to_owned()
    };
    let new_header = format!("b/{}", change.display);
    let text = TextDiff::from_lines(before.as_ref(), after.as_ref())
        .unified_diff()
        .context_radius(CONTEXT_LINES)
        .header(&old_header, &new_header)
        .to_string();
    if text.is_empty() {
        // Only an empty new file diffs to nothing.
        return format!("{}: new empty file\n", change.display);
    }
    text
}
