//! A plan-mode turn's end: the board is the plan, waiting for the person's approval; and the
//! prompt that hands the approved plan to the model (the rules are `agent::plan_mode`'s).

use crate::agent::turn::Turn;
use crate::prompt::PLAN_APPROVED as APPROVED;

impl Turn<'_> {
    /// At the end of a turn in plan mode the board is the plan: it waits for the person (if
    /// there is one), and printing front ends get it as one more `todo` event.
    pub(in crate::agent) fn end_plan_turn(&mut self) {
        if !self.state.view().plan_mode {
            return;
        }
        let ready = !self.state.view().board.is_empty();
        let event = self.state.todo_event();
        self.emit(event);
        self.state.set_plan_ready(ready);
    }

    /// The prompt that hands the approved board to the model.
    pub(in crate::agent) fn approval_prompt(&self) -> String {
        format!("{APPROVED}\n\n{}", self.state.view().board.render())
    }
}
