//! The pinned task board: every item with its status box and id, the item in progress with what
//! it is doing and how long it has stood still, blocked items dimmed with their blockers, and
//! the `done/total` count with a progress gauge in the title (and `PLAN` in plan mode).
//!
//! When the board is taller than its pane, the unfocused pane keeps the item in progress in view.
//! Only `/todos` gives it the keyboard — never a finished plan or the mouse by itself: then the
//! person selects an item and edits the board with one key each — done or not, remove (asked
//! twice), move, edit, add — approves a plan with Enter (never an empty one), opens the
//! conversation of the child agent that does an item (`o`), and shows an item's last check
//! (Enter or `o`, see `keys`). Every edit is
//! sent to the agent as a `Command::EditBoard`, which validates it like a model's update; Esc
//! gives the keyboard back. The wheel scrolls the board without taking the keyboard.

mod keys;
pub(super) mod lines;
pub mod marks;
mod scroll;

use super::{pane, pane_inner};
use crate::agent::{Command, Snapshot};
use crate::board::{BoardEdit, Status};
use crate::tui::keymap::{Binding, hints, lookup};
use crate::tui::main_view;
use crate::tui::stack::{Ctx, Effect, Hints, View};
use crate::tui::text::width as text_width;
use crate::tui::theme;
pub use keys::{Action, KEYS};
use lines::{ItemLine, Look, lines};
use marks::Clock;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::KeyEvent;
use ratatui::layout::{Position, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;
use scroll::{Hidden, Side, follow_offset, more_mark, showing};

/// Cells of the progress gauge in the title.
const GAUGE_CELLS: usize = 10;
const GAUGE_FILLED: &str = "█";
const GAUGE_EMPTY: &str = "░";
/// Rows the pane adds around its lines (the border), and columns.
const BORDER_ROWS: usize = 2;
/// The widest note a waiting plan puts on the bottom border.
const PLAN_NOTE_WIDTH: usize = 25;

/// The pane's own state: focus and, while focused, the selected item and the scroll offset.
#[derive(Debug, Clone, Default)]
pub struct BoardPane {
    pub focused: bool,
    selected: usize,
    offset: usize,
    /// Inner size at the last layout, for paging.
    viewport: (usize, usize),
    /// The unfocused board was scrolled with the wheel: its offset holds instead of following
    /// the item in progress.
    pinned: bool,
    /// The item `d` was pressed on once: a second `d` removes it, any other key keeps it.
    removing: Option<String>,
    /// The person's clock, for the times of failed checks.
    clock: Clock,
}

impl BoardPane {
    /// An unfocused pane that tells times on `clock`.
    pub fn with_clock(clock: Clock) -> Self {
        Self { clock, ..Self::default() }
    }

    pub fn clock(&self) -> Clock {
        self.clock
    }

    /// Gives the pane the keyboard, on the item in progress (else the first open one).
    pub fn focus(&mut self, snapshot: &Snapshot) {
        let items = snapshot.board.items();
        self.focused = true;
        self.pinned = false;
        self.removing = None;
        self.offset = 0;
        self.selected = items
            .iter()
            .position(|item| item.status == Status::InProgress)
            .or_else(|| items.iter().position(|item| item.status != Status::Completed))
            .unwrap_or(0);
        self.keep_selected_in_view(snapshot);
    }

    /// The selected item, while focused.
    pub fn selected(&self) -> Option<usize> {
        self.focused.then_some(self.selected)
    }

    /// Remembers the inner size the next frame gives the pane.
    pub fn set_viewport(&mut self, area: Rect) {
        let inner = pane_inner(area);
        self.viewport = (usize::from(inner.width), usize::from(inner.height));
    }

    /// Applies a key; edits come back as the command to send.
    pub fn apply(&mut self, snapshot: &Snapshot, action: Action) -> Option<Effect> {
        let items = snapshot.board.items();
        let last = items.len().saturating_sub(1);
        let item = items.get(self.selected.min(last));
        let send = |edit| Some(Effect::Send(Command::EditBoard(edit)));
        let asked = self.removing.take();
        let effect = match action {
            Action::Select(motion) => {
                self.selected = motion.from(self.selected, self.viewport.1.max(1)).min(last);
                None
            }
            Action::ToggleDone => item.and_then(|item| {
                let id = item.id.clone();
                send(if item.status == Status::Completed {
                    BoardEdit::Undo { id }
                } else {
                    BoardEdit::Done { id }
                })
            }),
            // Asked twice: one stray key never removes an item.
            Action::Remove => item.and_then(|item| {
                if asked.as_ref() == Some(&item.id) {
                    send(BoardEdit::Remove { id: item.id.clone() })
                } else {
                    self.removing = Some(item.id.clone());
                    None
                }
            }),
            Action::MoveUp if self.selected > 0 => item.and_then(|item| {
                self.selected -= 1;
                send(BoardEdit::Move { id: item.id.clone(), to: self.selected + 1 })
            }),
            Action::MoveDown if self.selected < last => item.and_then(|item| {
                self.selected += 1;
                send(BoardEdit::Move { id: item.id.clone(), to: self.selected + 1 })
            }),
            Action::MoveUp | Action::MoveDown => None,
            Action::Edit => item.map(|item| {
                self.focused = false;
                Effect::Compose(format!("/todo edit {} {}", item.id, item.text))
            }),
            Action::Add => {
                self.focused = false;
                Some(Effect::Compose("/todo add ".to_owned()))
            }
            Action::Approve if approvable(snapshot) => {
                self.focused = false;
                Some(Effect::Send(Command::ApprovePlan))
            }
            // No plan to approve: the agent says why (none yet, or an empty one).
            Action::Approve => Some(Effect::Send(Command::ApprovePlan)),
            // Only an item a child works (or worked) on has a conversation to open.
            Action::OpenChild => item
                .filter(|item| {
                    let id = Some(item.id.as_str());
                    snapshot.children.iter().any(|child| child.item.as_deref() == id)
                })
                .map(|item| Effect::OpenAgents { item: Some(item.id.clone()) }),
            Action::ShowCheck => item
                .filter(|item| snapshot.checks.contains_key(&item.id))
                .map(|item| Effect::OpenCheck { item: item.id.clone() }),
            Action::Leave => {
                self.focused = false;
                self.pinned = false;
                None
            }
        };
        self.keep_selected_in_view(snapshot);
        effect
    }

    /// Scrolls so that every line of the selected item is in view.
    fn keep_selected_in_view(&mut self, snapshot: &Snapshot) {
        let (width, height) = self.viewport;
        let content = lines(snapshot, self.look(width, false, 0));
        self.offset = showing(self.offset, &content, self.selected, height);
    }

    /// Scrolls by mouse-wheel lines, without taking the keyboard: the offset holds until the
    /// board is focused or scrolled back to its end.
    pub fn scroll(&mut self, snapshot: &Snapshot, up: bool, amount: usize) {
        let (width, height) = self.viewport;
        if !self.focused && !self.pinned {
            let content = lines(snapshot, self.look(width, false, 0));
            self.offset = follow_offset(snapshot, &content, height);
        }
        let max = lines(snapshot, self.look(width, false, 0)).len().saturating_sub(height);
        self.offset =
            if up { self.offset.saturating_sub(amount) } else { (self.offset + amount).min(max) };
        self.pinned = !self.focused && self.offset < max;
    }

    /// The item a first `d` asked about, if the next `d` would remove it.
    pub fn removing(&self) -> Option<&str> {
        self.removing.as_deref().filter(|_| self.focused)
    }

    /// Rows the pane would like at this outer width, border included.
    pub fn desired_rows(&self, snapshot: &Snapshot, outer_width: u16, busy: bool) -> u16 {
        let width = usize::from(pane_inner(Rect::new(0, 0, outer_width, 1)).width);
        let rows = lines(snapshot, self.look(width, busy, 0)).len() + BORDER_ROWS;
        u16::try_from(rows).unwrap_or(u16::MAX)
    }

    fn look(&self, width: usize, busy: bool, frame: u64) -> Look {
        Look { width, busy, frame, selected: self.selected(), clock: self.clock }
    }

    /// Draws the board into `area`. `busy` animates the spinner at `frame`.
    pub fn render(
        &self,
        snapshot: &Snapshot,
        area: Rect,
        buf: &mut Buffer,
        busy: bool,
        frame: u64,
    ) {
        let block = pane(title(snapshot), self.focused);
        let inner = block.inner(area);
        let content = lines(snapshot, self.look(usize::from(inner.width), busy, frame));
        let height = usize::from(inner.height);
        let max = content.len().saturating_sub(height);
        let offset = if self.focused {
            showing(self.offset, &content, self.selected, height).min(max)
        } else if self.pinned {
            self.offset.min(max)
        } else {
            follow_offset(snapshot, &content, height).min(max)
        };
        let hidden = Hidden::of(&content, offset, height);
        let mut block = block;
        if let Some(id) = self.removing() {
            let note = format!(" d again removes #{} ", super::super::text::clean_line(id));
            block = block.title_bottom(Line::styled(note, theme::STATUS_ATTENTION).left_aligned());
        } else if snapshot.plan_ready {
            let note =
                if self.focused { " Enter approves the plan " } else { " plan ready · /todos " };
            block = block.title_bottom(Line::styled(note, theme::STATUS_ATTENTION).left_aligned());
        }
        // Notes on the border take the longest form that fits beside what is there already.
        let room = usize::from(area.width).saturating_sub(BORDER_ROWS);
        let fitting = |taken: usize, forms: Vec<String>| {
            forms.into_iter().find(|form| taken + text_width(form) <= room)
        };
        if hidden.above > 0 {
            let forms = vec![format!(" {} ", more_mark(Side::Above, hidden.above))];
            if let Some(note) = fitting(title(snapshot).width() + 1, forms) {
                block = block.title(Line::styled(note, theme::DIM).right_aligned());
            }
        }
        if hidden.below > 0 {
            let mark = more_mark(Side::Below, hidden.below);
            let mut forms = vec![format!(" {mark} ")];
            if !self.focused {
                forms.insert(0, format!(" {mark} · /todos "));
            }
            let taken = if snapshot.plan_ready { PLAN_NOTE_WIDTH } else { 0 };
            if let Some(note) = fitting(taken, forms) {
                block = block.title_bottom(Line::styled(note, theme::DIM).right_aligned());
            }
        }
        block.render(area, buf);
        let shown: Vec<&ItemLine> = content.iter().skip(offset).take(height).collect();
        for (row, line) in shown.iter().enumerate() {
            let y = inner.y + u16::try_from(row).unwrap_or(u16::MAX);
            buf.set_line(inner.x, y, line, inner.width);
        }
        // An item cut at the bottom edge says so, rather than end mid-sentence.
        if hidden.cut_at_bottom && !shown.is_empty() && inner.width > 0 {
            let y = inner.y + u16::try_from(shown.len() - 1).unwrap_or(u16::MAX);
            let width = shown.last().map_or(0, |line| line.width()).min(usize::from(inner.width));
            let x = inner.x + u16::try_from(width).unwrap_or(u16::MAX).min(inner.width - 1);
            buf.set_string(x, y, "…", theme::DIM);
        }
    }
}

impl View for BoardPane {
    type Action = Action;
    const KEYS: &'static [Binding<Action>] = KEYS;

    fn act(&mut self, action: Action, ctx: &mut Ctx<'_>) {
        if let Some(effect) = self.apply(ctx.snapshot, action) {
            ctx.effect(effect);
        }
    }

    /// The board has the keyboard only while focused (`/todos`).
    fn has_keyboard(&self) -> bool {
        self.focused
    }

    /// Besides its own keys, the focused board still opens the inspector and toggles plan mode.
    fn key(&mut self, key: &KeyEvent, ctx: &mut Ctx<'_>) {
        let selected = self.selected;
        let action = KEYS
            .iter()
            .filter(|binding| keys::active(binding, ctx.snapshot, selected))
            .find(|binding| binding.keys.iter().any(|spec| spec.matches(key)))
            .map(|binding| binding.action);
        if let Some(action) = action {
            self.act(action, ctx);
            return;
        }
        self.removing = None;
        match lookup(main_view::KEYS, key) {
            Some(main_view::Action::History) => ctx.effect(Effect::OpenInspector),
            Some(main_view::Action::PlanMode) => {
                ctx.effect(Effect::Send(Command::PlanMode(!ctx.snapshot.plan_mode)));
            }
            _ => {}
        }
    }

    /// The edits first, as far as the bar has room — "approve plan" first of all, and only
    /// while there is a plan to approve — then the way back, then moving about. Enter and `o`
    /// are listed for what they do on the selected item.
    fn hints(&self, ctx: &Ctx<'_>) -> Hints {
        let rank = |action: Action| match action {
            Action::Approve => 0,
            Action::ToggleDone | Action::Edit | Action::Add | Action::Remove => 1,
            Action::ShowCheck => 1,
            Action::Leave => 2,
            _ => 3,
        };
        let mut keys: Vec<Binding<Action>> = KEYS
            .iter()
            .filter(|binding| approvable(ctx.snapshot) || binding.action != Action::Approve)
            .filter(|binding| keys::active(binding, ctx.snapshot, self.selected))
            .copied()
            .collect();
        keys.sort_by_key(|binding| rank(binding.action));
        hints(&keys)
    }

    /// The wheel over the board scrolls it, leaving the keyboard where it was.
    fn wheel(&mut self, up: bool, at: Position, ctx: &mut Ctx<'_>) -> bool {
        if !ctx.regions.todos.contains(at) {
            return false;
        }
        self.scroll(ctx.snapshot, up, super::conversation::WHEEL_LINES);
        true
    }
}

/// A plan waits for approval and has something in it: an empty plan is never approved.
fn approvable(snapshot: &Snapshot) -> bool {
    snapshot.plan_ready && !snapshot.board.is_empty()
}

/// The title: `Todos 2/5`, a gauge, and `PLAN` in plan mode.
fn title(snapshot: &Snapshot) -> Line<'static> {
    let board = &snapshot.board;
    let (done, total) = (board.done(), board.total());
    let filled = (done * GAUGE_CELLS).checked_div(total).unwrap_or(0);
    let mut spans = vec![
        Span::styled(format!(" Todos {done}/{total} "), theme::TITLE),
        Span::styled(GAUGE_FILLED.repeat(filled), theme::GAUGE_FILLED),
        Span::styled(GAUGE_EMPTY.repeat(GAUGE_CELLS - filled), theme::GAUGE_EMPTY),
        Span::raw(" "),
    ];
    if snapshot.plan_mode {
        spans.push(Span::styled("PLAN", theme::PLAN_BADGE));
        spans.push(Span::raw(" "));
    }
    Line::from(spans)
}
