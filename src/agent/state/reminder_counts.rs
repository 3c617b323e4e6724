//! `State`'s reminder counters: rounds since the last `todo` call, and the rhythm and drift count
//! (`Pace`) that the adaptive reminder and the stale mark read. Each change is saved as it is
//! made, so a resumed session reminds when the one it continues would have.

use super::State;
use crate::agent::journal::Record;
use crate::agent::reminder::{self, Pace};

impl State {
    /// Counts a round that asked for tools (see `reminder`): a `todo` call resets the count; the
    /// round count, the model's rhythm and the drift count move on.
    pub fn count_round(&mut self, called_todo: bool) {
        self.set_rounds(reminder::after_round(self.view.rounds_since_todo, called_todo));
        let changed = std::mem::take(&mut self.in_progress_changed);
        let in_progress = self.view.board.in_progress().is_some();
        self.set_pace(self.pace.after_round(called_todo, changed, in_progress));
    }

    pub(super) fn set_pace(&mut self, pace: Pace) {
        if pace != self.pace {
            self.pace = pace;
            self.record(&Record::Pace { pace });
        }
        self.view.rounds_in_progress = pace.rounds_in_progress;
        self.view.nag_threshold = pace.threshold(self.nag);
    }

    /// Starts the count again after the reminder went out.
    pub fn reset_rounds(&mut self) {
        self.set_rounds(0);
    }

    fn set_rounds(&mut self, rounds: u32) {
        if rounds != self.view.rounds_since_todo {
            self.view.rounds_since_todo = rounds;
            self.record(&Record::Rounds { rounds_since_todo: rounds });
        }
    }
}
