//! The file tools: `read_file`, `write_file` and `edit_file`, all confined to the workspace.
//!
//! Reading goes line by line with a cap on each line and on the whole answer, so a 2 GB file or a
//! file that is one enormous line costs no more memory than a small one; binary files are refused.
//! Writing and editing are split in two: a *plan* ([`plan_write`], [`plan_edit`]) works out the
//! file's content before and after without touching anything — the approval preview shows it as a
//! diff — and [`PlannedChange::apply`] writes it and hands back the before/after pair for undo.

use super::{FileChange, ToolError, ToolOutcome, Workspace};
use serde::Deserialize;
use serde_json::{Value, json};
use std::fs::{self, File};
use std::io::{self, BufRead, BufReader, Read, Seek};
use std::path::PathBuf;

/// Lines `read_file` returns when the model does not say.
pub const DEFAULT_READ_LIMIT: u64 = 2000;
/// Bytes of one line `read_file` shows; the rest of a longer line is cut.
pub const MAX_LINE_BYTES: usize = 2000;
/// Bytes of text one `read_file` answer may hold before it stops early.
pub const MAX_READ_OUTPUT_BYTES: usize = 256 * 1024;
/// A file is binary if its first this many bytes hold a NUL.
const BINARY_SNIFF_BYTES: u64 = 8 * 1024;
/// The largest file `write_file` may replace or `edit_file` may change: both hold the old content
/// in memory for undo.
pub const MAX_EDIT_FILE_BYTES: u64 = 32 * 1024 * 1024;
/// Buffer for reading files line by line.
const READ_BUFFER_BYTES: usize = 64 * 1024;

pub const READ_DESCRIPTION: &str = "Read a text file from the workspace. Lines come back numbered \
(`     1\\tline`); use offset and limit to read a long file in parts. Binary files are refused.";
pub const WRITE_DESCRIPTION: &str = "Create or replace a file in the workspace with the given \
content. Missing parent folders are created. Prefer edit_file for small changes to an existing file.";
pub const EDIT_DESCRIPTION: &str = "Replace one exact piece of text in a file. old_text must occur \
exactly once in the file (include enough surrounding lines to make it unique, with the exact \
whitespace and indentation); it is replaced by new_text.";

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

/// Reads part of a text file and numbers its lines.
pub fn read(workspace: &Workspace, args: &ReadArgs) -> Result<String, ToolError> {
    let path = workspace.resolve(&args.path)?;
    let display = workspace.display(&path);
    let io_error = |source| ToolError::Io { path: display.clone(), source };
    let mut file = open_file(&path, &display)?;
    if is_binary(&mut file).map_err(io_error)? {
        return Err(ToolError::Binary { path: display.clone() });
    }
    let offset = args.offset.unwrap_or(1).max(1);
    let limit = args.limit.unwrap_or(DEFAULT_READ_LIMIT).max(1);
    let mut reader = BufReader::with_capacity(READ_BUFFER_BYTES, file);
    let mut line = Vec::new();
    let mut out = String::new();
    let mut number: u64 = 0;
    let mut shown: u64 = 0;
    loop {
        let wanted = number + 1 >= offset;
        let cap = if wanted { MAX_LINE_BYTES } else { 0 };
        let Some(length) = read_line_capped(&mut reader, &mut line, cap).map_err(io_error)? else {
            break;
        };
        number += 1;
        if !wanted {
            continue;
        }
        push_numbered(&mut out, number, &line, length);
        shown += 1;
        let more = !reader.fill_buf().map_err(io_error)?.is_empty();
        if more && (shown >= limit || out.len() >= MAX_READ_OUTPUT_BYTES) {
            let reason = if shown >= limit { "" } else { " (this answer reached its size cap)" };
            out.push_str(&format!(
                "\n(More lines follow{reason}; continue with offset {}.)\n",
                number + 1
            ));
            return Ok(out);
        }
    }
    if number == 0 {
        return Ok(format!("({display} is empty.)\n"));
    }
    if shown == 0 {
        return Err(ToolError::OffsetPastEnd { path: display, offset, lines: number });
    }
    Ok(out)
}

