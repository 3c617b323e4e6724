//! The answer streaming in, laid out as it grows: what a delta costs is the delta's own length
//! plus the paragraph it ends in, never the whole answer.
//!
//! The pane keeps its own copy of the text, appending only the pieces it has not seen. The text is
//! split where nothing after can change how what comes before is drawn — a blank line outside a
//! fenced code block, followed by a line that starts a new top-level block (not indented, not a
//! list item, which could join the list above) — and everything before the last such place is
//! "settled": laid out once, its lines kept. Only the unsettled tail is laid out again when more
//! text arrives. Settled blocks are joined by the blank line Markdown puts between blocks, so the
//! lines are those of laying out the whole text at once.

use super::super::markdown;
use crate::agent::StreamingText;
use ratatui::text::Line;

/// Characters that open (and close) a fenced code block, at least three of them.
const FENCE_CHARS: [u8; 2] = [b'`', b'~'];
/// The shortest fence.
const FENCE_MIN: usize = 3;
/// Spaces a fence or a block may be indented by and still be at the top level.
const MAX_INDENT: usize = 3;

/// The streaming answer's lines at one width, kept between frames.
#[derive(Debug, Default)]
pub struct StreamingLines {
    /// The answer the copy is of (`None`: nothing yet).
    answer: Option<u64>,
    /// Pieces of the answer appended to `text` so far.
    pieces: usize,
    text: String,
    width: usize,
    margin: &'static str,
    /// Bytes of `text` settled.
    settled: usize,
    /// Lines of `lines` that lay out the settled text.
    settled_rows: usize,
    /// Bytes of `text` looked through for places to settle at (whole lines only).
    scanned: usize,
    /// What the lines scanned so far leave open.
    scan: Scan,
    /// The settled lines, then the tail's.
    lines: Vec<Line<'static>>,
}

impl StreamingLines {
    /// Brings the lines up to date with `text` at `width`, each line starting with `margin`.
    pub fn update(&mut self, text: &StreamingText, width: usize, margin: &'static str) {
        if self.answer != Some(text.answer()) || text.piece_count() < self.pieces {
            *self = Self { answer: Some(text.answer()), ..Self::default() };
        }
        let before = self.text.len();
        self.text.extend(text.pieces_from(self.pieces));
        self.pieces = text.piece_count();
        if self.width != width || self.margin != margin {
            self.width = width;
            self.margin = margin;
            self.lines = markdown::render(&self.text[..self.settled], width, margin);
            self.settled_rows = self.lines.len();
        } else if before == self.text.len() && !self.lines.is_empty() {
            return;
        }
        self.settle();
        self.lines.truncate(self.settled_rows);
        let tail = markdown::render(&self.text[self.settled..], self.width, self.margin);
        self.join(tail);
    }

    /// The lines as the whole text laid out now would give them.
    pub fn lines(&self) -> &[Line<'static>] {
        &self.lines
    }

    /// The width the lines were laid out at (0: none yet).
    pub fn width(&self) -> usize {
        if self.answer.is_some() { self.width } else { 0 }
    }

    /// Forgets the copy (the answer is done or void).
    pub fn clear(&mut self) {
        *self = Self::default();
    }

    /// Looks through the whole lines not yet scanned and settles the text before the last place
    /// where a new top-level block starts.
    fn settle(&mut self) {
        let Some(last_newline) = self.text[self.scanned..].rfind('\n') else { return };
        let end = self.scanned + last_newline + 1;
        let mut settle_at = None;
        let mut start = self.scanned;
        while start < end {
            let line_end = self.text[start..end].find('\n').map_or(end, |at| start + at);
            let line = &self.text[start..line_end];
            if let Some(at) = self.scan.line(line, start) {
                settle_at = Some(at);
            }
            start = line_end + 1;
        }
        self.scanned = end;
        if let Some(at) = settle_at.filter(|&at| at > self.settled) {
            self.lines.truncate(self.settled_rows);
            let block = markdown::render(&self.text[self.settled..at], self.width, self.margin);
            self.join(block);
            self.settled = at;
            self.settled_rows = self.lines.len();
        }
    }

    /// Appends `block`'s lines, after the blank line between blocks when both sides have some.
    fn join(&mut self, block: Vec<Line<'static>>) {
        if !self.lines.is_empty() && !block.is_empty() {
            self.lines.extend(markdown::block_gap(self.width, self.margin));
        }
        self.lines.extend(block);
    }
}

/// What the lines scanned so far leave open.
#[derive(Debug, Default)]
struct Scan {
    /// The fence of the code block open: its character and length.
    fence: Option<(u8, usize)>,
    /// A blank line outside any fence was seen since the last block began.
    after_blank: bool,
}

