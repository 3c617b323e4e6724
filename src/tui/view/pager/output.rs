//! What the pager shows, indexed by line: a call's output — for an applied write or edit with
//! the file's diff after it, coloured and numbered — or a document: `/diff`'s of a prompt's
//! changes, or a board item's last check (`check`).
//! Each line is cleaned and broken into rows only when it is laid out (see the pager).

use super::super::super::lazy_list::Blocks;
use super::super::super::theme;
use super::super::diff_lines;
use super::super::inspector::text::{Laid, MessageText, rows};
use crate::agent::{ToolRun, TurnDiff};
use crate::runtime::change::FileDiff;
use ratatui::style::Style;
use std::ops::Range;
use std::sync::Arc;

/// What the pager shows, indexed by line: a call's output — for an applied write or edit, with
/// its diff after it — or a document (`/diff`).
#[derive(Debug, Default)]
pub(super) struct Output {
    /// The call shown (`None`: a document), to tell when it changed.
    pub run: Option<Arc<ToolRun>>,
    /// What the title names: the tool or the document, and the call's summary.
    pub name: String,
    pub summary: String,
    text: Arc<str>,
    /// Where each line lies in the text (without its `\n`).
    pub lines: Vec<Range<usize>>,
    /// The style of each line from the first diff line on (the output before it is plain).
    pub styles: Vec<Style>,
    /// The line the styled part starts at.
    pub(super) styled_from: usize,
}

impl Output {
    /// `run`'s output, followed by `diff` when the call changed a file.
    pub fn of(run: Arc<ToolRun>, diff: Option<&FileDiff>) -> Self {
        let mut text = run.output.to_string();
        let mut styles = Vec::new();
        if let Some(diff) = diff {
            text.push_str("\n\n");
            push_diff(&mut text, &mut styles, diff);
        }
        let (name, summary) = (run.name.clone(), run.summary.clone());
        Self::indexed(Some(run), name, summary, text, styles)
    }

    /// The changes of `/diff`: every file's diff, then what the person should know.
    pub fn document(changes: &TurnDiff) -> Self {
        let (mut text, mut styles) = (String::new(), Vec::new());
        for diff in &changes.diffs {
            push_diff(&mut text, &mut styles, diff);
            text.push('\n');
            styles.push(Style::new());
        }
        for note in &changes.notes {
            text.push_str(note);
            text.push('\n');
            styles.push(theme::DIM);
        }
        let summary = format!(
            "{} file{}",
            changes.diffs.len(),
            if changes.diffs.len() == 1 { "" } else { "s" }
        );
        let mut output = Self::indexed(None, "/diff".to_owned(), summary, text, styles);
        output.styled_from = 0;
        output
    }

    pub(super) fn indexed(
        run: Option<Arc<ToolRun>>,
        name: String,
        summary: String,
        text: String,
        styles: Vec<Style>,
    ) -> Self {
        let mut lines = Vec::new();
        let mut start = 0;
        for (at, _) in text.match_indices('\n') {
            lines.push(start..at);
            start = at + 1;
        }
        if start < text.len() || lines.is_empty() {
            lines.push(start..text.len());
        }
        let styled_from = lines.len().saturating_sub(styles.len());
        Self { run, name, summary, text: text.into(), lines, styles, styled_from }
    }

    pub fn text(&self, index: usize) -> Arc<MessageText> {
        let line = self.lines.get(index).and_then(|range| self.text.get(range.clone()));
        Arc::new(MessageText::plain(line.unwrap_or("")))
    }

    /// The style line `index` is drawn in.
    pub fn style(&self, index: usize) -> Style {
        index
            .checked_sub(self.styled_from)
            .and_then(|at| self.styles.get(at))
            .map_or(theme::RUN_OUTPUT, |style| theme::RUN_OUTPUT.patch(*style))
    }
}

/// Appends `diff`'s lines, numbered, to `text`, and their styles to `styles`.
fn push_diff(text: &mut String, styles: &mut Vec<Style>, diff: &FileDiff) {
    let rows = diff_lines::rows(&diff.unified);
    let numbers = diff_lines::number_width(&rows);
    for row in &rows {
        text.push_str(&diff_lines::text(row, numbers));
        text.push('\n');
        styles.push(diff_lines::style(row.kind));
    }
}

impl Blocks for Output {
    type Laid = Laid;

    fn count(&self) -> usize {
        self.lines.len()
    }

    fn lay_out(&self, index: usize, width: usize) -> Laid {
        let text = self.text(index);
        let rows = rows(&text, width);
        (text, rows)
    }

    fn rows(laid: &Laid) -> usize {
        laid.1.len()
    }
}
