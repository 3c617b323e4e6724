//! A unified diff as the person reads it after the fact: each line with its numbers in the file
//! before and after (worked out from the hunk headers), coloured — added green, removed red,
//! hunk headers cyan — its text shown exactly (tabs and control characters made visible). The
//! conversation folds it under the call's line (`▸ edit_file app.py +3 −1`); the pager shows it
//! whole. Pure functions of the diff's text.

use super::super::text::{output_line, truncate};
use super::super::theme;
use crate::runtime::change::FileDiff;
use ratatui::style::Style;
use ratatui::text::{Line, Span};

/// The narrowest column of line numbers.
const MIN_NUMBER_WIDTH: usize = 3;

/// What one line of a diff is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `--- a/x` or `+++ b/x`.
    File,
    /// `@@ -1,3 +1,4 @@`.
    Hunk,
    Context,
    Added,
    Removed,
    /// Anything else: `\ No newline at end of file`, a summary of a change too large to diff.
    Note,
}

/// One line of a diff with its numbers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub kind: Kind,
    /// Its number in the file before, and after (`None` where it is not in that file).
    pub old: Option<usize>,
    pub new: Option<usize>,
    /// The line as the diff has it, its `+`, `-` or space included.
    pub text: String,
}

/// The rows of `unified`.
pub fn rows(unified: &str) -> Vec<Row> {
    let (mut old, mut new) = (0, 0);
    let mut rows = Vec::new();
    for line in unified.lines() {
        let row = |kind, old, new| Row { kind, old, new, text: line.to_owned() };
        let row = if line.starts_with("--- ") || line.starts_with("+++ ") {
            row(Kind::File, None, None)
        } else if let Some((from, to)) = hunk_starts(line) {
            (old, new) = (from, to);
            row(Kind::Hunk, None, None)
        } else if line.starts_with('+') {
            new += 1;
            row(Kind::Added, None, Some(new - 1))
        } else if line.starts_with('-') {
            old += 1;
            row(Kind::Removed, Some(old - 1), None)
        } else if line.starts_with(' ') {
            (old, new) = (old + 1, new + 1);
            row(Kind::Context, Some(old - 1), Some(new - 1))
        } else {
            row(Kind::Note, None, None)
        };
        rows.push(row);
    }
    rows
}

/// The first line numbers of a hunk header: `@@ -12,3 +14,4 @@` gives (12, 14).
fn hunk_starts(line: &str) -> Option<(usize, usize)> {
    let rest = line.strip_prefix("@@ -")?;
    let (old, rest) = rest.split_once(" +")?;
    let (new, _) = rest.split_once(" @@")?;
    let first = |range: &str| range.split(',').next()?.parse::<usize>().ok();
    Some((first(old)?, first(new)?))
}

/// The style a row is drawn in.
pub fn style(kind: Kind) -> Style {
    match kind {
        Kind::File => theme::DIFF_FILE,
        Kind::Hunk => theme::DIFF_HUNK,
        Kind::Added => theme::DIFF_ADDED,
        Kind::Removed => theme::DIFF_REMOVED,
        Kind::Context => Style::new(),
        Kind::Note => theme::DIM,
    }
}

/// The width of the number columns for `rows`.
pub fn number_width(rows: &[Row]) -> usize {
    let widest = rows.iter().flat_map(|row| [row.old, row.new]).flatten().max().unwrap_or(0);
    widest.to_string().len().max(MIN_NUMBER_WIDTH)
}

/// A row as text: `  12   13 │  text` (numbers blank where the line is not in that file);
/// file headers and hunk headers without the number columns.
pub fn text(row: &Row, numbers: usize) -> String {
    let number =
        |n: Option<usize>| n.map_or_else(|| " ".repeat(numbers), |n| format!("{n:>numbers$}"));
    match row.kind {
        Kind::File | Kind::Hunk | Kind::Note => row.text.clone(),
        _ => format!("{} {} │{}", number(row.old), number(row.new), row.text),
    }
}

/// The call line's tail: ` +3 −1`, each count in its colour.
pub fn counts(diff: &FileDiff) -> Vec<Span<'static>> {
    vec![
        Span::raw(" "),
        Span::styled(format!("+{}", diff.added), theme::DIFF_ADDED),
        Span::raw(" "),
        Span::styled(format!("−{}", diff.removed), theme::DIFF_REMOVED),
    ]
}

/// The diff unfolded under its call in the conversation: at most `max_rows` rows (the file
/// headers left out: the call's line names the file), each cut to `width`, then a line saying
/// how many more the pager shows.
pub fn unfolded(
    diff: &FileDiff,
    width: usize,
    max_rows: usize,
    margin: &str,
) -> Vec<Line<'static>> {
    let rows: Vec<Row> =
        rows(&diff.unified).into_iter().filter(|row| row.kind != Kind::File).collect();
    let numbers = number_width(&rows);
    let room = width.saturating_sub(margin.len());
    let mut lines: Vec<Line<'static>> = rows
        .iter()
        .take(max_rows)
        .map(|row| {
            let shown = text(row, numbers);
            let shown = truncate(&output_line(&shown), room).into_owned();
            Line::from(vec![Span::raw(margin.to_owned()), Span::styled(shown, style(row.kind))])
        })
        .collect();
    if rows.len() > max_rows {
        let note =
            format!("{margin}… {} more lines (Ctrl+G shows the whole diff)", rows.len() - max_rows);
        lines.push(Line::styled(truncate(&note, width).into_owned(), theme::DIM));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_line_gets_its_numbers_before_and_after() {
        let diff = FileDiff::new("app.py", Some(b"a\nb\nc\n"), Some(b"a\nB\nc\nd\n"));
        let rows = rows(&diff.unified);
        let numbered: Vec<(Kind, Option<usize>, Option<usize>)> =
            rows.iter().map(|row| (row.kind, row.old, row.new)).collect();
        assert_eq!(
            numbered,
            vec![
                (Kind::File, None, None),
                (Kind::File, None, None),
                (Kind::Hunk, None, None),
                (Kind::Context, Some(1), Some(1)),
                (Kind::Removed, Some(2), None),
                (Kind::Added, None, Some(2)),
                (Kind::Context, Some(3), Some(3)),
                (Kind::Added, None, Some(4)),
            ]
        );
        assert_eq!(text(&rows[4], 3), "  2     │-b");
        assert_eq!(hunk_starts("@@ -12 +14,4 @@ fn x"), Some((12, 14)));
    }
}
