//! The raw history inspector (Ctrl+T / F2): the message history exactly as the provider receives
//! it, one pretty-printed JSON message after another, with search (`history_search`).
//!
//! The history is located in the wire format once per change (`WireFormat::spans`); each
//! message's text is made only when it is drawn or searched, and kept (`history_text`), and its
//! rows are laid out by a `LazyList` like the conversation's, so opening the inspector on 10,000
//! messages lays out only the few on screen.

use super::super::keymap::hints;
use super::super::keymap::{Binding, KeySpec};
use super::super::lazy_list::{LazyList, is_extension};
use super::super::stack::{Ctx, Hints, View};
use super::super::text::truncate;
use super::super::theme;
use super::conversation::WHEEL_LINES;
use super::history_search::{Search, Typed};
use super::history_text::row_line;
use super::history_wire::{Laid, Wired};
use super::pane;
use crate::agent::Snapshot;
use crate::llm::WireFormat;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::{Position, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Widget};

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

/// The hints while the search line is open.
pub const TYPING_HINTS: [(&str, &str); 2] = [("Enter", "find"), ("Esc", "cancel")];

/// The open inspector.
#[derive(Debug)]
pub struct HistoryOverlay {
    wired: Wired,
    list: LazyList<Laid>,
    search: Search,
    closed: bool,
}

impl HistoryOverlay {
    /// Opens on `snapshot`'s history, showing its end.
    pub fn open(snapshot: &Snapshot) -> Self {
        Self {
            wired: Wired::of(snapshot),
            list: LazyList::default(),
            search: Search::default(),
            closed: false,
        }
    }

    /// Takes in a newer snapshot; locates again only when the history changed. Messages that an
    /// append cannot have changed keep their text and layout.
    pub fn update(&mut self, snapshot: &Snapshot) {
        let old = &self.wired;
        let same_wire = old.format == snapshot.wire_format && old.system == snapshot.system_prompt;
        if same_wire && old.history.ptr_eq(&snapshot.history) {
            return;
        }
        let appended = same_wire && is_extension(&old.history, &snapshot.history);
        let mut wired = Wired::of(snapshot);
        // The last message may have been merged with what followed it (Anthropic joins user turns).
        let keep =
            if appended { old.spans.len().saturating_sub(1).min(wired.spans.len()) } else { 0 };
        for (slot, text) in wired.texts.iter_mut().zip(self.wired.texts.drain(..keep)) {
            *slot = text;
        }
        self.wired = wired;
        self.list.invalidate_from(keep, appended);
        if self.search.has_query() {
            // Hits are in message order and earlier messages did not change: the one jumped to
            // keeps its index.
            let current = self.search.current.filter(|_| appended);
            self.find();
            self.search.current = current.filter(|index| *index < self.search.hits.len());
        }
    }

    /// How many messages have been laid out: those on screen or scrolled past, not all of them.
    pub fn laid_out(&self) -> usize {
        self.list.laid_out()
    }

    /// Whether the search line is open (keys then type into it).
    pub fn is_typing(&self) -> bool {
        self.search.is_typing()
    }

    /// Whether the person closed the inspector.
    pub fn is_closed(&self) -> bool {
        self.closed
    }

    pub fn hit_count(&self) -> usize {
        self.search.hits.len()
    }

    /// The index of the hit jumped to, if any.
    pub fn current_hit(&self) -> Option<usize> {
        self.search.current
    }

    /// A key while the search line is open.
    pub fn type_key(&mut self, key: &KeyEvent) {
        if self.search.type_key(key) == Typed::Committed {
            self.find();
            self.jump_from_view(true);
        }
    }

    /// Applies a key's action.
    pub fn act(&mut self, action: Action) {
        let page = self.list.viewport().1.saturating_sub(1).max(1);
        match action {
            Action::Up => self.list.scroll_up(&self.wired, 1),
            Action::Down => self.list.scroll_down(&self.wired, 1),
            Action::PageUp => self.list.scroll_up(&self.wired, page),
            Action::PageDown => self.list.scroll_down(&self.wired, page),
            Action::Top => self.list.top(&self.wired),
            Action::Bottom => self.list.bottom(),
            Action::Search => self.search.open(),
            Action::NextHit => self.step_hit(true),
            Action::PreviousHit => self.step_hit(false),
            Action::Close => self.closed = true,
        }
    }

