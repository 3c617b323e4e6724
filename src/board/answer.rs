//! What the model reads after a valid update: the whole board where it anchors the plan, a few
//! lines where the plan only moved on.
//!
//! The whole board goes back for the first plan and whenever the items themselves change (one
//! added, dropped or moved) — unless the model sent that board itself, as a whole list naming
//! every id: its own call then shows the board, and the answer only says it was taken as sent.
//! Otherwise the answer says what changed, the item in progress (or the next one to start) and
//! the progress line. A compact answer starts with [`COMPACT_PREFIX`] so that masking can tell
//! it from a whole board (docs/board.md, "Answers").

use super::{Board, BoardItem, Status};
use std::fmt::Write as _;

/// How a compact answer starts; a whole board starts with an item's box or `No todos.`.
pub const COMPACT_PREFIX: &str = "Updated: ";
/// What a compact answer says of a whole list taken exactly as the model sent it.
const AS_SENT: &str = "your list as sent";
/// What a compact answer says when the update changed nothing.
const NOTHING_CHANGED: &str = "nothing changed";

/// The answer to an update that turned `before` into `after`; `as_sent` when the model's call
/// was the whole list with every id given, so that the call itself shows the board.
pub fn answer(before: &Board, after: &Board, as_sent: bool) -> String {
    let same_items =
        before.items().iter().map(|item| &item.id).eq(after.items().iter().map(|item| &item.id));
    if before.is_empty() || !same_items {
        return if as_sent && !after.is_empty() { taken_as_sent(after) } else { after.render() };
    }
    let mut named = Vec::new();
    let mut changes = Vec::new();
    for (old, new) in before.items().iter().zip(after.items()) {
        let said = self::changes(old, new, after);
        if old.status != new.status {
            named.push(new.id.as_str());
        }
        changes.extend(said);
    }
    let said = if changes.is_empty() { NOTHING_CHANGED.to_owned() } else { changes.join(", ") };
    let mut out = format!("{COMPACT_PREFIX}{said}.\n");
    // The item in progress by its line, unless this update just started it: then the line
    // above names it, and the model has its text from the plan it sent.
    if let Some(item) = after.in_progress() {
        if !named.contains(&item.id.as_str()) {
            let _ = writeln!(out, "{}", after.render_item(item));
        }
    } else if let Some(next) = after.next_open() {
        let _ = writeln!(out, "Next: {}", after.render_item(next));
    }
    out.push_str(&after.progress());
    out
}

/// The answer to a whole list the board took as the model sent it: the item in progress (or
/// the next to start) and the progress line.
fn taken_as_sent(after: &Board) -> String {
    let mut out = format!("{COMPACT_PREFIX}{AS_SENT}");
    match (after.in_progress(), after.next_open()) {
        (Some(item), _) => {
            let _ = writeln!(out, ", #{} {}.", item.id, item.status.as_str());
        }
        (None, Some(next)) => {
            let _ = writeln!(out, ".\nNext: {}", after.render_item(next));
        }
        (None, None) => out.push_str(".\n"),
    }
    out.push_str(&after.progress());
    out
}

/// Whether a board answer in the history is a whole board rather than a compact one.
pub fn is_whole(answer: &str) -> bool {
    !answer.starts_with(COMPACT_PREFIX)
}

/// What changed in one item, in a few words each: `#3 completed`, `#4 renamed`, `#5 blocked by
/// #4`, `#6 no longer blocked`.
fn changes(old: &BoardItem, new: &BoardItem, after: &Board) -> Vec<String> {
    let mut said = Vec::new();
    if old.status != new.status {
        said.push(format!("#{} {}", new.id, new.status.as_str()));
    }
    if old.text != new.text {
        said.push(format!("#{} renamed", new.id));
    }
    if old.blocked_by != new.blocked_by {
        let open = after.open_blockers(new);
        if open.is_empty() {
            said.push(format!("#{} no longer blocked", new.id));
        } else {
            let list: Vec<String> = open.iter().map(|id| format!("#{id}")).collect();
            said.push(format!("#{} blocked by {}", new.id, list.join(", ")));
        }
    }
    said
}

impl Board {
    /// The first item not completed whose blockers all are: the step to start next.
    pub fn next_open(&self) -> Option<&BoardItem> {
        self.items
            .iter()
            .find(|item| item.status != Status::Completed && self.open_blockers(item).is_empty())
    }
}