impl Scan {
    /// Notes one line (starting at byte `start`); returns `start` when the text may be settled
    /// there.
    fn line(&mut self, line: &str, start: usize) -> Option<usize> {
        let indent = line.len() - line.trim_start_matches(' ').len();
        let body = line.trim_start_matches(' ');
        if let Some((fence_char, fence_len)) = self.fence {
            let run = body.bytes().take_while(|&c| c == fence_char).count();
            if indent <= MAX_INDENT && run >= fence_len && body[run..].trim().is_empty() {
                self.fence = None;
            }
            return None;
        }
        if body.trim().is_empty() {
            self.after_blank = true;
            return None;
        }
        let settles = self.after_blank && indent == 0 && starts_new_block(body);
        self.after_blank = false;
        if let Some(&fence_char) =
            FENCE_CHARS.iter().find(|&&c| body.as_bytes().first() == Some(&c))
        {
            let run = body.bytes().take_while(|&c| c == fence_char).count();
            let info_ok = fence_char != b'`' || !body[run..].contains('`');
            if indent <= MAX_INDENT && run >= FENCE_MIN && info_ok {
                self.fence = Some((fence_char, run));
            }
        }
        settles.then_some(start)
    }
}

/// Whether a line after a blank one surely starts a block of its own: not a list item (which
/// would continue the list above), not whitespace, not a table's continuation.
fn starts_new_block(body: &str) -> bool {
    let Some(first) = body.chars().next() else { return false };
    let list_marker = matches!(first, '-' | '*' | '+') || first.is_ascii_digit();
    !(list_marker || first.is_whitespace() || first == '|' || first == '[')
}

#[cfg(test)]
mod tests {
    use super::*;

    const MARGIN: &str = "  ";

    /// Streams `text` in pieces of `size` bytes (on char boundaries), updating after each.
    fn streamed(text: &str, size: usize, width: usize) -> StreamingLines {
        let mut streaming = StreamingText::new(1);
        let mut lines = StreamingLines::default();
        let mut rest = text;
        while !rest.is_empty() {
            let mut cut = size.min(rest.len());
            while !rest.is_char_boundary(cut) {
                cut += 1;
            }
            streaming.push(&rest[..cut]);
            rest = &rest[cut..];
            lines.update(&streaming, width, MARGIN);
        }
        lines
    }

    const DOCUMENT: &str = "# Plan\n\nFirst a paragraph that is long enough to wrap at a \
        narrow width, with *emphasis* and `code`.\n\n- one\n- two\n\n  more of two\n\n\
        1. first\n\n2. second\n\n```rust\nfn main() {\n\n    println!(\"hi\");\n}\n```\n\n\
        > quoted\n> still\n\n---\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\nLast words, é and 漢字.\n";

    #[test]
    fn streamed_lines_are_the_whole_texts_lines_at_every_piece_size() {
        for width in [20, 80] {
            let whole = markdown::render(DOCUMENT, width, MARGIN);
            for size in [1, 3, 16, 1000] {
                let lines = streamed(DOCUMENT, size, width);
                assert_eq!(lines.lines(), whole.as_slice(), "pieces of {size} at width {width}");
            }
        }
    }

    #[test]
    fn settled_paragraphs_are_not_laid_out_again() {
        let lines = streamed(DOCUMENT, 16, 40);
        let last_block = DOCUMENT.rfind("Last words").unwrap();
        assert_eq!(lines.settled, last_block, "everything before the last block is settled");
        assert!(lines.settled_rows > 0 && lines.settled_rows < lines.lines().len());
    }

    #[test]
    fn a_code_block_with_blank_lines_is_never_split() {
        let text = "Text.\n\n```\na\n\nb\n\nc\n```\n";
        let lines = streamed(text, 2, 40);
        assert_eq!(lines.settled, "Text.\n\n".len(), "not inside the fence");
        assert_eq!(lines.lines(), markdown::render(text, 40, MARGIN).as_slice());
    }

    #[test]
    fn a_new_answer_or_width_starts_again() {
        let mut lines = streamed("Para one.\n\nPara two.\n", 4, 40);
        let mut other = StreamingText::new(2);
        other.push("Fresh.");
        lines.update(&other, 40, MARGIN);
        assert_eq!(lines.lines(), markdown::render("Fresh.", 40, MARGIN).as_slice());
        lines.update(&other, 10, MARGIN);
        assert_eq!(lines.lines(), markdown::render("Fresh.", 10, MARGIN).as_slice());
    }
}
