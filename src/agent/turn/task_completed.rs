//! The board's update, with its checks and TaskCompleted hooks: before an item becomes
//! completed its check runs (`checks`), then each hook of the event is asked (the item's id and text, the board as it would stand). One that
//! refuses — exit 2, `decision: "block"`, or (this event fails closed) one that cannot start,
//! is killed or times out — refuses the whole update the way a board rule does: the board stays
//! as it was, and the model reads `Item {id}: cannot be completed: {reason}`.
//!
//! Every update of the board for the model goes through [`apply_board_update`]: the model's
//! `todo` and a child agent's item started and completed, each asked for by its call's run
//! through the conversation's handle and taken by the run stage ([`take_board`]).

use crate::agent::check_record::CheckRecord;
use crate::agent::children::item;
use crate::agent::turn::checks;
use crate::agent::turn::handle::Parts;
use crate::agent::turn::hooks::HookRunner;
use crate::agent::turn::road::seat::BoardUpdate;
use crate::agent::turn::{INTERRUPTED, Stop};
use crate::board::{Board, BoardError, BoardItem};
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

/// Applies an update, either form, through the board's validation, the checks and then the
/// TaskCompleted hooks of every item it completes; returns the whole board rendered, or why it was refused
/// (the board as it was) and why the turn must stop if the person interrupted meanwhile.
async fn apply_board_update(
    parts: &mut Parts<'_>,
    input: &Value,
) -> Result<String, (String, Option<Stop>)> {
    let (mut board, _) =
        parts.0.state.propose_board(input).map_err(|refused| (refused.to_string(), None))?;
    checks::run_checks(parts, &mut board, checks::Claimant::Model).await?;
    let (conv, shared) = parts;
    let completing = checks::newly_completed(&conv.state.view().board, &board);
    for item in completing {
        let check = item.check.as_ref().and_then(|_| conv.state.view().checks.get(&item.id));
        let fields = task_fields(&item, &board, check.map(|record| &**record));
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
    // The answer is the board as it is taken: with the passes the checks marked.
    let answer = board.render();
    conv.state.accept_board(board);
    Ok(answer)
}

/// The TaskCompleted input's own fields: the item under Claude Code's names and keel's, the
/// board as it would stand, as items and as the model reads it, and the item's check as it
/// just passed (`check`: command, exit code, duration; absent for an item without one).
fn task_fields(item: &BoardItem, board: &Board, check: Option<&CheckRecord>) -> Map<String, Value> {
    let mut fields = Map::from_iter([
        ("task_id".to_owned(), json!(item.id)),
        ("task_subject".to_owned(), json!(item.text)),
        ("item".to_owned(), json!(item)),
        ("board".to_owned(), json!(board.items())),
        ("board_text".to_owned(), json!(board.render())),
    ]);
    if let Some(check) = check {
        let check = json!({
            "command": check.command,
            "passed": check.passed(),
            "exit_code": check.exit_code,
            "duration_ms": check.duration_ms(),
            "output": check.output,
        });
        fields.insert("check".to_owned(), check);
    }
    fields
}
