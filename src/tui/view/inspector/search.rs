//! Search in the history inspector: the line typed after `/`, the hits of the committed query in
//! every message's text, and which one the view jumped to.

use super::text::{Highlight, MessageText, find_all};
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// Share of the view kept above a search hit when jumping to it, in percent.
const HIT_CONTEXT_PERCENT: usize = 30;

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

    /// Pasted text goes into the open search line (control characters left out).
    pub fn paste(&mut self, text: &str) {
        if let Some(input) = &mut self.input {
            input.extend(text.chars().filter(|c| !c.is_control()));
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

    /// Rows of a view `rows` high kept above the hit it jumps to.
    pub fn context_rows(rows: usize) -> usize {
        rows * HIT_CONTEXT_PERCENT / 100
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
