//! `State`'s reminder counts ([`ReminderCounts`]): the rounds since the last `todo` call, and
//! the rhythm and drift count that the adaptive reminder and the stale mark read. They change
//! only through [`State::set_counts`], which saves them as one record, so a resumed session
//! reminds when the one it continues would have.

use super::State;
use crate::agent::journal::Record;
use crate::agent::reminder::ReminderCounts;

impl State {
    /// Counts a round that asked for tools (see `reminder`): a `todo` call resets the count; the
    /// round count, the model's rhythm and the drift count move on.
    pub fn count_round(&mut self, called_todo: bool) {
        let changed = std::mem::take(&mut self.in_progress_changed);
        let in_progress = self.view.board.in_progress().is_some();
        self.set_counts(self.counts.after_round(called_todo, changed, in_progress));
    }

    /// Starts the count again after the reminder went out.
    pub fn reset_rounds(&mut self) {
        self.set_counts(ReminderCounts { since_todo: 0, ..self.counts });
    }

    /// The one way the counts change: saved when they differ, and shown.
    pub(super) fn set_counts(&mut self, counts: ReminderCounts) {
        if counts != self.counts {
            self.counts = counts;
            self.record(&Record::Reminder { counts });
        }
        self.show_counts();
    }

    /// Puts the counts in the view, with the threshold they give.
    pub(super) fn show_counts(&mut self) {
        self.view.rounds_since_todo = self.counts.since_todo;
        self.view.rounds_in_progress = self.counts.rounds_in_progress;
        self.view.nag_threshold = self.counts.threshold(self.nag);
    }
}
