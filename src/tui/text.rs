//! Making untrusted text safe and measurable for a terminal cell grid.
//!
//! Tool output, model text and pastes can hold escape sequences, carriage returns and tabs. Written
//! into a cell as they are, they would move the real cursor or recolour the screen, so every piece
//! of text is cleaned here before it is laid out, and widths are measured in terminal columns.

use std::borrow::Cow;
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// Columns between tab stops when a tab is expanded.
const TAB_STOP: usize = 4;
/// What marks text cut short to fit.
pub const ELLIPSIS: char = '…';

const ESC: char = '\u{1b}';
const BEL: char = '\u{7}';

/// One line of text (no `\n`) with escape sequences and control characters removed, tabs expanded
/// and carriage-return overwrites resolved (only what follows the last `\r` is kept, the way a
/// progress bar ends up on screen).
pub fn clean_line(line: &str) -> Cow<'_, str> {
    let line = line.strip_suffix('\r').unwrap_or(line);
    let line = match line.rfind('\r') {
        Some(index) => &line[index + 1..],
        None => line,
    };
    if !line.chars().any(needs_cleaning) {
        return Cow::Borrowed(line);
    }
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    let mut column = 0;
    while let Some(c) = chars.next() {
        match c {
            '\t' => {
                let pad = TAB_STOP - column % TAB_STOP;
                out.extend(std::iter::repeat_n(' ', pad));
                column += pad;
            }
            ESC => skip_escape(&mut chars),
            c if needs_cleaning(c) => {}
            c => {
                out.push(c);
                column += c.width().unwrap_or(0);
            }
        }
    }
    Cow::Owned(out)
}

/// One line of untrusted text with every character kept and shown: what a terminal would act
/// on becomes a visible stand-in (see `crate::visible`), tabs become spaces. For text the
/// person must see exactly, such as a command waiting for approval.
pub fn shown_exactly(line: &str) -> String {
    let shown = crate::visible::visible(line);
    let mut out = String::with_capacity(shown.len());
    let mut column = 0;
    for c in shown.chars() {
        if c == '\t' {
            let pad = TAB_STOP - column % TAB_STOP;
            out.extend(std::iter::repeat_n(' ', pad));
            column += pad;
        } else {
            out.push(c);
            column += c.width().unwrap_or(0);
        }
    }
    out
}

/// One line of a tool's output as the tool pane and the output pager show it: the line's own
/// ending (`\r` of `\r\n`) dropped, and every other character kept and shown as the approval
/// box shows it ([`shown_exactly`]) — a `\r` that would let later text overwrite a line, an
/// escape sequence or a control character is marked, never silently removed.
pub fn output_line(line: &str) -> Cow<'_, str> {
    let line = line.strip_suffix('\r').unwrap_or(line);
    if line.chars().any(|c| c == '\t' || crate::visible::is_hidden(c)) {
        Cow::Owned(shown_exactly(line))
    } else {
        Cow::Borrowed(line)
    }
}

/// Text that may span lines, cleaned line by line (`\r\n` line ends included).
pub fn clean_lines(text: &str) -> impl Iterator<Item = Cow<'_, str>> {
    text.split('\n').map(clean_line)
}

/// Control characters are removed from pasted text, but newlines and tabs are kept: the composer
/// shows them as they are and the model receives them.
pub fn clean_paste(text: &str) -> String {
    let text = text.replace("\r\n", "\n").replace('\r', "\n");
    if !text.chars().any(|c| c != '\n' && c != '\t' && c.is_control()) {
        return text;
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\n' | '\t' => out.push(c),
            ESC => skip_escape(&mut chars),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

fn needs_cleaning(c: char) -> bool {
    c.is_control()
}

/// Skips the rest of an escape sequence whose `ESC` was just read: CSI (`ESC [ … final`), OSC
/// (`ESC ] … BEL` or `ESC ] … ESC \`) or a two-character escape.
fn skip_escape(chars: &mut std::iter::Peekable<impl Iterator<Item = char>>) {
    match chars.next() {
        Some('[') => {
            for c in chars.by_ref() {
                if ('\u{40}'..='\u{7e}').contains(&c) {
                    break;
                }
            }
        }
        Some(']') => {
            while let Some(c) = chars.next() {
                if c == BEL {
                    break;
                }
                if c == ESC {
                    if chars.peek() == Some(&'\\') {
                        chars.next();
                    }
                    break;
                }
            }
        }
        _ => {}
    }
}

/// Width of `text` in terminal columns.
pub fn width(text: &str) -> usize {
    text.width()
}

/// Width of one character in terminal columns (control characters count as zero).
pub fn char_width(c: char) -> usize {
    c.width().unwrap_or(0)
}

/// `text` cut to at most `max` columns, ending in `…` when something was cut.
pub fn truncate(text: &str, max: usize) -> Cow<'_, str> {
    if width(text) <= max {
        return Cow::Borrowed(text);
    }
    if max == 0 {
        return Cow::Borrowed("");
    }
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = char_width(c);
        if used + w + 1 > max {
            break;
        }
        out.push(c);
        used += w;
    }
    out.push(ELLIPSIS);
    Cow::Owned(out)
}

