//! `read_file`: part of a text file with its lines numbered, at a bounded cost.
//!
//! The file is read through a *window*: its first [`MAX_READ_SCAN_BYTES`] bytes, the lines skipped
//! to reach `offset` included. Each line keeps at most [`MAX_LINE_BYTES`], and the answer at most
//! [`MAX_READ_OUTPUT_BYTES`]. So a 2 GB file, a file that is one enormous line or an offset deep
//! into a huge log all answer after reading a few megabytes, and the answer says how to go on:
//! with a later `offset` while the window holds the lines, with bash beyond it.

use super::{
    DEFAULT_READ_LIMIT, MAX_LINE_BYTES, MAX_READ_OUTPUT_BYTES, MAX_READ_SCAN_BYTES, ReadArgs,
};
use crate::runtime::Workspace;
use crate::runtime::open::{io_error, open_regular};
use crate::tools::ToolError;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Seek, Take};

/// A file is binary if its first this many bytes hold a NUL.
const BINARY_SNIFF_BYTES: u64 = 8 * 1024;
/// Buffer for reading files line by line.
const READ_BUFFER_BYTES: usize = 64 * 1024;

/// Reads part of a text file and numbers its lines.
pub fn read(workspace: &Workspace, args: &ReadArgs) -> Result<String, ToolError> {
    let path = workspace.resolve(&args.path)?;
    let display = workspace.display(&path);
    let io_error = |source| io_error(&display, source);
    let (mut file, _) = open_regular(workspace, &path, &display)?;
    if is_binary(&mut file).map_err(io_error)? {
        return Err(ToolError::Binary { path: display.clone() });
    }
    let offset = args.offset.unwrap_or(1).max(1);
    let limit = args.limit.unwrap_or(DEFAULT_READ_LIMIT).max(1);
    let mut window = Window::new(file);
    let mut kept = Vec::new();
    let mut out = String::new();
    let mut number: u64 = 0;
    let mut shown: u64 = 0;
    loop {
        let wanted = number + 1 >= offset;
        let keep = if wanted { MAX_LINE_BYTES } else { 0 };
        let Some(line) = read_line_capped(&mut window.reader, &mut kept, keep).map_err(io_error)?
        else {
            break;
        };
        number += 1;
        if !line.newline && window.cut_short().map_err(io_error)? {
            // The window ends inside this line.
            if !wanted {
                return Err(beyond_window(&display, offset, number - 1));
            }
            if shown == 0 {
                push_numbered(&mut out, number, &kept, line.length, false);
            }
            out.push_str(&window_note(&display, number, limit));
            return Ok(out);
        }
        if !wanted {
            continue;
        }
        push_numbered(&mut out, number, &kept, line.length, true);
        shown += 1;
        let more = !window.reader.fill_buf().map_err(io_error)?.is_empty();
        if more && (shown >= limit || out.len() >= MAX_READ_OUTPUT_BYTES) {
            let reason = if shown >= limit { "" } else { " (this answer reached its size cap)" };
            out.push_str(&format!(
                "\n(More lines follow{reason}; continue with offset {}.)\n",
                number + 1
            ));
            return Ok(out);
        }
    }
    if window.cut_short().map_err(io_error)? {
        // The window ends exactly where a line starts.
        if shown == 0 {
            return Err(beyond_window(&display, offset, number));
        }
        out.push_str(&window_note(&display, number + 1, limit));
        return Ok(out);
    }
    if number == 0 {
        return Ok(format!("({display} is empty.)\n"));
    }
    if shown == 0 {
        return Err(ToolError::OffsetPastEnd { path: display, offset, lines: number });
    }
    Ok(out)
}

/// The first [`MAX_READ_SCAN_BYTES`] of a file, buffered, and whether the file goes on past them.
struct Window {
    reader: BufReader<Take<File>>,
    /// Known once the window has been read to its end.
    beyond: Option<bool>,
}

impl Window {
    fn new(file: File) -> Self {
        let reader = BufReader::with_capacity(READ_BUFFER_BYTES, file.take(MAX_READ_SCAN_BYTES));
        Self { reader, beyond: None }
    }

    /// Called once the reader has run dry: whether that was the window's end rather than the
    /// file's. Costs one more byte of reading, once.
    fn cut_short(&mut self) -> io::Result<bool> {
        if let Some(beyond) = self.beyond {
            return Ok(beyond);
        }
        let window = self.reader.get_mut();
        if window.limit() > 0 {
            return Ok(false);
        }
        let mut probe = [0u8; 1];
        let beyond = window.get_mut().read(&mut probe)? > 0;
        self.beyond = Some(beyond);
        Ok(beyond)
    }
}

