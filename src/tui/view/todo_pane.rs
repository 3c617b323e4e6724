//! The pinned task board: every item with its status box, the item in progress with what it is
//! doing, and the `done/total` count with a progress gauge in the title.
//!
//! When the board is taller than its pane, the unfocused pane keeps the item in progress in view;
//! `/todos` gives it the keyboard so the person can scroll it, and Esc gives the keyboard back.

use super::super::keymap::{Binding, KeySpec, lookup};
use super::super::main_view;
use super::super::stack::{Ctx, Effect, View};
use super::super::text::clean_line;
use super::super::theme;
use super::super::wrap::{Prefix, wrap};
use super::{pane, pane_inner, spinner};
use crate::todo::{Status, TodoBoard};
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::{Position, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

/// Cells of the progress gauge in the title.
const GAUGE_CELLS: usize = 10;
const GAUGE_FILLED: &str = "█";
const GAUGE_EMPTY: &str = "░";
/// Indentation of an item's wrapped lines, under its text.
const ITEM_INDENT: &str = "    ";
/// Rows the pane adds around its lines (the border).
const BORDER_ROWS: usize = 2;

/// What a key does to the focused board.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Up,
    Down,
    PageUp,
    PageDown,
    Top,
    Bottom,
    Leave,
}

/// The board's keys while it has the focus (`/todos`).
pub const KEYS: &[Binding<Action>] = &[
    Binding {
        keys: &[KeySpec::char('j'), KeySpec::plain(KeyCode::Down)],
        action: Action::Down,
        help: "scroll the board down",
        hint: Some("scroll"),
    },
    Binding {
        keys: &[KeySpec::char('k'), KeySpec::plain(KeyCode::Up)],
        action: Action::Up,
        help: "scroll the board up",
        hint: Some("scroll"),
    },
    Binding {
        keys: &[KeySpec::plain(KeyCode::PageUp)],
        action: Action::PageUp,
        help: "up a page",
        hint: None,
    },
    Binding {
        keys: &[KeySpec::plain(KeyCode::PageDown)],
        action: Action::PageDown,
        help: "down a page",
        hint: None,
    },
    Binding {
        keys: &[KeySpec::char('g'), KeySpec::plain(KeyCode::Home)],
        action: Action::Top,
        help: "first item",
        hint: None,
    },
    Binding {
        keys: &[KeySpec::char('G'), KeySpec::plain(KeyCode::End)],
        action: Action::Bottom,
        help: "last item",
        hint: None,
    },
    Binding {
        keys: &[KeySpec::plain(KeyCode::Esc), KeySpec::char('q')],
        action: Action::Leave,
        help: "give the keyboard back to the composer",
        hint: Some("back"),
    },
];

/// The pane's own state: focus and, while focused, the scroll offset.
#[derive(Debug, Clone, Default)]
pub struct TodoPane {
    pub focused: bool,
    offset: usize,
    /// Inner size at the last layout, for paging.
    viewport: (usize, usize),
}

impl TodoPane {
    /// Gives the pane the keyboard, starting at the top.
    pub fn focus(&mut self) {
        self.focused = true;
        self.offset = 0;
    }

    /// Remembers the inner size the next frame gives the pane.
    pub fn set_viewport(&mut self, area: Rect) {
        let inner = pane_inner(area);
        self.viewport = (usize::from(inner.width), usize::from(inner.height));
    }

    /// Applies a key (`Leave` gives the focus back).
    pub fn apply(&mut self, board: &TodoBoard, action: Action) {
        let (width, height) = self.viewport;
        let total = lines(board, width, false, 0).len();
        let max = total.saturating_sub(height);
        let page = height.max(1);
        self.offset = match action {
            Action::Up => self.offset.saturating_sub(1),
            Action::Down => self.offset + 1,
            Action::PageUp => self.offset.saturating_sub(page),
            Action::PageDown => self.offset + page,
            Action::Top => 0,
            Action::Bottom => max,
            Action::Leave => {
                self.focused = false;
                self.offset
            }
        }
        .min(max);
    }

    /// Scrolls by mouse-wheel lines; the wheel gives the board the focus, so its offset holds.
    pub fn scroll(&mut self, board: &TodoBoard, up: bool, amount: usize) {
        let (width, height) = self.viewport;
        let max = lines(board, width, false, 0).len().saturating_sub(height);
        self.offset =
            if up { self.offset.saturating_sub(amount) } else { (self.offset + amount).min(max) };
        self.focused = true;
    }

    /// Rows the pane would like at this outer width, border included.
    pub fn desired_rows(board: &TodoBoard, outer_width: u16, busy: bool) -> u16 {
        let width = usize::from(pane_inner(Rect::new(0, 0, outer_width, 1)).width);
        let rows = lines(board, width, busy, 0).len() + BORDER_ROWS;
        u16::try_from(rows).unwrap_or(u16::MAX)
    }