fn open_file(path: &std::path::Path, display: &str) -> Result<File, ToolError> {
    let meta = fs::metadata(path).map_err(|source| not_found_or_io(display, source))?;
    if meta.is_dir() {
        return Err(ToolError::IsDirectory { path: display.to_owned() });
    }
    File::open(path).map_err(|source| not_found_or_io(display, source))
}

fn not_found_or_io(display: &str, source: io::Error) -> ToolError {
    if source.kind() == io::ErrorKind::NotFound {
        ToolError::NotFound { path: display.to_owned() }
    } else {
        ToolError::Io { path: display.to_owned(), source }
    }
}

/// Whether the file's first bytes hold a NUL; leaves the file at its start.
fn is_binary(file: &mut File) -> io::Result<bool> {
    let mut head = Vec::new();
    Read::by_ref(file).take(BINARY_SNIFF_BYTES).read_to_end(&mut head)?;
    file.rewind()?;
    Ok(head.contains(&0))
}

/// Reads one line, keeping at most `cap` bytes of it in `out` (without the newline), and returns
/// the line's full length; `None` at the end of the file. Memory stays bounded by `cap` whatever
/// the line's length.
fn read_line_capped(
    reader: &mut impl BufRead,
    out: &mut Vec<u8>,
    cap: usize,
) -> io::Result<Option<usize>> {
    out.clear();
    let mut length = 0;
    let mut started = false;
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            return Ok(started.then_some(length));
        }
        started = true;
        let newline = buf.iter().position(|byte| *byte == b'\n');
        let part = &buf[..newline.unwrap_or(buf.len())];
        let room = cap.saturating_sub(out.len());
        out.extend_from_slice(&part[..part.len().min(room)]);
        length += part.len();
        let consumed = part.len() + usize::from(newline.is_some());
        reader.consume(consumed);
        if newline.is_some() {
            return Ok(Some(length));
        }
    }
}

/// `     7\tthe line`, with a note when the line was cut.
fn push_numbered(out: &mut String, number: u64, kept: &[u8], length: usize) {
    let mut text = String::from_utf8_lossy(kept);
    if kept.len() == length && text.ends_with('\r') {
        text.to_mut().pop();
    }
    out.push_str(&format!("{number:>6}\t{text}"));
    if length > kept.len() {
        out.push_str(&format!(" … [line cut: {length} bytes]"));
    }
    out.push('\n');
}

/// What a write or an edit would do to one file, worked out without touching it.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedChange {
    /// The real path inside the workspace.
    pub path: PathBuf,
    /// The path as the model and the person read it.
    pub display: String,
    pub before: Option<Vec<u8>>,
    pub after: Vec<u8>,
    /// The sentence reporting the change once made.
    report: String,
}

impl PlannedChange {
    /// Writes the new content (creating parent folders) and reports it with the undo record.
    pub fn apply(self) -> Result<ToolOutcome, ToolError> {
        if self.before.as_deref() == Some(self.after.as_slice()) {
            // Nothing to write, and nothing to undo.
            return Ok(ToolOutcome::ok(self.report));
        }
        let io_error = |source| ToolError::Io { path: self.display.clone(), source };
        if let Some(parent) = self.path.parent() {
            fs::create_dir_all(parent).map_err(io_error)?;
        }
        fs::write(&self.path, &self.after).map_err(io_error)?;
        let mut outcome = ToolOutcome::ok(self.report);
        outcome.changes.push(FileChange {
            path: self.path,
            before: self.before,
            after: self.after,
        });
        Ok(outcome)
    }
}

