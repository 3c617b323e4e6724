//! Which rows of a board taller than its pane are shown: the offset that keeps the selected item
//! (or, unfocused, the item in progress) in view, and what the view leaves out above and below,
//! counted in items, for the pane's `↑ N more` / `↓ N more` marks ([`more_mark`]).

use super::lines::ItemLine;
use crate::agent::Snapshot;
use crate::board::Status;

/// The offset nearest `offset` that shows every line of item `selected` (as many as fit).
pub(super) fn showing(
    offset: usize,
    content: &[ItemLine],
    selected: usize,
    height: usize,
) -> usize {
    let first = content.iter().position(|line| line.item == selected).unwrap_or(0);
    let last = content.iter().rposition(|line| line.item == selected).unwrap_or(first);
    if first < offset {
        first
    } else if height > 0 && last >= offset + height {
        (last + 1).saturating_sub(height).min(first)
    } else {
        offset
    }
}

/// How much of the board a view from `offset` of `height` rows leaves out: whole items above and
/// below (counted as items, not lines), and whether the last row shown cuts an item short.
pub(super) struct Hidden {
    pub above: usize,
    pub below: usize,
    pub cut_at_bottom: bool,
}

impl Hidden {
    pub fn of(content: &[ItemLine], offset: usize, height: usize) -> Self {
        let end = (offset + height).min(content.len());
        let shown_items = |range: std::ops::Range<usize>| {
            let mut items: Vec<usize> = content[range].iter().map(|line| line.item).collect();
            items.dedup();
            items
        };
        let visible = shown_items(offset.min(end)..end);
        let count_unseen =
            |range| shown_items(range).iter().filter(|item| !visible.contains(item)).count();
        Self {
            above: count_unseen(0..offset.min(end)),
            below: count_unseen(end..content.len()),
            cut_at_bottom: end > 0
                && end < content.len()
                && content[end - 1].item == content[end].item,
        }
    }
}

/// Which side of the pane items are left out on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Side {
    Above,
    Below,
}

/// The one form of the mark for items the pane leaves out, on its top or bottom border: `↑ 3
/// more`, `↓ 1 more`. Short enough for a 40-column screen, so no narrower form is ever needed,
/// and never a bare `↓3`, which would read like the status line's token counts.
pub(super) fn more_mark(side: Side, items: usize) -> String {
    let arrow = match side {
        Side::Above => '↑',
        Side::Below => '↓',
    };
    format!("{arrow} {items} more")
}

/// The first row to show when the pane is not focused: the item in progress stays in view (or
/// the first one pending; on a finished board, the end).
pub(super) fn follow_offset(snapshot: &Snapshot, content: &[ItemLine], height: usize) -> usize {
    let items = snapshot.board.items();
    let active = items
        .iter()
        .position(|item| item.status == Status::InProgress)
        .or_else(|| items.iter().position(|item| item.status == Status::Pending))
        .unwrap_or(items.len().saturating_sub(1));
    let first = content.iter().position(|line| line.item == active).unwrap_or(0);
    let last = content.iter().rposition(|line| line.item == active).unwrap_or(first);
    if last < height { 0 } else { (last + 1).saturating_sub(height).min(first) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_more_mark_has_one_form_for_any_count() {
        assert_eq!(more_mark(Side::Above, 1), "↑ 1 more");
        assert_eq!(more_mark(Side::Below, 12), "↓ 12 more");
    }
}
