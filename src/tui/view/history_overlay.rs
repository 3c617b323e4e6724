//! The raw history inspector (Ctrl+T / F2): the message history exactly as the provider receives
//! it, one pretty-printed JSON message after another, with search.
//!
//! The history is converted to the wire format once per change (`WireFormat::messages`); each
//! message's text and row breaks are then made only when it is drawn or searched, and cached by
//! message index, so opening the inspector on 10,000 messages lays out only the few on screen.
//! Scrolling uses the same anchors as the conversation (see `scroll`).

use super::super::keymap::{Binding, KeySpec};
use super::super::scroll::{self, Anchor, Heights, Scroll};
use super::super::text::truncate;
use super::super::theme;
use super::conversation::is_extension;
use super::history_text::{Highlight, MessageText, Row, find_all, row_line, rows};
use super::pane;
use crate::agent::Snapshot;
use crate::llm::{WireFormat, WireSpan};
use crate::message::History;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Widget};
use serde_json::Value;
use std::borrow::Cow;
use std::sync::Arc;

/// Share of the view kept above a search hit when jumping to it, in percent.
const HIT_CONTEXT_PERCENT: usize = 30;

/// What a key does in the inspector.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Up,
    Down,
    PageUp,
    PageDown,
    Top,
    Bottom,
    Search,
    NextHit,
    PreviousHit,
    Close,
}

/// The inspector's keys.
pub const KEYS: &[Binding<Action>] = &[
    Binding {
        keys: &[KeySpec::char('j'), KeySpec::plain(KeyCode::Down)],
        action: Action::Down,
        help: "scroll down",
        hint: Some("scroll"),
    },
    Binding {
        keys: &[KeySpec::char('k'), KeySpec::plain(KeyCode::Up)],
        action: Action::Up,
        help: "scroll up",
        hint: Some("scroll"),
    },
    Binding {
        keys: &[KeySpec::plain(KeyCode::PageUp)],
        action: Action::PageUp,
        help: "up a page",
        hint: None,
    },
    Binding {
        keys: &[KeySpec::plain(KeyCode::PageDown), KeySpec::char(' ')],
        action: Action::PageDown,
        help: "down a page",
        hint: None,
    },
    Binding {
        keys: &[KeySpec::char('g'), KeySpec::plain(KeyCode::Home)],
        action: Action::Top,
        help: "first message",
        hint: None,
    },
    Binding {
        keys: &[KeySpec::char('G'), KeySpec::plain(KeyCode::End)],
        action: Action::Bottom,
        help: "last message (and follow new ones)",
        hint: None,
    },
    Binding {
        keys: &[KeySpec::char('/')],
        action: Action::Search,
        help: "search (Enter to find, Esc to cancel)",
        hint: Some("search"),
    },
    Binding {
        keys: &[KeySpec::char('n')],
        action: Action::NextHit,
        help: "next match",
        hint: Some("next"),
    },
    Binding {
        keys: &[KeySpec::char('N')],
        action: Action::PreviousHit,
        help: "previous match",
        hint: None,
    },
    Binding {
        keys: &[
            KeySpec::plain(KeyCode::Esc),
            KeySpec::char('q'),
            KeySpec::ctrl('t'),
            KeySpec::plain(KeyCode::F(2)),
        ],
        action: Action::Close,
        help: "close the inspector",
        hint: Some("close"),
    },
];

/// One search hit: bytes `start..end` of line `line` of message `block`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Hit {
    block: usize,
    line: usize,
    start: usize,
    end: usize,
}

#[derive(Debug, Clone, Default)]
struct Search {
    /// What is being typed after `/`, while the search line is open.
    input: Option<String>,
    /// The committed query, lower-cased.
    query: String,
    /// The committed query as typed.
    shown: String,
    hits: Vec<Hit>,
    current: Option<usize>,
}

/// The open inspector.
/// The messages as the provider receives them.
#[derive(Debug)]
enum Wire {
    /// Given already converted.
    Values(Vec<Value>),
    /// Converted from the overlay's history one by one, when first shown or searched: opening
    /// the inspector on 10,000 messages only locates them.
    Spans(Vec<WireSpan>),
}

impl Wire {
    fn len(&self) -> usize {
        match self {
            Self::Values(values) => values.len(),
            Self::Spans(spans) => spans.len(),
        }
    }
}

#[derive(Debug)]
pub struct HistoryOverlay {
    history: History,
    system: Arc<str>,
    format: WireFormat,
    wire: Wire,
    texts: Vec<Option<Arc<MessageText>>>,
    rows_width: usize,
    rows: Vec<Option<Vec<Row>>>,
    scroll: Scroll,
    viewport: (usize, usize),
    search: Search,
}

