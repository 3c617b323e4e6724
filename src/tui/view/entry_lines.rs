//! How each entry of the conversation is drawn: the person's prompts (cut with a note when
//! huge), the model's Markdown, its reasoning dimmed and folded to one line (whole on Ctrl+O),
//! tool calls and reminders on one line, errors and notices as marked prose. Pure functions of
//! the entry, the width and whether reasoning is folded.

use super::super::markdown;
use super::super::text::{
    clean_lines, first_line, group_thousands, human_bytes, truncate, width as text_width,
};
use super::super::theme;
use super::super::wrap::{Prefix, wrap};
use crate::agent::{CallMark, Entry, ToolStatus};
use crate::tools::names::screen_name;
use crate::visible::one_line as one_line_of;
use ratatui::style::Style;
use ratatui::text::{Line, Span};

/// A prompt longer than this is shown folded to its first [`USER_FOLDED_LINES`], with a note: a
/// big paste stays folded in the conversation as it was in the composer, and a 5 MB one is not
/// laid out line by line.
const USER_MAX_LINES: usize = 24;
const USER_FOLDED_LINES: usize = 6;
const USER_MAX_BYTES: usize = 16 * 1024;
/// Left margin of assistant text, lining it up with the text after the user marker.
pub(super) const MARGIN: &str = "  ";

/// Whether the model's reasoning is drawn whole or as one line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Fold {
    #[default]
    Folded,
    Unfolded,
}

impl Fold {
    pub fn toggled(self) -> Self {
        match self {
            Self::Folded => Self::Unfolded,
            Self::Unfolded => Self::Folded,
        }
    }
}

/// The lines one transcript entry is drawn as, at `width`, with reasoning drawn as `fold` says.
pub(super) fn layout_entry(entry: &Entry, width: usize, fold: Fold) -> Vec<Line<'static>> {
    match entry {
        Entry::Thinking { text, redacted } => thinking(text, *redacted, width, fold),
        Entry::User { text } => {
            let prefix = Prefix {
                first: vec![Span::styled("› ", theme::USER_MARKER)],
                rest: vec![Span::raw(MARGIN)],
            };
            let text = text.trim_end();
            let keep = if text.lines().nth(USER_MAX_LINES).is_some() {
                USER_FOLDED_LINES
            } else {
                USER_MAX_LINES
            };
            let (shown, hidden) = clip(text, keep, USER_MAX_BYTES);
            let mut lines = Vec::new();
            for (index, line) in clean_lines(shown).enumerate() {
                let prefix =
                    if index == 0 { prefix.clone() } else { Prefix::uniform(prefix.rest.clone()) };
                let spans = [Span::styled(line.into_owned(), theme::USER_TEXT)];
                lines.extend(wrap(&spans, width, &prefix));
            }
            if hidden > 0 {
                let note = format!(
                    "{MARGIN}… {} more lines, {} in all (all of it was sent)",
                    group_thousands(hidden),
                    human_bytes(text.len())
                );
                lines.push(Line::styled(truncate(&note, width).into_owned(), theme::DIM));
            }
            lines
        }
        Entry::Assistant { text } => {
            let lines = markdown::render(text, width, MARGIN);
            if lines.is_empty() { vec![Line::from(MARGIN)] } else { lines }
        }
        Entry::ToolCall { name, summary, .. } => vec![one_line(
            vec![
                Span::styled(format!("{MARGIN}▸ "), theme::TOOL_CALL),
                Span::styled(one_line_of(screen_name(name)), theme::TOOL_NAME),
                Span::raw(" "),
            ],
            &one_line_of(summary),
            theme::TOOL_CALL,
            width,
        )],
        Entry::Reminder { text } => vec![one_line(
            vec![Span::styled(format!("{MARGIN}↻ reminder: "), theme::REMINDER)],
            &first_line(strip_tags(text)),
            theme::REMINDER,
            width,
        )],
        Entry::Error { text } => prose(text, width, "✗ ", theme::ERROR),
        Entry::Notice { text } => prose(text, width, "· ", theme::NOTICE),
    }
}

/// The model's reasoning, dimmed: folded to its first line with a count of the rest, or whole.
fn thinking(text: &str, redacted: bool, width: usize, fold: Fold) -> Vec<Line<'static>> {
    let text = text.trim();
    let redacted_note = match (redacted, text.is_empty()) {
        (false, _) => "",
        (true, true) => "(redacted by the provider)",
        (true, false) => " · partly redacted",
    };
    if fold == Fold::Unfolded && !text.is_empty() {
        let mut lines = prose(text, width, THINKING_MARKER, theme::THINKING);
        if redacted {
            lines.extend(prose("partly redacted by the provider", width, "  ", theme::THINKING));
        }
        return lines;
    }
    let more = text.lines().count().saturating_sub(1);
    let tail = match more {
        0 if text.is_empty() => redacted_note.to_owned(),
        0 => format!(" (Ctrl+O){redacted_note}"),
        _ => format!(" (+{more} lines, Ctrl+O){redacted_note}"),
    };
    let lead = format!("{MARGIN}{THINKING_MARKER}thinking: ");
    let room = width.saturating_sub(text_width(&lead) + text_width(&tail));
    let first = first_line(text);
    vec![Line::from(vec![
        Span::styled(lead, theme::THINKING),
        Span::styled(truncate(&first, room).into_owned(), theme::THINKING),
        Span::styled(tail, theme::DIM),
    ])]
}

