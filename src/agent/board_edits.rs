//! The person's board commands — an edit, plan mode on or off — wherever they arrive: between
//! turns, while a turn runs, at an approval prompt. Each is applied at once; what the model must
//! hear of it goes into its next request (`State::take_board_note`).

use super::event::AgentEvent;
use super::state::{Outbox, State};
use crate::board::BoardEdit;

/// Applies the person's edit, or tells them why it was not made.
pub(super) fn edit(state: &mut State, outbox: &Outbox, edit: &BoardEdit) {
    match state.edit_board(edit) {
        Ok(said) => {
            state.emit(state.todo_event());
            state.emit(AgentEvent::Notice {
                text: format!("You {said}; the model is told in its next request."),
            });
        }
        Err(err) => {
            state.emit(AgentEvent::Error { text: format!("The board was not changed: {err}.") })
        }
    }
    state.publish(outbox);
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
