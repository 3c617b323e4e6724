//! Search in the history inspector and the pager: the line typed after `/`, the hits of the
//! committed query in every message's text, and which one the view jumped to; and what the
//! search shows of itself — its line or its result in the bottom border, its hints.

use super::text::{Highlight, Laid, MessageText, find_all};
use crate::tui::keymap::{Binding, close_first, hints};
use crate::tui::lazy_list::{Blocks, LazyList};
use crate::tui::stack::Hints;
use crate::tui::text::truncate;
use crate::tui::theme;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::text::{Line, Span};

/// Share of the view kept above a search hit when jumping to it, in percent.
const HIT_CONTEXT_PERCENT: usize = 30;
/// The hints while the search line is open.
const TYPING_HINTS: [(&str, &str); 2] = [("Enter", "find"), ("Esc", "cancel")];
/// Cells the search line's ` /` and cursor take beside the text typed.
const INPUT_CHROME: usize = 3;

/// One search hit: bytes `start..end` of line `line` of message `block`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Hit {
    pub block: usize,
    pub line: usize,
    pub start: usize,
    pub end: usize,
}

/// What a key did to the search line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Typed {
    /// Still typing (or the line was closed without searching).
    Editing,
    /// Enter: the query is committed; find its hits.
    Committed,
}

/// The search state.
#[derive(Debug, Clone, Default)]
pub struct Search {
    /// What is being typed after `/`, while the search line is open.
    pub input: Option<String>,
    /// The committed query, lower-cased.
    query: String,
    /// The committed query as typed.
    pub shown: String,
    pub hits: Vec<Hit>,
    pub current: Option<usize>,
}

impl Search {
    /// Opens the search line.
    pub fn open(&mut self) {
        self.input = Some(String::new());
    }

    pub fn is_typing(&self) -> bool {
        self.input.is_some()
    }

    pub fn has_query(&self) -> bool {
        !self.query.is_empty()
    }

    /// A key while the search line is open.
    pub fn type_key(&mut self, key: &KeyEvent) -> Typed {
        let Some(input) = &mut self.input else {
            return Typed::Editing;
        };
        match key.code {
            KeyCode::Esc => self.input = None,
            KeyCode::Enter => {
                self.query = input.to_ascii_lowercase();
                self.shown = std::mem::take(input);
                self.input = None;
                return Typed::Committed;
            }
            KeyCode::Backspace if input.is_empty() => self.input = None,
            KeyCode::Backspace => {
                input.pop();
            }
            KeyCode::Char(c)
                if !key.modifiers.intersects(KeyModifiers::CONTROL | KeyModifiers::ALT) =>
            {
                input.push(c);
            }
            _ => {}
        }
        Typed::Editing
    }

    /// Pasted text goes into the open search line (control characters left out); returns
    /// whether one was open to take it.
    pub fn paste(&mut self, text: &str) -> bool {
        let Some(input) = &mut self.input else { return false };
        input.extend(text.chars().filter(|c| !c.is_control()));
        true
    }

    /// The hints of a view that searches: the search line's while it is open, else the view's
    /// `keys`, the way out first.
    pub fn hints<A>(&self, keys: &[Binding<A>]) -> Hints {
        if self.is_typing() {
            TYPING_HINTS.iter().map(|(keys, hint)| ((*keys).to_owned(), *hint)).collect()
        } else {
            close_first(hints(keys))
        }
    }

    /// The search line while it is open, for the bottom border: ` /text█ `, cut to `room`.
    pub fn input_line(&self, room: usize) -> Option<Line<'static>> {
        let input = self.input.as_ref()?;
        let typed = truncate(input, room.saturating_sub(INPUT_CHROME)).into_owned();
        Some(Line::from(vec![Span::styled(" /", theme::KEY), Span::raw(format!("{typed}█ "))]))
    }

    /// What the committed query found, for the bottom border: ` no match for “x” ` or
    /// ` “x” 2/5 `; `None` before any.
    pub fn result(&self) -> Option<String> {
        let query = &self.shown;
        if query.is_empty() {
            None
        } else if self.hits.is_empty() {
            Some(format!(" no match for “{query}” "))
        } else {
            let current = self.current.map_or(0, |index| index + 1);
            Some(format!(" “{query}” {current}/{} ", self.hits.len()))
        }
    }

    /// Finds every hit of the committed query, in message order; `text` gives each message.
    pub fn find(
        &mut self,
        count: usize,
        mut text: impl FnMut(usize) -> std::sync::Arc<MessageText>,
    ) {
        self.hits.clear();
        self.current = None;
        if self.query.is_empty() {
            return;
        }
        for block in 0..count {
            let text = text(block);
            for (line, text_line) in text.lines.iter().enumerate() {
                for (start, end) in find_all(&text_line.text, &self.query) {
                    self.hits.push(Hit { block, line, start, end });
                }
            }
        }
    }

    /// The first hit at or after message `top` (or, backwards, at or before it).
    pub fn first_from(&self, top: usize, forward: bool) -> Option<usize> {
        if self.hits.is_empty() {
            return None;
        }
        Some(if forward {
            self.hits.iter().position(|hit| hit.block >= top).unwrap_or(0)
        } else {
            self.hits.iter().rposition(|hit| hit.block <= top).unwrap_or(self.hits.len() - 1)
        })
    }

    /// The hit a jump goes to: after (or before) the current one, or, with none current, the
    /// first from message `top()` (the view's top, found only then).
    pub fn next_from(&self, top: impl FnOnce() -> usize, forward: bool) -> Option<usize> {
        self.step(forward).or_else(|| self.first_from(top(), forward))
    }

    /// Makes hit `index` the current one; returns it.
    pub fn select(&mut self, index: usize) -> Option<Hit> {
        let hit = self.hits.get(index).copied()?;
        self.current = Some(index);
        Some(hit)
    }

    /// The hit after (or before) the current one, wrapping around; `None` without a current one.
    pub fn step(&self, forward: bool) -> Option<usize> {
        let count = self.hits.len();
        let current = self.current.filter(|_| count > 0)?;
        Some(if forward { (current + 1) % count } else { (current + count - 1) % count })
    }

    /// The highlights on line `line` of message `block`.
    pub fn highlights(&self, block: usize, line: usize) -> Vec<Highlight> {
        if self.hits.is_empty() {
            return Vec::new();
        }
        let first = self.hits.partition_point(|hit| (hit.block, hit.line) < (block, line));
        self.hits[first..]
            .iter()
            .enumerate()
            .take_while(|(_, hit)| hit.block == block && hit.line == line)
            .map(|(offset, hit)| Highlight {
                start: hit.start,
                end: hit.end,
                current: self.current == Some(first + offset),
            })
            .collect()
    }
}

/// Scrolls `list` to the row of `hit`, with some of the view kept above it for context.
pub fn show_hit<B: Blocks<Laid = Laid>>(hit: Hit, (list, blocks): (&mut LazyList<Laid>, &B)) {
    let row = list.laid(blocks, hit.block).map_or(0, |(_, rows)| {
        rows.iter()
            .position(|row| row.line == hit.line && hit.start < row.end.max(row.start + 1))
            .unwrap_or(0)
    });
    let context = list.viewport().1 * HIT_CONTEXT_PERCENT / 100;
    list.show(blocks, hit.block, row, context);
}