/// The mark before the model's reasoning.
const THINKING_MARKER: &str = "∴ ";

/// Multi-line plain text after a marker, wrapped, every line in `style`.
pub(super) fn prose(
    text: &str,
    width: usize,
    marker: &str,
    style: ratatui::style::Style,
) -> Vec<Line<'static>> {
    let first = Prefix {
        first: vec![Span::styled(format!("{MARGIN}{marker}"), style)],
        rest: vec![Span::raw(" ".repeat(MARGIN.len() + marker.chars().count()))],
    };
    let rest = Prefix::uniform(first.rest.clone());
    let mut lines = Vec::new();
    for (index, line) in clean_lines(text.trim_end()).enumerate() {
        let spans = [Span::styled(line.into_owned(), style)];
        lines.extend(wrap(&spans, width, if index == 0 { &first } else { &rest }));
    }
    lines
}

/// The start of `text`: at most `max_lines` lines and about `max_bytes` bytes (cut at a line
/// end when there is one), and how many lines were left out.
fn clip(text: &str, max_lines: usize, max_bytes: usize) -> (&str, usize) {
    let mut end = text
        .match_indices('\n')
        .nth(max_lines.saturating_sub(1))
        .map_or(text.len(), |(index, _)| index);
    if end > max_bytes {
        let mut cut = max_bytes;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        end = text[..cut].rfind('\n').unwrap_or(cut);
    }
    let hidden =
        if end < text.len() { text[end..].trim_start_matches('\n').lines().count() } else { 0 };
    (&text[..end], hidden)
}

/// `lead` then `text` on one line, cut to `width`.
pub(super) fn one_line(
    mut lead: Vec<Span<'static>>,
    text: &str,
    style: ratatui::style::Style,
    width: usize,
) -> Line<'static> {
    let used: usize = lead.iter().map(Span::width).sum();
    let room = width.saturating_sub(used);
    lead.push(Span::styled(truncate(text, room).into_owned(), style));
    Line::from(lead)
}

/// `<reminder>text</reminder>` shown as `text`.
fn strip_tags(text: &str) -> &str {
    let trimmed = text.trim();
    if let (Some(open_end), Some(close_start)) = (trimmed.find('>'), trimmed.rfind("</"))
        && trimmed.starts_with('<')
        && open_end < close_start
    {
        return &trimmed[open_end + 1..close_start];
    }
    trimmed
}

/// The mark at the end of the line of a call that did not succeed: ` ✗ failed`, ` ⊘ declined`,
/// ` ⊘ refused: plan mode`, ` ■ interrupted` — ` ✗ rejected` for a board update the board
/// refused, with the board's reason — and what the sandbox had to do with it: ` ✗ failed · no network`, or ` ⚠ no
/// network` on a command that exited 0.
pub(super) fn call_mark(name: &str, mark: &CallMark) -> (String, Style) {
    let (text, style) = match mark.status {
        ToolStatus::Failed if name == crate::tools::names::TODO.model => match &mark.reason {
            Some(reason) => return (format!(" ✗ rejected: {reason}"), theme::RUN_FAILED),
            None => ("✗ rejected", theme::RUN_FAILED),
        },
        ToolStatus::Failed => ("✗ failed", theme::RUN_FAILED),
        ToolStatus::Declined => ("⊘ declined", theme::RUN_STOPPED),
        ToolStatus::Refused(refusal) => {
            return (format!(" ⊘ {}", refusal.label()), theme::RUN_STOPPED);
        }
        ToolStatus::Interrupted => ("■ interrupted", theme::RUN_STOPPED),
        ToolStatus::Running | ToolStatus::Succeeded => ("⚠", theme::RUN_FAILED),
    };
    match (mark.hint, mark.status) {
        (Some(hint), ToolStatus::Running | ToolStatus::Succeeded) => {
            (format!(" {text} {}", hint.label()), style)
        }
        (Some(hint), _) => (format!(" {text} · {}", hint.label()), style),
        (None, ToolStatus::Running | ToolStatus::Succeeded) => (String::new(), Style::new()),
        (None, _) => (format!(" {text}"), style),
    }
}

/// What ends the line of a search that found something: ` · 12 matches in 3 files`.
pub(super) fn tally_mark(tally: &str) -> String {
    format!(" · {}", one_line_of(tally))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_prompts_are_clipped_at_a_line_end() {
        let text = "a\nb\nc\nd";
        assert_eq!(clip(text, 2, 1000), ("a\nb", 2));
        assert_eq!(clip(text, 10, 1000), (text, 0));
        assert_eq!(clip("abcdef\nxyz", 10, 4), ("abcd", 2));
        assert_eq!(clip("ab\ncdef\nxyz", 10, 5), ("ab", 2));
    }

    #[test]
    fn reminder_tags_are_stripped() {
        assert_eq!(strip_tags("<reminder>Update your todos.</reminder>"), "Update your todos.");
        assert_eq!(strip_tags("plain"), "plain");
    }
}