/// Works out `write_file`'s change.
pub fn plan_write(workspace: &Workspace, args: &WriteArgs) -> Result<PlannedChange, ToolError> {
    let path = workspace.resolve(&args.path)?;
    let display = workspace.display(&path);
    let before = read_existing(&path, &display)?;
    let report = match &before {
        None => format!("Wrote {} bytes to {display} (new file).", args.content.len()),
        Some(old) => format!(
            "Wrote {} bytes to {display} (replacing {} bytes).",
            args.content.len(),
            old.len()
        ),
    };
    Ok(PlannedChange { path, display, before, after: args.content.as_bytes().to_vec(), report })
}

/// Works out `edit_file`'s change: fails unless `old_text` occurs exactly once.
pub fn plan_edit(workspace: &Workspace, args: &EditArgs) -> Result<PlannedChange, ToolError> {
    let path = workspace.resolve(&args.path)?;
    let display = workspace.display(&path);
    let Some(before) = read_existing(&path, &display)? else {
        return Err(ToolError::NotFound { path: display });
    };
    let text =
        std::str::from_utf8(&before).map_err(|_| ToolError::NotUtf8 { path: display.clone() })?;
    if args.old_text.is_empty() {
        return Err(ToolError::EmptyOldText);
    }
    let (count, first) = occurrences(text, &args.old_text);
    let at = match (count, first) {
        (1, Some(at)) => at,
        (0, _) | (_, None) => return Err(ToolError::TextNotFound { path: display }),
        (count, Some(_)) => {
            return Err(ToolError::TextNotUnique { path: display, count });
        }
    };
    let mut after = String::with_capacity(text.len() - args.old_text.len() + args.new_text.len());
    after.push_str(&text[..at]);
    after.push_str(&args.new_text);
    after.push_str(&text[at + args.old_text.len()..]);
    let line = text[..at].matches('\n').count() + 1;
    let report = if args.old_text == args.new_text {
        format!("No change to {display}: old_text and new_text are the same.")
    } else {
        format!("Edited {display}: replaced the text at line {line}.")
    };
    Ok(PlannedChange { path, display, before: Some(before), after: after.into_bytes(), report })
}

/// The file's content, `None` if it does not exist; refuses folders and files too large to hold.
fn read_existing(path: &std::path::Path, display: &str) -> Result<Option<Vec<u8>>, ToolError> {
    let meta = match fs::metadata(path) {
        Ok(meta) => meta,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(ToolError::Io { path: display.to_owned(), source });
        }
    };
    if meta.is_dir() {
        return Err(ToolError::IsDirectory { path: display.to_owned() });
    }
    if meta.len() > MAX_EDIT_FILE_BYTES {
        return Err(ToolError::TooLarge {
            path: display.to_owned(),
            size: meta.len(),
            limit: MAX_EDIT_FILE_BYTES,
        });
    }
    fs::read(path).map(Some).map_err(|source| ToolError::Io { path: display.to_owned(), source })
}

/// How many times `needle` occurs in `haystack`, overlaps included, and where it first does.
fn occurrences(haystack: &str, needle: &str) -> (usize, Option<usize>) {
    let mut count = 0;
    let mut first = None;
    let mut from = 0;
    while let Some(found) = haystack[from..].find(needle) {
        let at = from + found;
        first.get_or_insert(at);
        count += 1;
        from = at + haystack[at..].chars().next().map_or(1, char::len_utf8);
    }
    (count, first)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn occurrences_count_overlaps() {
        assert_eq!(occurrences("aaa", "aa"), (2, Some(0)));
        assert_eq!(occurrences("xéx", "x"), (2, Some(0)));
        assert_eq!(occurrences("abc", "d"), (0, None));
    }

    #[test]
    fn capped_line_reader_measures_long_lines() {
        let mut reader = BufReader::with_capacity(4, &b"abcdefghij\nxy"[..]);
        let mut line = Vec::new();
        assert_eq!(read_line_capped(&mut reader, &mut line, 3).unwrap(), Some(10));
        assert_eq!(line, b"abc");
        assert_eq!(read_line_capped(&mut reader, &mut line, 3).unwrap(), Some(2));
        assert_eq!(line, b"xy");
        assert_eq!(read_line_capped(&mut reader, &mut line, 3).unwrap(), None);
    }
}
