//! Where each pane goes on the screen, as a pure function of the terminal size.
//!
//! Wide terminals put the conversation on the left and the board above the tool log on the right;
//! narrow ones (fewer than [`WIDE_MIN_COLUMNS`]) stack everything, leaving out an empty board,
//! since rows are scarce there. The tool log keeps its rows whenever the screen has them, empty or
//! not, so the conversation does not jump when the first tool runs or `/clear` empties the log.
//! Every size down to 1×1 yields
//! valid (possibly empty) rectangles, so drawing never has to check.

use ratatui::layout::{Constraint, Layout, Rect};

/// From this width up the panes sit side by side.
pub const WIDE_MIN_COLUMNS: u16 = 100;
/// Share of a wide screen's width given to the right column, in percent.
const RIGHT_COLUMN_PERCENT: u16 = 36;
/// The right column's width limits on a wide screen.
const RIGHT_COLUMN_MIN: u16 = 34;
const RIGHT_COLUMN_MAX: u16 = 64;
/// Share of the right column's height the board may take before it scrolls, in percent.
const BOARD_MAX_PERCENT: u16 = 60;
/// The smallest board pane: a border and one line.
const BOARD_MIN_ROWS: u16 = 3;
/// Share of a stacked screen's panes the focused board may take, in percent.
const STACKED_FOCUSED_BOARD_PERCENT: u16 = 75;
/// A stacked screen shows the tool log only when the panes have at least this many rows.
const STACKED_TOOLS_MIN_ROWS: u16 = 14;
/// The composer never takes more than this share of the screen's height, in percent.
const COMPOSER_MAX_PERCENT: u16 = 40;
/// Rows of the status bar.
const STATUS_ROWS: u16 = 1;

/// The rectangles of one frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Regions {
    pub conversation: Rect,
    pub todos: Rect,
    pub tools: Rect,
    pub composer: Rect,
    pub status: Rect,
}

/// What the panes would like, for [`regions`] to fit them in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Wants {
    /// The composer's height, border included.
    pub composer_rows: u16,
    /// The board's height with every item shown, border included.
    pub board_rows: u16,
    /// The board has the keyboard (`/todos`) and may grow to be read.
    pub board_focused: bool,
    /// The board has items (a stacked screen hides an empty board).
    pub has_board: bool,
}

/// Splits `area` among the panes.
pub fn regions(area: Rect, wants: Wants) -> Regions {
    let status_rows = STATUS_ROWS.min(area.height);
    let composer_cap = percent(area.height, COMPOSER_MAX_PERCENT).max(BOARD_MIN_ROWS);
    let composer_rows = wants.composer_rows.min(composer_cap).min(area.height - status_rows);
    let [panes, composer, status] = Layout::vertical([
        Constraint::Fill(1),
        Constraint::Length(composer_rows),
        Constraint::Length(status_rows),
    ])
    .areas(area);

    let board_rows = wants.board_rows.max(BOARD_MIN_ROWS);
    if area.width >= WIDE_MIN_COLUMNS {
        let right =
            percent(area.width, RIGHT_COLUMN_PERCENT).clamp(RIGHT_COLUMN_MIN, RIGHT_COLUMN_MAX);
        let [conversation, column] =
            Layout::horizontal([Constraint::Fill(1), Constraint::Length(right)]).areas(panes);
        let board_cap = if wants.board_focused {
            column.height
        } else {
            percent(column.height, BOARD_MAX_PERCENT).max(BOARD_MIN_ROWS)
        };
        let [todos, tools] =
            Layout::vertical([Constraint::Length(board_rows.min(board_cap)), Constraint::Fill(1)])
                .areas(column);
        return Regions { conversation, todos, tools, composer, status };
    }

    let board = if wants.board_focused {
        board_rows.min(percent(panes.height, STACKED_FOCUSED_BOARD_PERCENT))
    } else if wants.has_board {
        board_rows.min((panes.height / 3).max(BOARD_MIN_ROWS))
    } else {
        0
    };
    let tools = if panes.height >= STACKED_TOOLS_MIN_ROWS { panes.height / 4 } else { 0 };
    let [todos, conversation, tools] = Layout::vertical([
        Constraint::Length(board),
        Constraint::Fill(1),
        Constraint::Length(tools),
    ])
    .areas(panes);
    Regions { conversation, todos, tools, composer, status }
}

/// `share` percent of `value`, without overflowing on huge terminals.
fn percent(value: u16, share: u16) -> u16 {
    u16::try_from(u32::from(value) * u32::from(share) / 100).unwrap_or(value)
}

/// A centred rectangle of at most `width`×`height` inside `area`, leaving `margin` cells around
/// it when there is room.
pub fn centered(area: Rect, width: u16, height: u16, margin: u16) -> Rect {
    let width = width.min(area.width.saturating_sub(margin * 2)).max(area.width.min(1));
    let height = height.min(area.height.saturating_sub(margin * 2)).max(area.height.min(1));
    Rect {
        x: area.x + (area.width - width) / 2,
        y: area.y + (area.height - height) / 2,
        width,
        height,
    }
}

/// The part of the screen overlays cover: all of it but the status bar, which keeps showing the
/// keys that work in the overlay.
pub fn overlay_area(screen: Rect) -> Rect {
    if screen.height > STATUS_ROWS {
        Rect { height: screen.height - STATUS_ROWS, ..screen }
    } else {
        screen
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wants(composer_rows: u16, board_rows: u16) -> Wants {
        Wants { composer_rows, board_rows, board_focused: false, has_board: true }
    }

    fn inside(outer: Rect, inner: Rect) -> bool {
        inner.width == 0 || inner.height == 0 || outer.union(inner) == outer
    }

    #[test]
    fn wide_screens_put_the_board_on_the_right() {
        let area = Rect::new(0, 0, 120, 40);
        let r = regions(area, wants(3, 8));
        assert_eq!(r.status, Rect::new(0, 39, 120, 1));
        assert_eq!(r.composer.height, 3);
        assert!(r.todos.x > r.conversation.x);
        assert_eq!(r.todos.height, 8);
        assert_eq!(r.tools.y, r.todos.bottom());
    }

    #[test]
    fn narrow_screens_stack() {
        let r = regions(Rect::new(0, 0, 60, 20), wants(3, 8));
        assert_eq!(r.todos.x, r.conversation.x);
        assert!(r.conversation.y > r.todos.y);
    }

    #[test]
    fn a_stacked_screen_keeps_the_tool_logs_rows_empty_or_not() {
        let area = Rect::new(0, 0, 80, 24);
        let r = regions(area, wants(3, 8));
        assert!(r.tools.height > 0, "80×24 has the rows for the tool log");
        let small = regions(Rect::new(0, 0, 40, 12), wants(3, 8));
        assert_eq!(small.tools.height, 0, "40×12 does not");
    }

    #[test]
    fn every_size_yields_rectangles_inside_the_screen() {
        for (w, h) in [(1, 1), (2, 3), (40, 12), (99, 5), (100, 2), (300, 100)] {
            let area = Rect::new(0, 0, w, h);
            let r = regions(area, wants(10, 30));
            for rect in [r.conversation, r.todos, r.tools, r.composer, r.status] {
                assert!(inside(area, rect), "{rect:?} outside {area:?}");
            }
            assert!(inside(area, centered(area, 80, 30, 2)));
        }
    }
}