    /// Draws the board into `area`. `busy` animates the spinner at `frame`.
    pub fn render(&self, board: &TodoBoard, area: Rect, buf: &mut Buffer, busy: bool, frame: u64) {
        let block = pane(title(board), self.focused);
        let inner = block.inner(area);
        let content = lines(board, usize::from(inner.width), busy, frame);
        let height = usize::from(inner.height);
        let max = content.len().saturating_sub(height);
        let offset = if self.focused {
            self.offset.min(max)
        } else {
            follow_offset(board, &content, height).min(max)
        };
        let hidden_below = content.len().saturating_sub(offset + height);
        let block = if hidden_below > 0 {
            let note = if self.focused {
                format!(" ↓ {hidden_below} more ")
            } else {
                format!(" ↓ {hidden_below} more · /todos ")
            };
            block.title_bottom(Line::styled(note, theme::DIM).right_aligned())
        } else {
            block
        };
        block.render(area, buf);
        for (row, line) in content.iter().skip(offset).take(height).enumerate() {
            let y = inner.y + u16::try_from(row).unwrap_or(u16::MAX);
            buf.set_line(inner.x, y, line, inner.width);
        }
    }
}

impl View for TodoPane {
    type Action = Action;

    fn keys(&self) -> &'static [Binding<Action>] {
        KEYS
    }

    fn act(&mut self, action: Action, ctx: &mut Ctx<'_>) {
        self.apply(&ctx.snapshot.board, action);
    }

    /// The board has the keyboard only while focused (`/todos`).
    fn has_keyboard(&self) -> bool {
        self.focused
    }

    /// Besides its own keys, the focused board still opens the inspector.
    fn key(&mut self, key: &KeyEvent, ctx: &mut Ctx<'_>) {
        if let Some(action) = lookup(KEYS, key) {
            self.act(action, ctx);
        } else if lookup(main_view::KEYS, key) == Some(main_view::Action::History) {
            ctx.effect(Effect::OpenHistory);
        }
    }

    /// The wheel over the board scrolls it, and gives it the keyboard so the offset holds.
    fn wheel(&mut self, up: bool, at: Position, ctx: &mut Ctx<'_>) -> bool {
        if !ctx.regions.todos.contains(at) {
            return false;
        }
        self.scroll(&ctx.snapshot.board, up, super::conversation::WHEEL_LINES);
        true
    }
}

/// The title: `Todos 2/5` and a gauge.
fn title(board: &TodoBoard) -> Line<'static> {
    let (done, total) = (board.done(), board.total());
    let filled = (done * GAUGE_CELLS).checked_div(total).unwrap_or(0);
    Line::from(vec![
        Span::styled(format!(" Todos {done}/{total} "), theme::TITLE),
        Span::styled(GAUGE_FILLED.repeat(filled), theme::GAUGE_FILLED),
        Span::styled(GAUGE_EMPTY.repeat(GAUGE_CELLS - filled), theme::GAUGE_EMPTY),
        Span::raw(" "),
    ])
}

/// The first row to show when the pane is not focused: the item in progress stays in view (or
/// the first one pending; on a finished board, the end).
fn follow_offset(board: &TodoBoard, content: &[ItemLine], height: usize) -> usize {
    let items = board.items();
    let active = items
        .iter()
        .position(|item| item.status == Status::InProgress)
        .or_else(|| items.iter().position(|item| item.status == Status::Pending))
        .unwrap_or(items.len().saturating_sub(1));
    let first = content.iter().position(|line| line.item == active).unwrap_or(0);
    let last = content.iter().rposition(|line| line.item == active).unwrap_or(first);
    if last < height { 0 } else { (last + 1).saturating_sub(height).min(first) }
}

/// One drawn line and the item it belongs to.
struct ItemLine {
    item: usize,
    line: Line<'static>,
}

impl std::ops::Deref for ItemLine {
    type Target = Line<'static>;
    fn deref(&self) -> &Self::Target {
        &self.line
    }
}

/// The board's lines at `width`.
fn lines(board: &TodoBoard, width: usize, busy: bool, frame: u64) -> Vec<ItemLine> {
    if board.is_empty() {
        return vec![ItemLine { item: 0, line: Line::styled("No todos yet.", theme::DIM) }];
    }
    let mut out = Vec::new();
    for (index, item) in board.items().iter().enumerate() {
        let (marker_style, text_style) = match item.status {
            Status::Pending => (theme::DIM, theme::TODO_PENDING),
            Status::InProgress => (theme::TODO_IN_PROGRESS, theme::TODO_IN_PROGRESS),
            Status::Completed => (theme::TODO_DONE, theme::TODO_DONE),
        };
        let prefix = Prefix {
            first: vec![Span::styled(item.status.marker(), marker_style), Span::raw(" ")],
            rest: vec![Span::raw(ITEM_INDENT)],
        };
        let mut spans = vec![Span::styled(clean_line(&item.text).into_owned(), text_style)];
        if let (Status::InProgress, Some(active)) = (item.status, &item.active_form) {
            let lead = if busy { format!("  {} ", spinner(frame)) } else { "  ← ".to_owned() };
            spans.push(Span::styled(lead, theme::TODO_ACTIVE_FORM));
            spans.push(Span::styled(clean_line(active).into_owned(), theme::TODO_ACTIVE_FORM));
        }
        out.extend(
            wrap(&spans, width, &prefix).into_iter().map(|line| ItemLine { item: index, line }),
        );
    }
    out
}
