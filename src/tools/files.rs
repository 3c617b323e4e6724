//! The file tools: `read_file`, `write_file` and `edit_file`, all confined to the workspace.
//!
//! - [`read()`] goes line by line with a cap on each line, on the answer and on the bytes it scans,
//!   so a 2 GB file, a file that is one enormous line or a huge offset costs no more time or memory
//!   than a small file; binary files are refused.
//! - Writing and editing are split in two: a *plan* ([`plan_write`], [`plan_edit`]) works out the
//!   file's content before and after without touching anything — the approval preview shows it as
//!   a diff — and [`PlannedChange::apply`] writes it and hands back the before/after pair for undo.
//! - Every write is atomic (`atomic`): the new content goes to a temporary file in the same
//!   folder, which is synced and renamed over the target, so a failure leaves the old file whole.
//! - Only regular files are read or written (`open`): FIFOs, sockets and devices are refused
//!   before they are opened, so nothing here can wait forever.
//! - Nothing inside `.git/` or the workspace's `.keel/` is written (`Workspace::resolve_writable`);
//!   reading them is allowed.

mod atomic;
mod open;
mod plan;
mod read;

pub use plan::{PlannedChange, Repeat, plan_edit, plan_write};
pub use read::read;

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

pub const READ_DESCRIPTION: &str = "Read a text file from the workspace. Lines come back numbered \
(`     1\\tline`); use offset and limit to read a long file in parts. One call reads at most the \
first 8 MiB of a file; use bash for what lies beyond. Binary files, FIFOs and devices are refused.";
pub const WRITE_DESCRIPTION: &str = "Create or replace a file in the workspace with the given \
content. Missing parent folders are created. Prefer edit_file for small changes to an existing file. \
Files inside .git/ and .keel/ cannot be written.";
pub const EDIT_DESCRIPTION: &str = "Replace one exact piece of text in a file. old_text must occur \
exactly once in the file (include enough surrounding lines to make it unique, with the exact \
whitespace and indentation); it is replaced by new_text. Files inside .git/ and .keel/ cannot be \
edited.";

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
            "path": {"type": "string", "description": "File path, relative to the workspace root."},
            "offset": {
                "type": "integer",
                "minimum": 1,
                "description": "The line to start at, counting from 1. Default 1."
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "description": format!("How many lines to read. Default {DEFAULT_READ_LIMIT}.")
            }
        },
        "required": ["path"]
    })
}

pub fn write_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "File path, relative to the workspace root."},
            "content": {"type": "string", "description": "The file's whole new content."}
        },
        "required": ["path", "content"]
    })
}

pub fn edit_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "File path, relative to the workspace root."},
            "old_text": {
                "type": "string",
                "description": "The exact text to replace; must occur exactly once in the file."
            },
            "new_text": {"type": "string", "description": "The text to put in its place."}
        },
        "required": ["path", "old_text", "new_text"]
    })
}
