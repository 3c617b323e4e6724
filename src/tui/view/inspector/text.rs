//! One wire message as the history inspector draws it: a header, its pretty-printed JSON, rows
//! broken to the width, and the styles of each row (object keys, search hits).
//!
//! The text of a message does not depend on the width, so it is made once per message and kept;
//! only the row breaks are redone when the width changes. Search runs over the text, so a hit that
//! a row break splits is still found and highlighted on both rows.

use super::search::Search;
use crate::tui::lazy_list::{Blocks, LazyList};
use crate::tui::text::{char_width, clean_line};
use crate::tui::theme;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use serde_json::Value;
use std::sync::Arc;

/// A message (or a line of output) laid out: its text and the rows it breaks into at the width.
pub type Laid = (Arc<MessageText>, Vec<Row>);

/// Draws the rows of `list` on screen into `inner`, each in `style(block)` with the search's
/// highlights.
pub fn draw_rows<B: Blocks<Laid = Laid>>(
    (list, blocks): (&LazyList<Laid>, &B),
    search: &Search,
    style: impl Fn(usize) -> Style,
    inner: Rect,
    buf: &mut Buffer,
) {
    let (width, height) = (usize::from(inner.width), usize::from(inner.height));
    let mut y = inner.y;
    for (index, laid, skip) in list.visible(blocks, width, height) {
        let (text, rows) = laid.as_ref();
        for row in rows.iter().skip(skip) {
            if y >= inner.bottom() {
                return;
            }
            let line =
                row_line(text, *row, &search.highlights(index, row.line)).style(style(index));
            buf.set_line(inner.x, y, &line, inner.width);
            y += 1;
        }
    }
}

/// Continuation rows are indented this much past their line's own indentation.
const CONTINUATION_EXTRA: usize = 2;

/// One line of a message's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextLine {
    pub text: String,
    /// The byte range of the JSON object key at the start of the line, if any.
    key: Option<(usize, usize)>,
    header: bool,
}

/// The text of one wire message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageText {
    pub lines: Vec<TextLine>,
}

impl MessageText {
    /// `── #12 · user ──` followed by the message as pretty JSON, then a blank line.
    pub fn new(index: usize, message: &Value) -> Self {
        let role = message.get("role").and_then(Value::as_str).unwrap_or("message");
        Self::titled(&format!("messages[{index}] · {role}"), message)
    }

    /// `── title ──` followed by `value` as pretty JSON, then a blank line.
    pub fn titled(title: &str, value: &Value) -> Self {
        let pretty = serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string());
        Self::laid_out(title, &pretty)
    }

    /// `── title ──` followed by the JSON text `raw` as it is — its keys in its own order, its
    /// strings as escaped — one member a line, then a blank line.
    pub fn raw(title: &str, raw: &str) -> Self {
        Self::laid_out(title, &crate::tui::view::raw_json::pretty(raw))
    }

    /// One line of plain text, control characters made visible (a line of a tool's output).
    pub fn plain(line: &str) -> Self {
        let text = crate::tui::text::output_line(line).into_owned();
        Self { lines: vec![TextLine { text, key: None, header: false }] }
    }

    /// The JSON text in `raw` without the header and the layout: what it was made from.
    pub fn json(&self) -> String {
        let body = self.lines.iter().filter(|line| !line.header);
        crate::tui::view::raw_json::compact(
            &body.map(|line| line.text.as_str()).collect::<String>(),
        )
    }

    fn laid_out(title: &str, pretty: &str) -> Self {
        let mut lines =
            vec![TextLine { text: format!("── {title} ──"), key: None, header: true }];
        // JSON escapes C0 controls but not DEL or C1 controls, which a terminal may act on.
        lines.extend(pretty.lines().map(clean_line).map(|line| TextLine {
            key: key_range(&line),
            text: line.into_owned(),
            header: false,
        }));
        lines.push(TextLine { text: String::new(), key: None, header: false });
        Self { lines }
    }

    /// The text cut to its header and first `keep` lines, with a line saying how many more
    /// there are; `None` when it is not longer than that.
    pub fn folded(&self, keep: usize) -> Option<Self> {
        // The header, the kept lines, the note and the closing blank line.
        let hidden = self.lines.len().checked_sub(keep + 2).filter(|hidden| *hidden > 1)?;
        let mut lines: Vec<TextLine> = self.lines.iter().take(keep + 1).cloned().collect();
        lines.push(TextLine {
            text: format!("  … {hidden} more lines (o unfolds)"),
            key: None,
            header: false,
        });
        lines.push(TextLine { text: String::new(), key: None, header: false });
        Some(Self { lines })
    }
}

/// The byte range of `"key":` at the start of a pretty-printed JSON line.
fn key_range(line: &str) -> Option<(usize, usize)> {
    let start = line.len() - line.trim_start().len();
    let rest = line.get(start..)?;
    if !rest.starts_with('"') {
        return None;
    }
    let mut escaped = false;
    for (offset, c) in rest.char_indices().skip(1) {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '"' => {
                let end = start + offset + 1;
                return line[end..].starts_with(':').then_some((start, end));
            }
            _ => {}
        }
    }
    None
}

/// One drawn row: bytes `start..end` of line `line`, drawn after `indent` spaces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Row {
    pub line: usize,
    pub start: usize,
    pub end: usize,
    pub indent: usize,
}

