//! The board's lines at a width: a pure function of the snapshot, for the pane to draw and to
//! measure.
//!
//! Each item is its status box, its id (the person edits items by id), its text, wrapped under
//! itself; the item in progress adds what it is doing and, once it has stood still a round or
//! more, for how many rounds — marked stale past twice the reminder's threshold — and, while a
//! child agent does it, what the child runs now and has spent. An item waiting
//! for open blockers is dimmed and names them. An item with a check says how its last check
//! went (`marks`), and while a plan waits for approval its check command stands under it. While
//! the pane has the keyboard a gutter shows the selected item.

use super::marks::{Clock, check_line, check_mark};
use crate::agent::Snapshot;
use crate::board::Status;
use crate::tui::text::{clean_line, compact_count};
use crate::tui::theme;
use crate::tui::view::spinner;
use crate::tui::wrap::{Prefix, wrap};
use ratatui::style::Style;
use ratatui::text::{Line, Span};

/// Indentation of an item's wrapped lines, under its text.
const ITEM_INDENT: &str = "    ";
/// The gutter before the selected item, and before the others, while focused.
const SELECTED: &str = "› ";
const UNSELECTED: &str = "  ";

/// How the lines are drawn besides the board itself.
#[derive(Debug, Clone, Copy, Default)]
pub struct Look {
    /// The text width inside the pane.
    pub width: usize,
    /// A turn runs: the item in progress shows the spinner at `frame`.
    pub busy: bool,
    pub frame: u64,
    /// While focused, the selected item (a gutter is drawn before every item).
    pub selected: Option<usize>,
    /// The person's clock, for the time of a failed check.
    pub clock: Clock,
}

/// One drawn line and the item it belongs to.
pub struct ItemLine {
    pub item: usize,
    pub line: Line<'static>,
}

impl std::ops::Deref for ItemLine {
    type Target = Line<'static>;
    fn deref(&self) -> &Self::Target {
        &self.line
    }
}

/// The board's lines.
pub fn lines(snapshot: &Snapshot, look: Look) -> Vec<ItemLine> {
    let board = &snapshot.board;
    if board.is_empty() {
        let empty = if snapshot.plan_mode { "No plan yet." } else { "No todos yet." };
        return vec![ItemLine { item: 0, line: Line::styled(empty, theme::DIM) }];
    }
    let mut out = Vec::new();
    for (index, item) in board.items().iter().enumerate() {
        let blockers = board.open_blockers(item);
        let (marker_style, text_style) = match item.status {
            _ if !blockers.is_empty() => (theme::DIM, theme::TODO_BLOCKED),
            Status::Pending => (theme::DIM, theme::TODO_PENDING),
            Status::InProgress => (theme::TODO_IN_PROGRESS, theme::TODO_IN_PROGRESS),
            Status::Completed => (theme::TODO_DONE, theme::TODO_DONE),
        };
        let gutter = match look.selected {
            Some(selected) if selected == index => Some(Span::styled(SELECTED, theme::KEY)),
            Some(_) => Some(Span::raw(UNSELECTED)),
            None => None,
        };
        let mut first: Vec<Span<'static>> = gutter.clone().into_iter().collect();
        first.push(Span::styled(item.status.marker(), marker_style));
        first.push(Span::raw(" "));
        let mut rest: Vec<Span<'static>> =
            gutter.map(|_| Span::raw(UNSELECTED)).into_iter().collect();
        rest.push(Span::raw(ITEM_INDENT));
        let mut spans = vec![
            Span::styled(format!("#{} ", clean_line(&item.id)), theme::DIM),
            Span::styled(clean_line(&item.text).into_owned(), text_style),
        ];
        spans.extend(check_mark(snapshot, item, look.clock));
        // What follows the text: what the item is doing, its rounds, its blockers.
        let mut after = Vec::new();
        if item.status == Status::InProgress {
            in_progress(&mut after, snapshot, item.active_form.as_deref(), look);
            child_at_work(&mut after, snapshot, &item.id, look);
        }
        if !blockers.is_empty() {
            let list: Vec<String> =
                blockers.iter().map(|id| format!("#{}", clean_line(id))).collect();
            after.push(Span::styled(format!("  (blocked by {})", list.join(", ")), theme::DIM));
        }
        let prefix = Prefix { first, rest };
        let mut drawn = item_lines(spans, after, look.width, &prefix);
        // What the person approves with the plan: each step's check.
        if let Some(check) = check_line(item).filter(|_| snapshot.plan_ready) {
            drawn.extend(wrap(&[check], look.width, &Prefix::uniform(prefix.rest.clone())));
        }
        out.extend(drawn.into_iter().map(|line| ItemLine { item: index, line }));
    }
    out
}

