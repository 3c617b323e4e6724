//! The board's update, with its TaskCompleted hooks: before an item becomes completed, each
//! hook of the event is asked (the item's id and text, the board as it would stand). One that
//! refuses — exit 2, `decision: "block"`, or (this event fails closed) one that cannot start,
//! is killed or times out — refuses the whole update the way a board rule does: the board stays
//! as it was, and the model reads `Item {id}: cannot be completed: {reason}`.
//!
//! Every update of the board for the model goes through [`Turn::apply_board_update`]: the
//! model's `todo` ([`Turn::update_board`]) and a child agent's item started and completed.

use crate::agent::turn::{INTERRUPTED, Stop, Turn};
use crate::board::{Board, BoardError, BoardItem, Status};
use crate::hooks::{Event, Query};
use crate::tools::ToolOutcome;
use serde_json::{Map, Value, json};

impl Turn<'_> {
    /// Applies a `todo` update from call `id`, asking the TaskCompleted hooks first about every
    /// item it completes; returns the answer, and why the turn must stop if the person
    /// interrupted meanwhile (the board then stays as it was).
    pub(in crate::agent) async fn update_board(
        &mut self,
        id: &str,
        input: &Value,
    ) -> (ToolOutcome, Option<Stop>) {
        self.state.board_shown();
        match self.apply_board_update(input).await {
            Ok(answer) => {
                self.state.answered_with_board(id);
                (ToolOutcome::ok(answer), None)
            }
            Err((refused, stop)) => (ToolOutcome::error(refused), stop),
        }
    }

    /// Applies an update, either form, through the board's validation and the TaskCompleted
    /// hooks of every item it completes; returns the whole board rendered, or why it was refused
    /// (the board as it was) and why the turn must stop if the person interrupted meanwhile.
    pub(in crate::agent) async fn apply_board_update(
        &mut self,
        input: &Value,
    ) -> Result<String, (String, Option<Stop>)> {
        let (board, answer) =
            self.state.propose_board(input).map_err(|refused| (refused.to_string(), None))?;
        let completing = newly_completed(&self.state.view().board, &board);
        for item in completing {
            let fields = task_fields(&item, &board);
            let fired = match crate::agent::turn::hooks::HookRunner::new(self.parts())
                .fire(Event::TaskCompleted, Query::Nothing, fields, None)
                .await
            {
                Ok(fired) => fired,
                Err(stop) => return Err((INTERRUPTED.to_owned(), Some(stop))),
            };
            if let Some(reason) = fired.blocked() {
                let refused = BoardError::CompletionRefused { id: item.id.clone(), reason };
                return Err((refused.to_string(), None));
            }
        }
        self.state.accept_board(board);
        Ok(answer)
    }
}

/// The items `after` has completed that `before` had not.
fn newly_completed(before: &Board, after: &Board) -> Vec<BoardItem> {
    after
        .items()
        .iter()
        .filter(|item| item.status == Status::Completed)
        .filter(|item| before.get(&item.id).is_none_or(|old| old.status != Status::Completed))
        .cloned()
        .collect()
}

/// The TaskCompleted input's own fields: the item under Claude Code's names and keel's, and the
/// board as it would stand, as items and as the model reads it.
fn task_fields(item: &BoardItem, board: &Board) -> Map<String, Value> {
    Map::from_iter([
        ("task_id".to_owned(), json!(item.id)),
        ("task_subject".to_owned(), json!(item.text)),
        ("item".to_owned(), json!(item)),
        ("board".to_owned(), json!(board.items())),
        ("board_text".to_owned(), json!(board.render())),
    ])
}