/// Breaks every line of `text` into rows of at most `width` columns.
pub fn rows(text: &MessageText, width: usize) -> Vec<Row> {
    let width = width.max(1);
    let mut rows = Vec::with_capacity(text.lines.len());
    for (index, line) in text.lines.iter().enumerate() {
        let own_indent = line.text.len() - line.text.trim_start().len();
        let continuation = (own_indent + CONTINUATION_EXTRA).min(width / 2);
        let mut start = 0;
        let mut indent = 0;
        let mut used = 0;
        for (offset, c) in line.text.char_indices() {
            let w = char_width(c);
            if used + w > width.saturating_sub(indent) && offset > start {
                rows.push(Row { line: index, start, end: offset, indent });
                start = offset;
                indent = continuation;
                used = 0;
            }
            used += w;
        }
        rows.push(Row { line: index, start, end: line.text.len(), indent });
    }
    rows
}

/// Byte ranges of `needle` (already lower-cased ASCII) in `haystack`, ignoring ASCII case.
pub fn find_all(haystack: &str, needle: &str) -> Vec<(usize, usize)> {
    if needle.is_empty() {
        return Vec::new();
    }
    let lower = haystack.to_ascii_lowercase();
    lower.match_indices(needle).map(|(start, found)| (start, start + found.len())).collect()
}

/// A highlighted byte range of a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Highlight {
    pub start: usize,
    pub end: usize,
    pub current: bool,
}

/// The spans of `row`, styled: header, object key, search hits on top.
pub fn row_line(text: &MessageText, row: Row, highlights: &[Highlight]) -> Line<'static> {
    let Some(line) = text.lines.get(row.line) else {
        return Line::default();
    };
    let base = if line.header { theme::JSON_HEADER } else { Style::new() };
    let mut cuts = vec![row.start, row.end];
    if let Some((start, end)) = line.key {
        cuts.extend([start, end]);
    }
    for highlight in highlights {
        cuts.extend([highlight.start, highlight.end]);
    }
    cuts.retain(|cut| (row.start..=row.end).contains(cut) && line.text.is_char_boundary(*cut));
    cuts.sort_unstable();
    cuts.dedup();

    let mut spans = Vec::with_capacity(cuts.len() + 1);
    if row.indent > 0 {
        spans.push(Span::raw(" ".repeat(row.indent)));
    }
    for pair in cuts.windows(2) {
        let (start, end) = (pair[0], pair[1]);
        let mut style = base;
        if line.key.is_some_and(|(key_start, key_end)| start >= key_start && end <= key_end) {
            style = style.patch(theme::JSON_KEY);
        }
        if let Some(hit) = highlights.iter().find(|hit| start >= hit.start && end <= hit.end) {
            style =
                style.patch(if hit.current { theme::SEARCH_CURRENT } else { theme::SEARCH_HIT });
        }
        spans.push(Span::styled(line.text[start..end].to_owned(), style));
    }
    Line::from(spans)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn messages_get_a_header_and_pretty_json() {
        let text = MessageText::new(3, &json!({"role": "user", "content": "hi"}));
        let lines: Vec<_> = text.lines.iter().map(|line| line.text.as_str()).collect();
        assert_eq!(
            lines,
            [
                "── messages[3] · user ──",
                "{",
                "  \"content\": \"hi\",",
                "  \"role\": \"user\"",
                "}",
                ""
            ]
        );
        assert_eq!(text.lines[2].key, Some((2, 11)));
    }

    #[test]
    fn keys_are_found_past_escaped_quotes() {
        assert_eq!(key_range(r#"  "a\"b": 1"#), Some((2, 8)));
        assert_eq!(key_range(r#"  "just a string""#), None);
    }

    #[test]
    fn long_lines_break_into_indented_rows() {
        let text = MessageText::new(0, &json!({"content": "abcdefghijklmnopqrstuvwxyz"}));
        let rows = rows(&text, 20);
        let content: Vec<_> = rows.iter().filter(|row| row.line == 2).collect();
        assert!(content.len() > 1);
        assert_eq!(content[1].indent, 4);
        assert_eq!(content[0].start, 0);
        assert_eq!(content[1].start, content[0].end);
    }

    #[test]
    fn search_ignores_ascii_case() {
        assert_eq!(find_all("Hello hello", "hello"), vec![(0, 5), (6, 11)]);
        assert!(find_all("abc", "").is_empty());
    }

    #[test]
    fn hits_split_by_a_row_break_are_styled_on_both_rows() {
        let text = MessageText::new(0, &json!({"k": "needle"}));
        let line = 2;
        let line_text = &text.lines[line].text;
        let (start, end) = find_all(line_text, "needle")[0];
        let hit = [Highlight { start, end, current: true }];
        let split = start + 3;
        let first = Row { line, start: 0, end: split, indent: 0 };
        let second = Row { line, start: split, end: line_text.len(), indent: 4 };
        let styled = |row| {
            row_line(&text, row, &hit)
                .spans
                .iter()
                .filter(|span| span.style == theme::SEARCH_CURRENT)
                .map(|span| span.content.to_string())
                .collect::<String>()
        };
        assert_eq!(styled(first) + &styled(second), "needle");
    }
}
