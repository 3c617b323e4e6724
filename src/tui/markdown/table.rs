//! Markdown tables as aligned columns: the cells of every row are gathered while the table is
//! parsed, then each column is padded to its widest cell, the header set off by a rule —
//!
//! ```text
//! Name  │ Age
//! ──────┼────
//! Alice │  30
//! ```
//!
//! A row wider than the screen breaks between characters, like code: a table's columns mean
//! nothing once its rows are re-flowed as prose.

use super::super::text::width;
use super::super::theme;
use pulldown_cmark::Alignment;
use ratatui::style::{Modifier, Style};
use ratatui::text::Span;

/// Between two cells of a row.
const COLUMN_BAR: &str = " │ ";
/// Under the header: the rule, and where it crosses a column bar.
const RULE: &str = "─";
const CROSSING: &str = "─┼─";

type Cell = Vec<Span<'static>>;

/// A table being parsed.
#[derive(Debug, Default)]
pub(super) struct Table {
    alignments: Vec<Alignment>,
    rows: Vec<Vec<Cell>>,
    /// How many of the rows are the header.
    head: usize,
}

impl Table {
    pub(super) fn new(alignments: Vec<Alignment>) -> Self {
        Self { alignments, ..Self::default() }
    }

    /// A row begins; `head`: it is the header's.
    pub(super) fn start_row(&mut self, head: bool) {
        self.rows.push(Vec::new());
        if head {
            self.head = self.rows.len();
        }
    }

    pub(super) fn start_cell(&mut self) {
        if self.rows.is_empty() {
            self.rows.push(Vec::new());
        }
        if let Some(row) = self.rows.last_mut() {
            row.push(Vec::new());
        }
    }

    /// Text of the cell being parsed.
    pub(super) fn push(&mut self, span: Span<'static>) {
        if self.rows.last().is_none_or(Vec::is_empty) {
            self.start_cell();
        }
        if let Some(cell) = self.rows.last_mut().and_then(|row| row.last_mut()) {
            cell.push(span);
        }
    }

    /// The table's lines: each row with its cells padded to their column, the header bold and
    /// ruled off.
    pub(super) fn lines(self) -> Vec<Vec<Span<'static>>> {
        let columns = self.rows.iter().map(Vec::len).max().unwrap_or(0);
        let cell_width = |cell: &Cell| cell.iter().map(|span| width(&span.content)).sum::<usize>();
        let widths: Vec<usize> = (0..columns)
            .map(|column| {
                self.rows
                    .iter()
                    .filter_map(|row| row.get(column))
                    .map(cell_width)
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let mut lines = Vec::new();
        for (index, row) in self.rows.into_iter().enumerate() {
            let head = index < self.head;
            let mut line = Vec::new();
            for (column, &room) in widths.iter().enumerate() {
                if column > 0 {
                    line.push(Span::styled(COLUMN_BAR, theme::GUTTER));
                }
                let cell = row.get(column).cloned().unwrap_or_default();
                let slack = room.saturating_sub(cell_width(&cell));
                let (before, after) = match self.alignments.get(column) {
                    Some(Alignment::Right) => (slack, 0),
                    Some(Alignment::Center) => (slack / 2, slack - slack / 2),
                    _ => (0, slack),
                };
                let last = column + 1 == widths.len();
                line.push(Span::raw(" ".repeat(before)));
                let bold = Style::new().add_modifier(Modifier::BOLD);
                line.extend(
                    cell.into_iter().map(|span| if head { span.patch_style(bold) } else { span }),
                );
                if !last {
                    line.push(Span::raw(" ".repeat(after)));
                }
            }
            lines.push(line);
            if index + 1 == self.head {
                let rule: Vec<String> = widths.iter().map(|room| RULE.repeat(*room)).collect();
                lines.push(vec![Span::styled(rule.join(CROSSING), theme::GUTTER)]);
            }
        }
        lines
    }
}