    /// Scrolls by `lines` (mouse-wheel lines).
    pub fn scroll_by(&mut self, up: bool, lines: usize) {
        if up {
            self.list.scroll_up(&self.wired, lines);
        } else {
            self.list.scroll_down(&self.wired, lines);
        }
    }

    /// Finds every hit of the committed query in every message (making any text not made yet).
    fn find(&mut self) {
        let wired = &mut self.wired;
        self.search.find(wired.spans.len(), |block| wired.keep_text(block));
    }

    /// Jumps to the first hit at or after the top of the view (or before it, backwards).
    fn jump_from_view(&mut self, forward: bool) {
        let top = self.list.top_block(&self.wired);
        if let Some(index) = self.search.first_from(top, forward) {
            self.go_to_hit(index);
        }
    }

    fn step_hit(&mut self, forward: bool) {
        match self.search.step(forward) {
            Some(index) => self.go_to_hit(index),
            None => self.jump_from_view(forward),
        }
    }

    fn go_to_hit(&mut self, index: usize) {
        let Some(hit) = self.search.hits.get(index).copied() else {
            return;
        };
        self.search.current = Some(index);
        let row = self.list.laid(&self.wired, hit.block).map_or(0, |(_, rows)| {
            rows.iter()
                .position(|row| row.line == hit.line && hit.start < row.end.max(row.start + 1))
                .unwrap_or(0)
        });
        let context = self.list.viewport().1 * HIT_CONTEXT_PERCENT / 100;
        self.list.show(&self.wired, hit.block, row, context);
    }

    /// Lays out what the next frame at `screen` shows.
    pub fn prepare(&mut self, screen: Rect) {
        let inner = inner_area(screen);
        self.list.prepare(&self.wired, usize::from(inner.width), usize::from(inner.height));
    }

    /// Draws the inspector over `screen`.
    pub fn render(&self, screen: Rect, buf: &mut Buffer) {
        Clear.render(screen, buf);
        let format = format_name(self.wired.format);
        let title = Line::from(vec![
            Span::styled(" History ", theme::TITLE),
            Span::styled(
                format!("· {} messages as sent ({format}) ", self.wired.spans.len()),
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
        let (width, height) = (usize::from(inner.width), usize::from(inner.height));
        let mut y = inner.y;
        for (index, laid, skip) in self.list.visible(&self.wired, width, height) {
            let (text, rows) = laid.as_ref();
            for row in rows.iter().skip(skip) {
                if y >= inner.bottom() {
                    return;
                }
                let highlights = self.search.highlights(index, row.line);
                buf.set_line(inner.x, y, &row_line(text, *row, &highlights), inner.width);
                y += 1;
            }
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
}

impl View for HistoryOverlay {
    type Action = Action;

    fn keys(&self) -> &'static [Binding<Action>] {
        KEYS
    }

    fn act(&mut self, action: Action, _ctx: &mut Ctx<'_>) {
        HistoryOverlay::act(self, action);
    }

    /// While the search line is open every key types into it.
    fn key(&mut self, key: &KeyEvent, ctx: &mut Ctx<'_>) {
        if self.is_typing() {
            self.type_key(key);
        } else if let Some(action) = super::super::keymap::lookup(KEYS, key) {
            View::act(self, action, ctx);
        }
    }

    fn paste(&mut self, text: &str, _ctx: &mut Ctx<'_>) -> bool {
        let typing = self.is_typing();
        if typing {
            self.search.paste(text);
        }
        typing
    }

    fn wheel(&mut self, up: bool, _at: Position, _ctx: &mut Ctx<'_>) -> bool {
        self.scroll_by(up, WHEEL_LINES);
        true
    }

    fn hints(&self, _ctx: &Ctx<'_>) -> Hints {
        if self.is_typing() {
            TYPING_HINTS.iter().map(|(keys, hint)| ((*keys).to_owned(), *hint)).collect()
        } else {
            hints(KEYS)
        }
    }

    fn is_done(&self) -> bool {
        self.is_closed()
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
