//! The request inspector (Ctrl+T / F2): the whole body of the last request sent — parameters,
//! system prompt, tools, then every message — exactly as it went on the wire and titled with when
//! (`wire`); before anything is sent, a preview of the next, labelled so. It is laid out part by
//! part in the wire's own order, long parts folded to their first lines (`o` unfolds), with search
//! (`search`) that finds folded text too.
//!
//! Each part's text is made only when it is drawn or searched, and kept (`text`), and its
//! rows are laid out by a `LazyList` like the conversation's, so opening the inspector on 10,000
//! messages lays out only the few on screen.

pub(super) mod search;
pub mod text;
mod wire;

use super::conversation::WHEEL_LINES;
use super::{BORDER_CELLS, pane};
use crate::agent::Snapshot;
use crate::llm::WireFormat;
use crate::tui::keymap::{Binding, KeySpec, Motion, ScrollRows, scrolling_keys};
use crate::tui::lazy_list::{LazyList, is_extension};
use crate::tui::stack::{Ctx, Hints, View};
use crate::tui::text::{truncate, width as text_width};
use crate::tui::theme;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::{Position, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Widget};
use search::{Search, Typed, show_hit};
use text::{Laid, draw_rows};
use wire::{Source, Wired};

/// Where the time of day lies in an RFC 3339 stamp (`2026-01-02T14:03:27Z`).
const TIME_OF_DAY: std::ops::Range<usize> = 11..19;

/// What a key does in the inspector.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Scroll(Motion),
    Search,
    NextHit,
    PreviousHit,
    Fold,
    Close,
}