/// An item's text and what follows it, wrapped: on one line where they fit, else what follows
/// starts a line of its own under the text, so that "Looking around the workspace" is never
/// broken across the item's text.
fn item_lines(
    spans: Vec<Span<'static>>,
    after: Vec<Span<'static>>,
    width: usize,
    prefix: &Prefix,
) -> Vec<Line<'static>> {
    let whole: Vec<Span<'static>> = spans.iter().chain(&after).cloned().collect();
    let together = wrap(&whole, width, prefix);
    let mut text = wrap(&spans, width, prefix);
    if after.is_empty() || together.len() <= text.len() {
        return together;
    }
    let mut after = after;
    if let Some(first) = after.first_mut() {
        first.content = first.content.trim_start().to_owned().into();
    }
    text.extend(wrap(&after, width, &Prefix::uniform(prefix.rest.clone())));
    text
}

/// What the item in progress adds: what it is doing, and how long it has stood still.
fn in_progress(
    spans: &mut Vec<Span<'static>>,
    snapshot: &Snapshot,
    active: Option<&str>,
    look: Look,
) {
    if let Some(active) = active {
        let lead =
            if look.busy { format!("  {} ", spinner(look.frame)) } else { "  ← ".to_owned() };
        spans.push(Span::styled(lead, theme::TODO_ACTIVE_FORM));
        spans.push(Span::styled(clean_line(active).into_owned(), theme::TODO_ACTIVE_FORM));
    }
    let rounds = snapshot.reminder.rounds_in_progress();
    if rounds == 0 {
        return;
    }
    let (text, style): (String, Style) = if snapshot.is_stale() {
        (format!("  · stale, {}", rounds_text(rounds)), theme::TODO_STALE)
    } else {
        (format!("  · {}", rounds_text(rounds)), theme::DIM)
    };
    spans.push(Span::styled(text, style));
}

/// What the child agent doing the item adds while it runs: its id, the call it runs now, its
/// rounds and the tokens it has taken in (`  ⟳ a2 · bash cargo test · 3 rounds · 12.3k tok`).
fn child_at_work(spans: &mut Vec<Span<'static>>, snapshot: &Snapshot, id: &str, look: Look) {
    let Some(child) = snapshot
        .children
        .iter()
        .rev()
        .find(|child| child.is_running() && child.item.as_deref() == Some(id))
    else {
        return;
    };
    let lead = if look.busy { spinner(look.frame) } else { '⟳' };
    let mut text = format!("  {lead} {}", child.id);
    if let Some(tool) = &child.tool {
        text.push_str(&format!(" · {}", clean_line(tool)));
    }
    text.push_str(&format!(
        " · {} · {} tok",
        rounds_text(child.rounds),
        compact_count(child.usage.input_tokens)
    ));
    spans.push(Span::styled(text, theme::CHILD_AT_WORK));
}

/// `1 round`, `4 rounds`.
pub fn rounds_text(rounds: u32) -> String {
    if rounds == 1 { "1 round".to_owned() } else { format!("{rounds} rounds") }
}
