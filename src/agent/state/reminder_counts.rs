//! `State`'s reminder counts ([`ReminderCounts`]): the rounds since the last `todo` call, and
//! the rhythm and drift count that the adaptive reminder and the stale mark read. They live in
//! the view (`Snapshot::reminder`), and change only through [`State::set_counts`], which saves
//! them as one record, so a resumed session reminds when the one it continues would have.

use super::State;
use crate::agent::event::AgentEvent;
use crate::agent::journal::Record;
use crate::agent::reminder::ReminderCounts;
use crate::message::ContentBlock;

impl State {
    /// Counts a round that asked for tools (see `reminder`): a `todo` call in it resets the
    /// count; the round count, the model's rhythm and the drift count move on.
    pub fn count_round(&mut self) {
        let called_todo = std::mem::take(&mut self.board_called);
        let changed = std::mem::take(&mut self.in_progress_changed);
        let in_progress = self.view.board.in_progress().is_some();
        self.set_counts(self.view.reminder.counts.after_round(called_todo, changed, in_progress));
    }

    /// The reminder for the next request, when it is due ([`ReminderCounts::due`]): told as an
    /// event, and the count started again. `text` is the reminder's words; the board follows
    /// them, so that the plan sits at the very end of the context.
    pub fn remind(&mut self, text: &str) -> Option<ContentBlock> {
        let board = &self.view.board;
        let threshold = self.view.reminder.counts.due(self.view.reminder.nag, board)?;
        let rounds_since_todo = self.view.reminder.counts.since_todo;
        let block = ContentBlock::Reminder { text: format!("{text}\n\n{}", board.render()) };
        let reminded_without_board = board.is_empty();
        self.emit(AgentEvent::Reminder { text: text.to_owned(), rounds_since_todo, threshold });
        self.set_counts(ReminderCounts {
            since_todo: 0,
            reminded_without_board: self.view.reminder.counts.reminded_without_board
                || reminded_without_board,
            ..self.view.reminder.counts
        });
        Some(block)
    }

    /// The one way the counts change: saved when they differ, and shown.
    pub(super) fn set_counts(&mut self, counts: ReminderCounts) {
        if counts != self.view.reminder.counts {
            self.view.reminder.counts = counts;
            self.record(&Record::Reminder { counts });
        }
    }
}
