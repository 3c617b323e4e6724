//! `State`'s queue of prompts the person typed while a turn ran.

use super::State;

impl State {
    /// A prompt to send once the running turn ends.
    pub fn queue(&mut self, prompt: String) {
        self.view.queued.push_back(prompt);
    }

    /// The oldest queued prompt, taken off the queue.
    pub fn next_queued(&mut self) -> Option<String> {
        self.view.queued.pop_front()
    }

    /// Empties the queue into the front end's hands (the person interrupted the turn: what they
    /// queued is theirs to edit or drop, not to be sent at once).
    pub fn hand_back_queue(&mut self) {
        if self.view.queued.is_empty() {
            return;
        }
        let prompts = std::mem::take(&mut self.view.queued);
        let handed = &mut self.view.handed_back;
        handed.count += 1;
        handed.prompts = prompts;
    }
}
