//! The board's update, with its TaskCompleted hooks: before an item becomes completed, each
//! hook of the event is asked (the item's id and text, the board as it would stand). One that
//! refuses — exit 2, `decision: "block"`, or (this event fails closed) one that cannot start,
//! is killed or times out — refuses the whole update the way a board rule does: the board stays
//! as it was, and the model reads `Item {id}: cannot be completed: {reason}`.
//!
//! Every update of the board for the model goes through [`apply_board_update`]: the model's
//! `todo` and a child agent's item started and completed, each asked for by its call's run
//! through the conversation's handle and taken by the run stage ([`take_board`]).

use crate::agent::children::item;
use crate::agent::turn::handle::Parts;
use crate::agent::turn::hooks::HookRunner;
use crate::agent::turn::road::seat::BoardUpdate;
use crate::agent::turn::{INTERRUPTED, Stop};
use crate::board::{Board, BoardError, BoardItem, Status};
use crate::hooks::{Event, Query};
use serde_json::{Map, Value, json};

/// Takes a board update a call asked for: the board rendered, or why it was refused (the
/// board as it was); and why the turn must stop, if the person interrupted meanwhile.
pub(in crate::agent) async fn take_board(
    mut parts: Parts<'_>,
    update: BoardUpdate,
) -> (Result<String, String>, Option<Stop>) {
    match update {
        BoardUpdate::Todo { call, input } => {
            // A `todo` call counts as the round's board call, valid or not.
            parts.0.state.board_shown();
            match apply_board_update(&mut parts, &input).await {
                Ok(board) => {
                    parts.0.state.answered_with_board(&call);
                    (Ok(board), None)
                }
                Err((refused, stop)) => (Err(refused), stop),
            }
        }
        BoardUpdate::StartItem(id) => match item::start(parts.0.state, &id) {
            Err(why) => (Err(why), None),
            Ok(None) => (Ok(String::new()), None),
            Ok(Some(start)) => match apply_board_update(&mut parts, &start).await {
                Ok(board) => (Ok(board), None),
                Err((why, stop)) => (Err(item::not_started(&id, &why)), stop),
            },
        },
        BoardUpdate::CompleteItem(id) => {
            match apply_board_update(&mut parts, &item::completion(&id)).await {
                Ok(board) => {
                    // The child's answer carries the whole board.
                    parts.0.state.board_shown();
                    (Ok(board), None)
                }
                Err((why, stop)) => (Err(why), stop),
            }
        }
    }
}

/// Applies an update, either form, through the board's validation and the TaskCompleted
/// hooks of every item it completes; returns the whole board rendered, or why it was refused
/// (the board as it was) and why the turn must stop if the person interrupted meanwhile.
async fn apply_board_update(
    (conv, shared): &mut Parts<'_>,
    input: &Value,
) -> Result<String, (String, Option<Stop>)> {
    let (board, answer) =
        conv.state.propose_board(input).map_err(|refused| (refused.to_string(), None))?;
    let completing = newly_completed(&conv.state.view().board, &board);
    for item in completing {
        let fields = task_fields(&item, &board);
        let fired = match HookRunner::new((conv.reborrow(), *shared))
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
    conv.state.accept_board(board);
    Ok(answer)
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