/// The inspector's keys.
pub const KEYS: &[Binding<Action>] = scrolling_keys![
    Action::Scroll,
    ScrollRows::ends("the top: the request's parameters", "last message (and follow new ones)");
    search: Action::Search, Action::NextHit, Action::PreviousHit;
    Binding {
        keys: &[KeySpec::char('o'), KeySpec::plain(KeyCode::Enter)],
        action: Action::Fold,
        help: "unfold or fold the long parts (system prompt, tools, long results)",
        hint: Some("unfold"),
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

/// The open inspector.
#[derive(Debug)]
pub struct Inspector {
    wired: Wired,
    list: LazyList<Laid>,
    search: Search,
    closed: bool,
}

impl Inspector {
    /// Opens on the last request `snapshot` says was sent (or a preview of the next), long parts
    /// folded, showing its end.
    pub fn open(snapshot: &Snapshot) -> Self {
        Self {
            wired: Wired::of(snapshot, true),
            list: LazyList::default(),
            search: Search::default(),
            closed: false,
        }
    }

    /// Takes in a newer snapshot; reads the request again only when another was sent (or, for a
    /// preview, when something it carries changed), staying where the view is when it only grew.
    pub fn update(&mut self, snapshot: &Snapshot) {
        if self.wired.same_as(snapshot) {
            return;
        }
        let (was_sent, messages) = (self.wired.source != Source::Preview, self.wired.messages);
        let preview_grew = !was_sent
            && snapshot.last_sent.is_none()
            && is_extension(&self.wired.history, &snapshot.history);
        self.wired = Wired::of(snapshot, self.wired.folded);
        let appended = preview_grew
            || (was_sent
                && self.wired.source != Source::Preview
                && self.wired.messages >= messages);
        // Cache marks move to the newest messages as the history grows: every part may change.
        self.list.invalidate_from(0, appended);
        if self.search.has_query() {
            let current = self.search.current.filter(|_| appended);
            self.find();
            self.search.current = current.filter(|index| *index < self.search.hits.len());
        }
    }

    /// The bytes of the body the inspector holds: those sent, or the preview's.
    pub fn body_bytes(&self) -> &[u8] {
        self.wired.bytes()
    }

    /// The body as the inspector shows it, every part unfolded and its layout taken away: for a
    /// request that was sent, the bytes that went on the wire.
    pub fn shown_body(&self) -> String {
        self.wired.shown_json()
    }

    /// Whether it shows a request that was sent (not a preview of the next).
    pub fn shows_sent(&self) -> bool {
        self.wired.source != Source::Preview
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
        match action {
            Action::Scroll(motion) => self.list.go(&self.wired, motion),
            Action::Search => self.search.open(),
            Action::NextHit => self.step_hit(true),
            Action::PreviousHit => self.step_hit(false),
            Action::Fold => self.set_folded(!self.wired.folded),
            Action::Close => self.closed = true,
        }
    }

    fn set_folded(&mut self, folded: bool) {
        self.wired.folded = folded;
        self.list.invalidate_from(0, true);
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
        self.search.find(wired.parts.len(), |block| wired.keep_text(block));
    }

    /// Jumps to the first hit at or after the top of the view (or before it, backwards).
    fn jump_from_view(&mut self, forward: bool) {
        let top = self.list.top_block(&self.wired);
        if let Some(index) = self.search.first_from(top, forward) {
            self.go_to_hit(index);
        }
    }

    fn step_hit(&mut self, forward: bool) {
        let (list, wired) = (&mut self.list, &self.wired);
        if let Some(index) = self.search.next_from(|| list.top_block(wired), forward) {
            self.go_to_hit(index);
        }
    }

    fn go_to_hit(&mut self, index: usize) {
        let Some(hit) = self.search.select(index) else {
            return;
        };
        if self.wired.hides(hit.block, hit.line) {
            self.set_folded(false);
        }
        show_hit(hit, (&mut self.list, &self.wired));
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
        let messages = format!("{} messages", self.wired.messages);
        let source = match self.wired.source {
            Source::Sent(at) => format!("sent {}", clock(at)),
            Source::Preview => "preview, not sent yet".to_owned(),
        };
        let title =
            fitted_title(" Request", &[&source, format, &messages], usize::from(screen.width));
        let footer = self.footer(usize::from(screen.width)).unwrap_or_else(|| {
            let hint =
                if self.wired.folded { " o unfold · Esc close " } else { " o fold · Esc close " };
            let hint =
                if text_width(hint) + 2 <= usize::from(screen.width) { hint } else { " Esc " };
            Line::styled(hint, theme::DIM).right_aligned()
        });
        let block = pane(title, true).title_bottom(footer);
        let inner = block.inner(screen);
        block.render(screen, buf);
        if inner.is_empty() {
            return;
        }
        let plain = |_| Style::default();
        draw_rows((&self.list, &self.wired), &self.search, plain, inner, buf);
    }

    /// The bottom border: the search line while typing, else the search's result.
    fn footer(&self, width: usize) -> Option<Line<'static>> {
        let room = width.saturating_sub(BORDER_CELLS);
        self.search.input_line(room).or_else(|| {
            let text = self.search.result()?;
            Some(Line::styled(truncate(&text, room).into_owned(), theme::DIM).right_aligned())
        })
    }
}

impl View for Inspector {
    type Action = Action;
    const KEYS: &'static [Binding<Action>] = KEYS;

    fn act(&mut self, action: Action, _ctx: &mut Ctx<'_>) {
        Inspector::act(self, action);
    }

    /// While the search line is open every key types into it.
    fn typing(&self) -> bool {
        self.is_typing()
    }

    fn typed(&mut self, key: &KeyEvent, _ctx: &mut Ctx<'_>) {
        self.type_key(key);
    }

    fn paste(&mut self, text: &str, _ctx: &mut Ctx<'_>) -> bool {
        self.search.paste(text)
    }

    fn wheel(&mut self, up: bool, _at: Position, _ctx: &mut Ctx<'_>) -> bool {
        self.scroll_by(up, WHEEL_LINES);
        true
    }

    /// The way out first: a narrow status bar keeps the first hints and drops the rest.
    fn hints(&self, _ctx: &Ctx<'_>) -> Hints {
        self.search.hints(KEYS)
    }

    fn is_done(&self) -> bool {
        self.is_closed()
    }
}

/// The time of day of `at` in UTC, to the second: `14:03:27 UTC`.
fn clock(at: std::time::SystemTime) -> String {
    let stamp = humantime::format_rfc3339_seconds(at).to_string();
    let time = stamp.get(TIME_OF_DAY).unwrap_or(&stamp);
    format!("{time} UTC")
}

fn format_name(format: WireFormat) -> &'static str {
    match format {
        WireFormat::Anthropic => "Anthropic Messages",
        WireFormat::OpenAi => "OpenAI Chat Completions",
    }
}

/// `lead` and then as many of `parts` as fit in a border `width` wide, joined by ` · `: whole
/// parts are dropped from the end, never cut mid-word.
fn fitted_title(lead: &str, parts: &[&str], width: usize) -> Line<'static> {
    let room = width.saturating_sub(4);
    let mut spans = vec![Span::styled(format!("{lead} "), theme::TITLE)];
    let mut used = text_width(lead) + 1;
    for part in parts {
        let piece = format!("· {part} ");
        if used + text_width(&piece) > room {
            break;
        }
        used += text_width(&piece);
        spans.push(Span::styled(piece, theme::DIM));
    }
    Line::from(spans)
}

fn inner_area(screen: Rect) -> Rect {
    pane(Line::default(), true).inner(screen)
}
