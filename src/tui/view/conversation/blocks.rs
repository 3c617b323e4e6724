//! The conversation's blocks as a `LazyList` lays them out: each block resolved to what it
//! shows (an entry, a note, the text streaming in, a queued prompt), and how each is drawn —
//! a changed file's call with its counts, its mark, and its diff when unfolded.

use super::super::super::lazy_list::Blocks;
use super::super::super::markdown;
use super::super::super::text::{first_line, truncate};
use super::super::super::theme;
use super::super::super::wrap::{Prefix, wrap};
use super::super::diff_lines;
use super::super::entry_lines::{
    Fold, MARGIN, call_mark, layout_entry, one_line, prose, tally_mark,
};
use super::{BlockRef, Content, DIFF_MARGIN, Source, UNFOLDED_DIFF_ROWS};
use crate::agent::{Entry, StreamingText};
use ratatui::text::{Line, Span};

/// The width a call's mark keeps however narrow the line (` ✗ failed · no network`).
const MARK_MIN: usize = 24;

/// A block's content, resolved for layout.
#[derive(Debug, Clone, Copy)]
pub(super) enum Item<'a> {
    Intro(&'a [Line<'static>]),
    Entry(&'a Entry),
    Note(&'a str),
    Streaming(&'a StreamingText),
    Queued(&'a str),
}

impl Item<'_> {
    /// One-line items sit together without a blank line between them.
    fn is_compact(&self) -> bool {
        matches!(
            self,
            Item::Entry(Entry::ToolCall { .. } | Entry::Reminder { .. }) | Item::Queued(_)
        )
    }
}

/// The pane's blocks as a `LazyList` lays them out: the content with the snapshot's tail.
pub(super) struct Laying<'a> {
    pub content: &'a Content,
    pub source: &'a Source<'a>,
}

impl Laying<'_> {
    pub fn item(&self, index: usize) -> Option<Item<'_>> {
        let content = self.content;
        if let Some(block) = content.blocks.get(index) {
            return match *block {
                BlockRef::Intro => Some(Item::Intro(&content.intro)),
                BlockRef::Entry(entry) => self.source.transcript.get(entry).map(Item::Entry),
                BlockRef::Note(note) => content.notes.get(note).map(|text| Item::Note(text)),
            };
        }
        let mut tail = index - content.blocks.len();
        if let Some(text) = self.source.streaming {
            if tail == 0 {
                return Some(Item::Streaming(text));
            }
            tail -= 1;
        }
        self.source.queued.get(tail).map(|text| Item::Queued(text))
    }
}

impl Blocks for Laying<'_> {
    type Laid = Vec<Line<'static>>;

    fn count(&self) -> usize {
        self.content.blocks.len()
            + usize::from(self.source.streaming.is_some())
            + self.source.queued.len()
    }

    fn lay_out(&self, index: usize, width: usize) -> Vec<Line<'static>> {
        let Some(item) = self.item(index) else {
            return Vec::new();
        };
        let previous_compact = index
            .checked_sub(1)
            .and_then(|previous| self.item(previous))
            .is_some_and(|previous| previous.is_compact());
        let mut lines = Vec::new();
        if index > 0 && !(item.is_compact() && previous_compact) {
            lines.push(Line::default());
        }
        match item {
            Item::Streaming(_) if self.content.streaming.width() == width => {
                lines.extend(self.content.streaming.lines().iter().cloned());
            }
            _ => lines.extend(layout_item(item, width, self.content)),
        }
        lines
    }

    fn rows(laid: &Vec<Line<'static>>) -> usize {
        laid.len()
    }

    fn is_stable(&self, index: usize) -> bool {
        index < self.content.blocks.len()
    }
}

fn layout_item(item: Item<'_>, width: usize, content: &Content) -> Vec<Line<'static>> {
    let thinking = content.thinking;
    match item {
        Item::Intro(lines) => {
            lines.iter().flat_map(|line| wrap(&line.spans, width, &Prefix::default())).collect()
        }
        Item::Entry(entry @ Entry::ToolCall { id, name, .. })
            if content.marks.contains_key(id)
                || content.diffs.contains_key(id)
                || content.tallies.contains_key(id) =>
        {
            let diff = content.diffs.get(id);
            let mut tail = diff.map(|diff| diff_lines::counts(diff)).unwrap_or_default();
            match (content.marks.get(id), content.tallies.get(id)) {
                (Some(mark), _) => {
                    // A long mark (a board's reason) takes the room the call leaves, and at
                    // least half the line.
                    let (text, style) = call_mark(name, mark);
                    let call = layout_entry(entry, width, thinking).first().map_or(0, Line::width);
                    let counts: usize = tail.iter().map(Span::width).sum();
                    let room = (width / 2)
                        .max(width.saturating_sub(call + counts))
                        .max(MARK_MIN.min(width));
                    tail.push(Span::styled(truncate(&text, room).into_owned(), style));
                }
                (None, Some(tally)) => tail.push(Span::styled(tally_mark(tally), theme::DIM)),
                (None, None) => {}
            }
            // Laid out narrower by the counts and the mark, which then end its line.
            let room = width.saturating_sub(tail.iter().map(Span::width).sum());
            let mut lines = layout_entry(entry, room, thinking);
            if let Some(first) = lines.first_mut() {
                first.spans.extend(tail);
            }
            let unfolded = (thinking == Fold::Unfolded) != content.flipped.contains(id);
            if let Some(diff) = diff.filter(|_| unfolded) {
                lines.extend(diff_lines::unfolded(diff, width, UNFOLDED_DIFF_ROWS, DIFF_MARGIN));
            }
            lines
        }
        Item::Entry(entry) => layout_entry(entry, width, thinking),
        Item::Note(text) => prose(text, width, "· ", theme::NOTICE),
        Item::Streaming(text) => markdown::render(&text.to_string(), width, MARGIN),
        Item::Queued(text) => vec![one_line(
            vec![Span::styled("⧗ queued  ", theme::QUEUED)],
            &first_line(text),
            theme::QUEUED,
            width,
        )],
    }
}
