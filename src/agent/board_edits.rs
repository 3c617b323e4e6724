//! The person's board commands — an edit, plan mode on or off — wherever they arrive: between
//! turns, while a turn runs, at an approval prompt. Each is applied at once; what the model must
//! hear of it goes into its next request (`State::take_board_note`). An edit that completes an
//! item with a check waits for the check ([`take_checked_edits`]): between turns it runs at
//! once, during a turn once the round's calls are done.

use super::event::AgentEvent;
use super::state::{Edited, Outbox, State};
use super::turn::checks;
use super::turn::handle::Parts;
use crate::agent::listening::Stop;
use crate::board::BoardEdit;

/// Applies the person's edit, or tells them why it was not made.
pub(super) fn edit(state: &mut State, outbox: &Outbox, edit: &BoardEdit) {
    match state.edit_board(edit) {
        Ok(Edited::Made(said)) => made(state, &said),
        Ok(Edited::AwaitsCheck(id)) => state.emit(AgentEvent::Notice {
            text: format!("#{id} has a check: it runs before the item is marked completed."),
        }),
        Err(err) => not_made(state, &err),
    }
    state.publish(outbox);
}

/// Tells of an edit made.
fn made(state: &mut State, said: &str) {
    state.emit(state.todo_event());
    state.emit(AgentEvent::Notice {
        text: format!("You {said}; the model is told in its next request."),
    });
}

/// Tells why an edit was not made.
fn not_made(state: &mut State, why: &dyn std::fmt::Display) {
    state.emit(AgentEvent::Error { text: format!("The board was not changed: {why}.") });
}

/// Makes the person's edits that wait for checks, each once its checks pass (`turn::checks`),
/// against the board as it stands now; one whose check fails or cannot run is not made, and
/// the person is told why. Returns why the turn must stop, if the person interrupted a check.
pub(super) async fn take_checked_edits(parts: &mut Parts<'_>) -> Option<Stop> {
    while let Some(edit) = parts.0.state.next_checked_edit() {
        let state = &mut *parts.0.state;
        let (mut board, said) = match edit.apply(&state.view().board) {
            Ok(edited) => edited,
            Err(err) => {
                not_made(state, &err);
                continue;
            }
        };
        let checked = checks::run_checks(parts, &mut board, checks::Claimant::Person).await;
        let state = &mut *parts.0.state;
        match checked {
            Ok(()) => {
                let said = state.take_edited_board(board, said);
                made(state, &said);
            }
            Err((why, stop)) => {
                not_made(state, &why);
                if stop.is_some() {
                    // The rest are dropped with the turn the person stopped.
                    while state.next_checked_edit().is_some() {}
                    state.publish(parts.0.outbox);
                    return stop;
                }
            }
        }
        state.publish(parts.0.outbox);
    }
    None
}

/// Turns plan mode on or off.
pub(super) fn plan_mode(state: &mut State, outbox: &Outbox, on: bool) {
    let text = match (on, state.board_on()) {
        (true, false) => {
            state.emit(AgentEvent::Error {
                text: "Plan mode needs the board, which is off in this session (--no-todo).".into(),
            });
            state.publish(outbox);
            return;
        }
        (true, true) => {
            "Plan mode: the model may read, not change, and ends with a plan on the \
                         board for you to edit and approve."
        }
        (false, _) => "Plan mode is off: the model may change files again, as --approval allows.",
    };
    if state.view().plan_mode != on {
        state.set_plan_mode(on);
        state.emit(AgentEvent::Notice { text: text.to_owned() });
    }
    state.publish(outbox);
}
