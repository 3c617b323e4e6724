//! The file tools: `read_file`, `write_file` and `edit_file`, all confined to the workspace.
//!
//! - [`read()`] goes line by line with a cap on each line, on the answer and on the bytes it scans,
//!   so a 2 GB file, a file that is one enormous line or a huge offset costs no more time or memory
//!   than a small file; binary files are refused.
//! - Writing and editing are split in two: a *plan* ([`plan_write`], [`plan_edit`]) works out the
//!   file's content before and after without touching anything — the approval preview shows it as
//!   a diff — and [`PlannedChange::apply`] writes it and hands back the before/after pair for undo.
//! - Every write is atomic (`runtime::atomic`): the new content goes to a temporary file in the same
//!   folder, which is synced and renamed over the target, so a failure leaves the old file whole.
//! - Only regular files are read or written (`runtime::open`): FIFOs, sockets and devices are refused
//!   before they are opened, so nothing here can wait forever.
//! - Nothing inside `.git/` or the workspace's `.keel/` is written (`Workspace::resolve_writable`);
//!   reading them is allowed.

pub mod changing;
mod planned_change;
mod read;
pub mod read_file;
pub mod repeat;

pub use planned_change::{PlannedChange, Repeat, plan_edit, plan_write};
pub use read::read;

use crate::runtime::path_error::PathError;
use crate::runtime::{Workspace, open};
use serde::Deserialize;
use serde_json::{Value, json};

/// Lines `read_file` returns when the model does not say.
pub const DEFAULT_READ_LIMIT: u64 = 2000;
/// Bytes of one line `read_file` shows; the rest of a longer line is cut.
pub const MAX_LINE_BYTES: usize = 2000;
/// Bytes of text one `read_file` answer may hold before it stops early.
pub const MAX_READ_OUTPUT_BYTES: usize = 256 * 1024;
/// Bytes one `read_file` call reads from the file at most, the lines it skips to reach `offset`
/// included: a file that is one enormous line, or an offset deep into a huge file, answers after
/// this much, saying how to go on.
pub const MAX_READ_SCAN_BYTES: u64 = 8 * 1024 * 1024;
/// The largest file `write_file` may replace or `edit_file` may change: both hold the old content
/// in memory for undo.
pub const MAX_EDIT_FILE_BYTES: u64 = 32 * 1024 * 1024;

// What the model reads of each tool goes with every request: say what it cannot guess, and
// let the answers and errors explain the rest (binary files, `.git/`, sizes, how to read on
// with `offset`) when they happen.
pub const READ_DESCRIPTION: &str = "Read a text file as numbered lines, the first 8 MiB at most.";
pub const WRITE_DESCRIPTION: &str = "Create or overwrite a file, making its parent folders.";
pub const EDIT_DESCRIPTION: &str = "Replace old_text (copied exactly as read, with enough lines to \
occur exactly once) with new_text.";

/// Opens `path` for reading the way the file tools do: inside the workspace (no symlink out of
/// it), a regular file (no FIFO or device), without blocking. For workspace files keel reads
/// outside a tool call, such as the project's instructions.
pub fn open_for_reading(workspace: &Workspace, path: &str) -> Result<std::fs::File, PathError> {
    let real = workspace.resolve(path)?;
    open::open_regular(workspace, &real, path).map(|(file, _)| file)
}

/// `read_file`'s arguments.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ReadArgs {
    pub path: String,
    /// The first line to show, from 1.
    pub offset: Option<u64>,
    /// How many lines to show.
    pub limit: Option<u64>,
}

/// `write_file`'s arguments.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct WriteArgs {
    pub path: String,
    pub content: String,
}

/// `edit_file`'s arguments.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct EditArgs {
    pub path: String,
    pub old_text: String,
    pub new_text: String,
}

pub fn read_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "offset": {"type": "integer", "minimum": 1},
            "limit": {"type": "integer", "minimum": 1}
        },
        "required": ["path"]
    })
}

pub fn write_schema() -> Value {
    json!({
        "type": "object",
        "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
        "required": ["path", "content"]
    })
}

pub fn edit_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "old_text": {"type": "string"},
            "new_text": {"type": "string"}
        },
        "required": ["path", "old_text", "new_text"]
    })
}
