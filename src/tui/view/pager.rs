//! The output pager (Ctrl+G / F3): the whole output keel kept of one tool call, not only the
//! tail the tool pane has room for — for an applied write or edit, with the file's diff after
//! it, coloured and numbered (`diff_lines`); `/diff` opens it on a prompt's changes, the board
//! on an item's last check — scrollable, with search (`/`, `n`, `N`) and `[` / `]` to step
//! to the call before or after.
//!
//! Each line of the output is one block of a `LazyList`: the output is indexed once (where each
//! line starts), and a line is cleaned and broken into rows only when it is on screen or
//! scrolled past, so opening it on 50,000 lines lays out the screenful shown. Search makes each
//! line's text once, when a query is committed.

use super::super::keymap::{Binding, KeySpec, Motion, ScrollRows, scrolling_keys};
use super::super::lazy_list::LazyList;
use super::super::stack::{Ctx, Hints, View};
use super::super::text::{first_line, truncate, width as text_width};
use super::super::theme;
use super::board::marks::Clock;
use super::conversation::WHEEL_LINES;
use super::inspector::search::{Search, Typed, show_hit};
use super::inspector::text::{Laid, draw_rows};
use super::{BORDER_CELLS, pane};
use crate::agent::{CheckRecord, Snapshot, ToolRun, TurnDiff};
use crate::tools::names::screen_name;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::{Position, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Widget};
use std::sync::Arc;

/// What a key does in the pager.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Scroll(Motion),
    Search,
    NextHit,
    PreviousHit,
    PreviousCall,
    NextCall,
    Close,
}

/// A page up, and `b` as in `less`.
const PAGE_UP: &[KeySpec] = &[KeySpec::plain(KeyCode::PageUp), KeySpec::char('b')];

/// The hint for `[`, which a check's view, with no calls to step to, leaves out.
const CALL_BEFORE: &str = "call before";

/// The pager's keys.
pub const KEYS: &[Binding<Action>] = scrolling_keys![
    Action::Scroll,
    ScrollRows {
        page_up: PAGE_UP,
        ..ScrollRows::ends("the first line", "the last line (and follow a running command)")
    };
    search: Action::Search, Action::NextHit, Action::PreviousHit;
    Binding {
        keys: &[KeySpec::char('[')],
        action: Action::PreviousCall,
        help: "the tool call before",
        hint: Some(CALL_BEFORE),
    },
    Binding {
        keys: &[KeySpec::char(']')],
        action: Action::NextCall,
        help: "the tool call after",
        hint: None,
    },
    Binding {
        keys: &[KeySpec::plain(KeyCode::Esc), KeySpec::char('q'), KeySpec::ctrl('g')],
        action: Action::Close,
        help: "close the output",
        hint: Some("close"),
    },
];

mod check;
mod output;

use output::Output;

/// The open pager.
#[derive(Debug)]
pub struct Pager {
    /// Which call is shown: its id.
    id: String,
    output: Output,
    list: LazyList<Laid>,
    search: Search,
    closed: bool,
    /// The board item whose last check is shown, the record shown, and the clock it is read on.
    check: Option<(String, Arc<CheckRecord>, Clock)>,
}

impl Pager {
    /// Opens on the newest call of `snapshot`'s tool pane, at its first line; `None` when no
    /// tool has run.
    pub fn open(snapshot: &Snapshot) -> Option<Self> {
        let run = snapshot.tools.back()?;
        Some(Self::on(Arc::clone(run), snapshot))
    }

    /// Opens on the changes `/diff` asked for.
    pub fn turn_diff(changes: &TurnDiff) -> Self {
        Self::showing(Output::document(changes))
    }

    /// Opens on board item `item`'s last check.
    pub fn check(item: &str, record: &Arc<CheckRecord>, clock: Clock) -> Self {
        let mut pager = Self::showing(Output::check(item, record, clock));
        pager.check = Some((item.to_owned(), Arc::clone(record), clock));
        pager
    }

    fn on(run: Arc<ToolRun>, snapshot: &Snapshot) -> Self {
        let diff = snapshot.call_diffs.get(&run.id).map(Arc::as_ref);
        Self::showing(Output::of(run, diff))
    }

    fn showing(output: Output) -> Self {
        let mut list = LazyList::default();
        list.top(&output);
        let id = output.run.as_ref().map(|run| run.id.clone()).unwrap_or_default();
        Self { id, output, list, search: Search::default(), closed: false, check: None }
    }

    /// Takes in a newer snapshot: the output of a running call grows where the view is.
    pub fn update(&mut self, snapshot: &Snapshot) {
        if let Some((item, shown, clock)) = &self.check {
            // A running check that ends, or the next run, replaces the one shown.
            if let Some(record) = snapshot.checks.get(item).filter(|now| !Arc::ptr_eq(now, shown)) {
                let next = Self::check(item, record, *clock);
                self.replace_keeping_search(next);
            }
            return;
        }
        let Some(run) = snapshot.tools.iter().find(|run| run.id == self.id) else {
            return;
        };
        let diff = snapshot.call_diffs.get(&run.id).map(Arc::as_ref);
        let diffed = self.output.styles.is_empty() == diff.is_none();
        if self.output.run.as_ref().is_some_and(|shown| Arc::ptr_eq(shown, run)) && diffed {
            return;
        }
        self.output = Output::of(Arc::clone(run), diff);
        self.list.invalidate_from(0, true);
        if self.search.has_query() {
            self.find();
        }
    }

    /// How many lines the output has.
    pub fn line_count(&self) -> usize {
        self.output.lines.len()
    }

    /// How many lines have been laid out: those on screen or scrolled past.
    pub fn laid_out(&self) -> usize {
        self.list.laid_out()
    }

