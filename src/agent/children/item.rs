//! The board item a child does: started before the child starts, through the board's
//! validation (its blockers completed, no other item in progress), and completed when the child
//! succeeds, through the same validation and the TaskCompleted hooks. A refusal to start says
//! why, and nothing is handed over.

use crate::agent::state::State;
use crate::board::Status;
use serde_json::{Value, json};

/// The update that starts board item `item` (`None` when it is already in progress), or why it
/// cannot be handed over.
pub(in crate::agent) fn start(state: &State, item: &str) -> Result<Option<Value>, String> {
    if !state.board_on() {
        return Err("The board is off in this session (--no-todo), so there is no item to hand \
                    over: call task without an item."
            .to_owned());
    }
    match state.view().board.get(item).map(|entry| entry.status) {
        None => Err(format!(
            "Item #{item} is not on the board: add it with todo first, or call task without an \
             item. Nothing was handed over."
        )),
        Some(Status::Completed) => Err(format!(
            "Item #{item} is already completed: hand over an open item, or call task without an \
             item. Nothing was handed over."
        )),
        Some(Status::InProgress) => Ok(None),
        Some(Status::Pending) => {
            Ok(Some(json!({"update": [{"id": item, "status": "in_progress"}]})))
        }
    }
}

/// Why board item `item` could not start (the board's or a hook's words), as the model reads it.
pub(in crate::agent) fn not_started(item: &str, why: &str) -> String {
    format!("Item #{item} cannot start: {why}. Nothing was handed over.")
}

/// The update that completes board item `item`.
pub(in crate::agent) fn completion(item: &str) -> Value {
    json!({"update": [{"id": item, "status": "completed"}]})
}