/// The first line of `text`, cleaned, with `…` added when more lines follow.
pub fn first_line(text: &str) -> Cow<'_, str> {
    let trimmed = text.trim();
    match trimmed.split_once('\n') {
        None => clean_line(trimmed),
        Some((first, _)) => Cow::Owned(format!("{} {ELLIPSIS}", clean_line(first.trim_end()))),
    }
}

/// The last `max_lines` lines of `text`, looking at no more than `max_bytes` from its end, so a
/// multi-megabyte output costs the same as a small one; each shown by [`output_line`].
pub fn tail_lines(text: &str, max_lines: usize, max_bytes: usize) -> Vec<Cow<'_, str>> {
    let mut start = text.len().saturating_sub(max_bytes);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    let window = text[start..].trim_end_matches('\n');
    let mut lines: Vec<_> = window.rsplit('\n').take(max_lines).map(output_line).collect();
    lines.reverse();
    lines
}

/// A token count in a few characters: `950`, `12.3k`, `4.1M`.
pub fn compact_count(count: u64) -> String {
    crate::count::compact(count)
}

/// `98304` as `98,304`.
pub fn group_thousands(n: usize) -> String {
    crate::count::grouped(u64::try_from(n).unwrap_or(u64::MAX))
}

/// A byte count for people: `512 B`, `4.0 KB`, `5.0 MB`.
pub fn human_bytes(bytes: usize) -> String {
    const KB: f64 = 1024.0;
    let bytes_f = bytes as f64;
    if bytes_f < KB {
        format!("{bytes} B")
    } else if bytes_f < KB * KB {
        format!("{:.1} KB", bytes_f / KB)
    } else {
        format!("{:.1} MB", bytes_f / (KB * KB))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_sequences_and_controls_are_removed() {
        assert_eq!(clean_line("\u{1b}[31mred\u{1b}[0m ok"), "red ok");
        assert_eq!(clean_line("a\u{1b}]0;title\u{7}b"), "ab");
        assert_eq!(clean_line("bell\u{7}"), "bell");
    }

    #[test]
    fn carriage_returns_keep_the_last_overwrite() {
        assert_eq!(clean_line("10%\r50%\r100%"), "100%");
        assert_eq!(clean_line("line\r"), "line");
    }

    #[test]
    fn tabs_expand_to_stops() {
        assert_eq!(clean_line("a\tb"), "a   b");
        assert_eq!(clean_line("\tx"), "    x");
    }

    #[test]
    fn paste_keeps_newlines_and_tabs() {
        assert_eq!(clean_paste("a\r\nb\rc\td\u{1b}[1m"), "a\nb\nc\td");
    }

    #[test]
    fn truncate_adds_an_ellipsis() {
        assert_eq!(truncate("hello world", 5), "hell…");
        assert_eq!(truncate("hi", 5), "hi");
        assert_eq!(truncate("hi", 0), "");
    }

    #[test]
    fn tail_reads_only_the_end() {
        let text = "one\ntwo\nthree\nfour\n";
        assert_eq!(tail_lines(text, 2, 1000), vec!["three", "four"]);
        let big = "x".repeat(10_000);
        let tail = tail_lines(&big, 3, 100);
        assert_eq!(tail.len(), 1);
        assert_eq!(tail[0].len(), 100);
    }

    #[test]
    fn output_lines_mark_what_they_do_not_show() {
        assert_eq!(output_line("plain"), "plain");
        assert_eq!(output_line("crlf\r"), "crlf");
        assert_eq!(output_line("10%\r100%"), "10%␍100%");
        assert_eq!(output_line("\u{1b}[31mred\u{7}"), "^[[31mred^G");
        assert_eq!(output_line("a\tb\u{202e}"), "a   b⟨U+202E⟩");
    }

    #[test]
    fn counts_are_compact() {
        assert_eq!(compact_count(950), "950");
        assert_eq!(compact_count(12_345), "12.3k");
        assert_eq!(compact_count(4_100_000), "4.1M");
        assert_eq!(human_bytes(5 * 1024 * 1024), "5.0 MB");
    }
}