impl HistoryOverlay {
    /// Opens on `snapshot`'s history, showing its end.
    pub fn open(snapshot: &Snapshot) -> Self {
        let spans = snapshot.wire_format.spans(&snapshot.system_prompt, &snapshot.history);
        let mut overlay = Self::with(Wire::Spans(spans), snapshot.wire_format);
        overlay.history = snapshot.history.clone();
        overlay.system = Arc::clone(&snapshot.system_prompt);
        overlay
    }

    /// Opens on messages already in `format`'s wire shape.
    pub fn from_wire(wire: Vec<Value>, format: WireFormat) -> Self {
        Self::with(Wire::Values(wire), format)
    }

    fn with(wire: Wire, format: WireFormat) -> Self {
        Self {
            history: History::new(),
            system: Arc::from(""),
            format,
            texts: vec![None; wire.len()],
            rows: vec![None; wire.len()],
            wire,
            rows_width: 0,
            scroll: Scroll::Bottom,
            viewport: (80, 20),
            search: Search::default(),
        }
    }

    /// Takes in a newer snapshot; converts again only when the history changed. Messages that an
    /// append cannot have changed keep their cached text.
    pub fn update(&mut self, snapshot: &Snapshot) {
        if self.history.ptr_eq(&snapshot.history)
            && self.format == snapshot.wire_format
            && self.system == snapshot.system_prompt
        {
            return;
        }
        let appended = is_extension(&self.history, &snapshot.history)
            && self.format == snapshot.wire_format
            && self.system == snapshot.system_prompt;
        let wire =
            Wire::Spans(snapshot.wire_format.spans(&snapshot.system_prompt, &snapshot.history));
        // The last message may have been merged with what followed it (Anthropic joins user turns).
        let keep = if appended { self.wire.len().saturating_sub(1).min(wire.len()) } else { 0 };
        self.texts.truncate(keep);
        self.texts.resize(wire.len(), None);
        self.rows.truncate(keep);
        self.rows.resize(wire.len(), None);
        self.wire = wire;
        self.history = snapshot.history.clone();
        self.system = Arc::clone(&snapshot.system_prompt);
        self.format = snapshot.wire_format;
        if !appended {
            self.scroll = Scroll::Bottom;
        }
        if !self.search.query.is_empty() {
            // Hits are in message order and earlier messages did not change: the one jumped to
            // keeps its index.
            let current = self.search.current.filter(|_| appended);
            self.find();
            self.search.current = current.filter(|index| *index < self.search.hits.len());
        }
    }

    /// How many messages have been laid out: those on screen or scrolled past, not all of them.
    pub fn laid_out(&self) -> usize {
        self.rows.iter().filter(|rows| rows.is_some()).count()
    }

    /// Whether the search line is open (keys then type into it).
    pub fn is_typing(&self) -> bool {
        self.search.input.is_some()
    }

    pub fn hit_count(&self) -> usize {
        self.search.hits.len()
    }

    /// The index of the hit jumped to, if any.
    pub fn current_hit(&self) -> Option<usize> {
        self.search.current
    }

    /// A key while the search line is open.
    pub fn type_key(&mut self, key: KeyEvent) {
        let Some(input) = &mut self.search.input else {
            return;
        };
        match key.code {
            KeyCode::Esc => self.search.input = None,
            KeyCode::Enter => {
                let query = input.to_ascii_lowercase();
                self.search.shown = std::mem::take(input);
                self.search.input = None;
                self.search.query = query;
                self.find();
                self.jump_from_view(true);
            }
            KeyCode::Backspace => {
                if input.is_empty() {
                    self.search.input = None;
                } else {
                    input.pop();
                }
            }
            KeyCode::Char(c)
                if !key.modifiers.intersects(KeyModifiers::CONTROL | KeyModifiers::ALT) =>
            {
                input.push(c);
            }
            _ => {}
        }
    }

    /// Applies a key; returns false when the inspector should close.
    pub fn act(&mut self, action: Action) -> bool {
        let page = self.viewport.1.saturating_sub(1).max(1);
        match action {
            Action::Up => self.scroll_up(1),
            Action::Down => self.scroll_down(1),
            Action::PageUp => self.scroll_up(page),
            Action::PageDown => self.scroll_down(page),
            Action::Top => {
                let height = self.viewport.1;
                self.scroll = scroll::settle(&mut Filler(self), Anchor::default(), height);
            }
            Action::Bottom => self.scroll = Scroll::Bottom,
            Action::Search => self.search.input = Some(String::new()),
            Action::NextHit => self.step_hit(true),
            Action::PreviousHit => self.step_hit(false),
            Action::Close => return false,
        }
        true
    }