/// The refusal when `offset` lies past the window, which holds `lines` whole lines.
fn beyond_window(display: &str, offset: u64, lines: u64) -> ToolError {
    ToolError::BeyondReadWindow {
        path: display.to_owned(),
        offset,
        lines,
        window: MAX_READ_SCAN_BYTES,
        command: sed_command(display, offset, DEFAULT_READ_LIMIT),
    }
}

/// The note that ends an answer cut by the window's end, inside or before line `from`.
fn window_note(display: &str, from: u64, limit: u64) -> String {
    format!(
        "\n(read_file reads only the first {MAX_READ_SCAN_BYTES} bytes of a file, and line {from} \
         goes on past them; read from there with bash, e.g. `{}`.)\n",
        sed_command(display, from, limit)
    )
}

/// `sed -n 'FROM,TOp' PATH`, the path quoted for the shell when it needs to be.
fn sed_command(display: &str, from: u64, limit: u64) -> String {
    let to = from.saturating_add(limit.saturating_sub(1));
    // A path that starts with `-` would be taken for an option.
    let path = if display.starts_with('-') { format!("./{display}") } else { display.to_owned() };
    let plain = path.bytes().all(|byte| byte.is_ascii_alphanumeric() || b"._/-+".contains(&byte));
    let path = if plain { path } else { format!("'{}'", path.replace('\'', r"'\''")) };
    format!("sed -n '{from},{to}p' {path}")
}

/// Whether the file's first bytes hold a NUL; leaves the file at its start.
fn is_binary(file: &mut File) -> io::Result<bool> {
    let mut head = Vec::new();
    Read::by_ref(file).take(BINARY_SNIFF_BYTES).read_to_end(&mut head)?;
    file.rewind()?;
    Ok(head.contains(&0))
}

/// One line as [`read_line_capped`] met it.
#[derive(Debug, PartialEq)]
struct Line {
    /// The bytes it had, without the newline.
    length: usize,
    /// Whether a newline ended it (rather than the end of what could be read).
    newline: bool,
}

/// Reads one line, keeping at most `cap` bytes of it in `out` (without the newline); `None` at
/// the end of the input. Memory stays bounded by `cap` whatever the line's length.
fn read_line_capped(
    reader: &mut impl BufRead,
    out: &mut Vec<u8>,
    cap: usize,
) -> io::Result<Option<Line>> {
    out.clear();
    let mut length = 0;
    let mut started = false;
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            return Ok(started.then_some(Line { length, newline: false }));
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
            return Ok(Some(Line { length, newline: true }));
        }
    }
}

/// `     7\tthe line`, with a note when the line was cut; `whole` is false when only its first
/// `length` bytes could be read.
fn push_numbered(out: &mut String, number: u64, kept: &[u8], length: usize, whole: bool) {
    let mut text = String::from_utf8_lossy(kept);
    if whole && kept.len() == length && text.ends_with('\r') {
        text.to_mut().pop();
    }
    out.push_str(&format!("{number:>6}\t{text}"));
    if !whole {
        out.push_str(&format!(" … [line cut: {length} bytes read, and it goes on]"));
    } else if length > kept.len() {
        out.push_str(&format!(" … [line cut: {length} bytes]"));
    }
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capped_line_reader_measures_long_lines() {
        let mut reader = BufReader::with_capacity(4, &b"abcdefghij\nxy"[..]);
        let mut line = Vec::new();
        let first = read_line_capped(&mut reader, &mut line, 3).unwrap();
        assert_eq!(first, Some(Line { length: 10, newline: true }));
        assert_eq!(line, b"abc");
        let last = read_line_capped(&mut reader, &mut line, 3).unwrap();
        assert_eq!(last, Some(Line { length: 2, newline: false }));
        assert_eq!(line, b"xy");
        assert_eq!(read_line_capped(&mut reader, &mut line, 3).unwrap(), None);
    }

    #[test]
    fn suggested_commands_quote_awkward_paths() {
        assert_eq!(sed_command("logs/app.log", 5, 10), "sed -n '5,14p' logs/app.log");
        assert_eq!(sed_command("my log's", 1, 1), r"sed -n '1,1p' 'my log'\''s'");
        assert_eq!(sed_command("-n", 1, u64::MAX), format!("sed -n '1,{}p' ./-n", u64::MAX));
    }

    #[test]
    fn the_description_states_the_window() {
        let mib = MAX_READ_SCAN_BYTES / (1024 * 1024);
        assert!(super::super::READ_DESCRIPTION.contains(&format!("first {mib} MiB")));
    }
}
