//! When to remind the model of its board (docs/board.md).
//!
//! A round is one model response that asked for at least one tool. A round that called `todo`,
//! valid or not, resets the count; any other round adds one. Before the next request, once the
//! count reaches the threshold and the board still has open items (or none at all), the reminder
//! goes after the tool results and the count starts again, so it fires at most once per
//! `threshold` rounds.

use crate::todo::TodoBoard;

/// The count after a round that asked for tools.
pub fn after_round(rounds_since_todo: u32, called_todo: bool) -> u32 {
    if called_todo { 0 } else { rounds_since_todo.saturating_add(1) }
}

/// Whether the next request carries the reminder. A threshold of 0 turns it off.
pub fn is_due(rounds_since_todo: u32, threshold: u32, board: &TodoBoard) -> bool {
    threshold > 0 && rounds_since_todo >= threshold && (board.is_empty() || board.has_open_items())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn board(status: &str) -> TodoBoard {
        let mut board = TodoBoard::default();
        board.update(&json!({"items": [{"id": "1", "text": "a", "status": status}]})).unwrap();
        board
    }

    #[test]
    fn todo_resets_and_other_rounds_count() {
        assert_eq!(after_round(2, true), 0);
        assert_eq!(after_round(2, false), 3);
        assert_eq!(after_round(u32::MAX, false), u32::MAX);
    }

    #[test]
    fn due_at_the_threshold_with_open_or_no_items() {
        let empty = TodoBoard::default();
        assert!(!is_due(2, 3, &empty));
        assert!(is_due(3, 3, &empty));
        assert!(is_due(4, 3, &board("pending")));
    }

    #[test]
    fn never_due_when_off_or_when_everything_is_done() {
        assert!(!is_due(10, 0, &TodoBoard::default()));
        assert!(!is_due(10, 3, &board("completed")));
    }
}