    /// Scrolls by mouse-wheel lines.
    pub fn wheel(&mut self, up: bool, lines: usize) {
        if up {
            self.scroll_up(lines);
        } else {
            self.scroll_down(lines);
        }
    }

    fn scroll_up(&mut self, lines: usize) {
        let height = self.viewport.1;
        let current = self.scroll;
        let mut filler = Filler(self);
        let top = scroll::resolve(&mut filler, current, height);
        let anchor = scroll::up(&mut filler, top, lines);
        self.scroll = scroll::settle(&mut filler, anchor, height);
    }

    fn scroll_down(&mut self, lines: usize) {
        let height = self.viewport.1;
        let current = self.scroll;
        self.scroll = scroll::down(&mut Filler(self), current, lines, height);
    }

    /// Finds every hit of the committed query in every message (making any text not made yet).
    fn find(&mut self) {
        self.search.hits.clear();
        self.search.current = None;
        let query = self.search.query.clone();
        if query.is_empty() {
            return;
        }
        for block in 0..self.wire.len() {
            let text = self.text(block);
            for (line, text_line) in text.lines.iter().enumerate() {
                for (start, end) in find_all(&text_line.text, &query) {
                    self.search.hits.push(Hit { block, line, start, end });
                }
            }
        }
    }

    /// Jumps to the first hit at or after the top of the view (or before it, backwards).
    fn jump_from_view(&mut self, forward: bool) {
        if self.search.hits.is_empty() {
            return;
        }
        let height = self.viewport.1;
        let current = self.scroll;
        let top = scroll::resolve(&mut Filler(self), current, height);
        let index = if forward {
            self.search.hits.iter().position(|hit| hit.block >= top.block).unwrap_or(0)
        } else {
            self.search
                .hits
                .iter()
                .rposition(|hit| hit.block <= top.block)
                .unwrap_or(self.search.hits.len() - 1)
        };
        self.go_to_hit(index);
    }

    fn step_hit(&mut self, forward: bool) {
        let count = self.search.hits.len();
        match self.search.current {
            _ if count == 0 => {}
            None => self.jump_from_view(forward),
            Some(current) => {
                let next =
                    if forward { (current + 1) % count } else { (current + count - 1) % count };
                self.go_to_hit(next);
            }
        }
    }

    fn go_to_hit(&mut self, index: usize) {
        let Some(hit) = self.search.hits.get(index).copied() else {
            return;
        };
        self.search.current = Some(index);
        let row = self
            .block_rows(hit.block)
            .iter()
            .position(|row| row.line == hit.line && hit.start < row.end.max(row.start + 1))
            .unwrap_or(0);
        let context = self.viewport.1 * HIT_CONTEXT_PERCENT / 100;
        let anchor = scroll::up(&mut Filler(self), Anchor { block: hit.block, line: row }, context);
        self.scroll = Scroll::At(anchor);
    }

    fn text(&mut self, block: usize) -> Arc<MessageText> {
        if let Some(Some(text)) = self.texts.get(block) {
            return Arc::clone(text);
        }
        let text = Arc::new(self.make_text(block));
        if let Some(slot) = self.texts.get_mut(block) {
            *slot = Some(Arc::clone(&text));
        }
        text
    }

    fn block_rows(&mut self, block: usize) -> &[Row] {
        if self.rows.get(block).is_some_and(Option::is_none) {
            let text = self.text(block);
            self.rows[block] = Some(rows(&text, self.rows_width));
        }
        self.rows.get(block).and_then(Option::as_deref).unwrap_or_default()
    }

    fn set_width(&mut self, width: usize) {
        if self.rows_width != width {
            self.rows_width = width;
            self.rows.iter_mut().for_each(|rows| *rows = None);
        }
    }

    /// Lays out what the next frame at `screen` shows.
    pub fn prepare(&mut self, screen: Rect) {
        let inner = inner_area(screen);
        let (width, height) = (usize::from(inner.width), usize::from(inner.height));
        self.viewport = (width, height);
        self.set_width(width);
        let current = self.scroll;
        let mut filler = Filler(self);
        let anchor = scroll::resolve(&mut filler, current, height);
        let mut shown = 0;
        let mut block = anchor.block;
        while shown < height + anchor.line && block < filler.count() {
            shown += filler.height(block);
            block += 1;
        }
    }