    pub fn is_closed(&self) -> bool {
        self.closed
    }

    pub fn hit_count(&self) -> usize {
        self.search.hits.len()
    }

    /// Applies a key's action; `snapshot` holds the calls `[` and `]` step through.
    pub fn act(&mut self, action: Action, snapshot: &Snapshot) {
        match action {
            Action::Scroll(motion) => self.list.go(&self.output, motion),
            Action::Search => self.search.open(),
            Action::NextHit => self.step_hit(true),
            Action::PreviousHit => self.step_hit(false),
            Action::PreviousCall => self.step_call(snapshot, false),
            Action::NextCall => self.step_call(snapshot, true),
            Action::Close => self.closed = true,
        }
    }

    /// A key while the search line is open.
    pub fn type_key(&mut self, key: &KeyEvent) {
        if self.search.type_key(key) == Typed::Committed {
            self.find();
            let top = self.list.top_block(&self.output);
            if let Some(index) = self.search.first_from(top, true) {
                self.go_to_hit(index);
            }
        }
    }

    fn step_call(&mut self, snapshot: &Snapshot, forward: bool) {
        let Some(at) = snapshot.tools.iter().position(|run| run.id == self.id) else {
            return;
        };
        let next = if forward { at.checked_add(1) } else { at.checked_sub(1) };
        if let Some(run) = next.and_then(|next| snapshot.tools.get(next)) {
            self.replace_keeping_search(Self::on(Arc::clone(run), snapshot));
        }
    }

    /// Shows what `next` shows, the search typed so far kept and run on it.
    fn replace_keeping_search(&mut self, next: Self) {
        let search = std::mem::take(&mut self.search);
        *self = next;
        self.search = search;
        if self.search.has_query() {
            self.find();
        }
    }

    fn find(&mut self) {
        let output = &self.output;
        self.search.find(output.lines.len(), |line| output.text(line));
    }

    fn step_hit(&mut self, forward: bool) {
        let (list, output) = (&mut self.list, &self.output);
        if let Some(index) = self.search.next_from(|| list.top_block(output), forward) {
            self.go_to_hit(index);
        }
    }

    fn go_to_hit(&mut self, index: usize) {
        if let Some(hit) = self.search.select(index) {
            show_hit(hit, (&mut self.list, &self.output));
        }
    }

    /// Lays out what the next frame at `screen` shows.
    pub fn prepare(&mut self, screen: Rect) {
        let inner = pane(Line::default(), true).inner(screen);
        self.list.prepare(&self.output, usize::from(inner.width), usize::from(inner.height));
    }

    /// Draws the pager over `screen`.
    pub fn render(&self, screen: Rect, buf: &mut Buffer) {
        Clear.render(screen, buf);
        let width = usize::from(screen.width);
        let block = pane(self.title(width), true).title_bottom(self.footer(width));
        let inner = block.inner(screen);
        block.render(screen, buf);
        if inner.is_empty() {
            return;
        }
        let style = |index| self.output.style(index);
        draw_rows((&self.list, &self.output), &self.search, style, inner, buf);
    }

    /// ` bash  seq 1 50000 · 50000 lines `, cut to the border.
    fn title(&self, width: usize) -> Line<'static> {
        let output = &self.output;
        let lines = output.lines.len();
        let tail = format!(" · {lines} line{} ", if lines == 1 { "" } else { "s" });
        let lead = format!(" {} ", screen_name(&output.name));
        let room = width.saturating_sub(4 + text_width(&lead) + text_width(&tail));
        let summary = truncate(&first_line(&output.summary), room).into_owned();
        Line::from(vec![
            Span::styled(lead, theme::TOOL_NAME),
            Span::styled(summary, theme::TITLE),
            Span::styled(tail, theme::DIM),
        ])
    }

    /// The bottom border: the search line while typing, else the search's result or the hint.
    fn footer(&self, width: usize) -> Line<'static> {
        let room = width.saturating_sub(BORDER_CELLS);
        if let Some(line) = self.search.input_line(room) {
            return line;
        }
        let hint = if self.check.is_some() {
            " / search · Esc close "
        } else {
            " / search · [ ] other calls · Esc close "
        };
        let text = self.search.result().unwrap_or_else(|| hint.into());
        let text = if text_width(&text) <= room { text } else { " Esc ".to_owned() };
        Line::styled(text, theme::DIM).right_aligned()
    }
}

impl View for Pager {
    type Action = Action;
    const KEYS: &'static [Binding<Action>] = KEYS;

    fn act(&mut self, action: Action, ctx: &mut Ctx<'_>) {
        Pager::act(self, action, ctx.snapshot);
    }

    /// While the search line is open every key types into it.
    fn typing(&self) -> bool {
        self.search.is_typing()
    }

    fn typed(&mut self, key: &KeyEvent, _ctx: &mut Ctx<'_>) {
        self.type_key(key);
    }

    fn paste(&mut self, text: &str, _ctx: &mut Ctx<'_>) -> bool {
        self.search.paste(text)
    }

    fn wheel(&mut self, up: bool, _at: Position, _ctx: &mut Ctx<'_>) -> bool {
        if up {
            self.list.scroll_up(&self.output, WHEEL_LINES);
        } else {
            self.list.scroll_down(&self.output, WHEEL_LINES);
        }
        true
    }

    fn hints(&self, _ctx: &Ctx<'_>) -> Hints {
        let mut hints = self.search.hints(KEYS);
        if self.check.is_some() {
            hints.retain(|(_, hint)| *hint != CALL_BEFORE);
        }
        hints
    }

    fn is_done(&self) -> bool {
        self.closed
    }
}