    /// Draws the inspector over `screen`.
    pub fn render(&self, screen: Rect, buf: &mut Buffer) {
        Clear.render(screen, buf);
        let title = Line::from(vec![
            Span::styled(" History ", theme::TITLE),
            Span::styled(
                format!("· {} messages as sent ({}) ", self.wire.len(), format_name(self.format)),
                theme::DIM,
            ),
        ]);
        let mut block = pane(title, true);
        if let Some(footer) = self.footer(usize::from(screen.width)) {
            block = block.title_bottom(footer);
        }
        let inner = block.inner(screen);
        block.render(screen, buf);
        if inner.is_empty() {
            return;
        }
        let width = usize::from(inner.width);
        let height = usize::from(inner.height);
        let mut reader = Reader { overlay: self, width };
        let anchor = scroll::resolve(&mut reader, self.scroll, height);
        let mut y = inner.y;
        let mut skip = anchor.line;
        for block in anchor.block..self.wire.len() {
            let text = self.text_ref(block);
            let rows = self.rows_ref(block, &text, width);
            for row in rows.iter().skip(skip) {
                if y >= inner.bottom() {
                    return;
                }
                let highlights = self.highlights(block, row.line);
                buf.set_line(inner.x, y, &row_line(&text, *row, &highlights), inner.width);
                y += 1;
            }
            skip = 0;
        }
    }

    /// The bottom border: the search line while typing, else the search's result.
    fn footer(&self, width: usize) -> Option<Line<'static>> {
        let room = width.saturating_sub(2);
        if let Some(input) = &self.search.input {
            let typed = truncate(input, room.saturating_sub(3)).into_owned();
            return Some(Line::from(vec![
                Span::styled(" /", theme::KEY),
                Span::raw(format!("{typed}█ ")),
            ]));
        }
        let query = &self.search.shown;
        let text = if query.is_empty() {
            return None;
        } else if self.search.hits.is_empty() {
            format!(" no match for “{query}” ")
        } else {
            let current = self.search.current.map_or(0, |index| index + 1);
            format!(" “{query}” {current}/{} ", self.search.hits.len())
        };
        Some(Line::styled(truncate(&text, room).into_owned(), theme::DIM).right_aligned())
    }

    fn highlights(&self, block: usize, line: usize) -> Vec<Highlight> {
        if self.search.hits.is_empty() {
            return Vec::new();
        }
        let first = self.search.hits.partition_point(|hit| (hit.block, hit.line) < (block, line));
        self.search.hits[first..]
            .iter()
            .enumerate()
            .take_while(|(_, hit)| hit.block == block && hit.line == line)
            .map(|(offset, hit)| Highlight {
                start: hit.start,
                end: hit.end,
                current: self.search.current == Some(first + offset),
            })
            .collect()
    }

    /// Message `block` laid out as text, converted from the history if need be.
    fn make_text(&self, block: usize) -> MessageText {
        let message = match &self.wire {
            Wire::Values(values) => values.get(block).cloned(),
            Wire::Spans(spans) => spans
                .get(block)
                .and_then(|span| self.format.message_at(&self.system, &self.history, span)),
        };
        message
            .map(|message| MessageText::new(block, &message))
            .unwrap_or(MessageText { lines: Vec::new() })
    }

    fn text_ref(&self, block: usize) -> Arc<MessageText> {
        match self.texts.get(block) {
            Some(Some(text)) => Arc::clone(text),
            _ => Arc::new(self.make_text(block)),
        }
    }

    fn rows_ref(&self, block: usize, text: &MessageText, width: usize) -> Cow<'_, [Row]> {
        match self.rows.get(block) {
            Some(Some(rows)) if self.rows_width == width => Cow::Borrowed(rows),
            _ => Cow::Owned(rows(text, width)),
        }
    }
}

fn format_name(format: WireFormat) -> &'static str {
    match format {
        WireFormat::Anthropic => "Anthropic Messages",
        WireFormat::OpenAi => "OpenAI Chat Completions",
    }
}

fn inner_area(screen: Rect) -> Rect {
    pane(Line::default(), true).inner(screen)
}

/// Heights that fill the caches.
struct Filler<'a>(&'a mut HistoryOverlay);

impl Heights for Filler<'_> {
    fn count(&self) -> usize {
        self.0.wire.len()
    }

    fn height(&mut self, index: usize) -> usize {
        self.0.block_rows(index).len()
    }
}

/// Heights read from the caches, computed on the fly where they are empty.
struct Reader<'a> {
    overlay: &'a HistoryOverlay,
    width: usize,
}

impl Heights for Reader<'_> {
    fn count(&self) -> usize {
        self.overlay.wire.len()
    }

    fn height(&mut self, index: usize) -> usize {
        let text = self.overlay.text_ref(index);
        self.overlay.rows_ref(index, &text, self.width).len()
    }
}
