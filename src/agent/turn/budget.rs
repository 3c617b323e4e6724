//! What stops a turn before its next request: the round limit (`--max-rounds`), which counts
//! every model response the prompt makes, its child agents' included (`turn::bounds`); for a
//! child agent, first its own budget — model responses or input tokens, whichever runs out first
//! — then what is left of its parent's. A child's token budget is checked against the next
//! request as keel estimates it, so a child stops within its budget rather than one request past
//! it.

use crate::agent::turn::Turn;

impl Turn<'_> {
    /// Why the turn must stop after `rounds` model responses of its own, if it must; when it
    /// need not, the next response is counted against the prompt's limit.
    pub(super) fn over_limit(&mut self, rounds: u32) -> Option<String> {
        let Some(budget) = self.config.budget else {
            if self.bounds.take_round() {
                return None;
            }
            let used = self.bounds.rounds();
            let theirs = match used.saturating_sub(rounds) {
                0 => String::new(),
                1 => ", 1 of them a child agent's".to_owned(),
                children => format!(", {children} of them its child agents'"),
            };
            return Some(format!(
                "Stopped after {used} model responses in this turn{theirs} (the limit set by \
                 --max-rounds or max_rounds). {GO_ON}"
            ));
        };
        let used = self.state.view().usage.input_tokens;
        let next = || self.meter.estimate(&self.state.view().history);
        if let Some(spent) = budget.spent(rounds, used, next) {
            return Some(spent);
        }
        (!self.bounds.take_round()).then(|| {
            format!(
                "the turn that started it has used its {} model responses (--max-rounds or \
                 max_rounds), its child agents' included",
                self.bounds.max_rounds()
            )
        })
    }
}

/// How a turn stopped at `--max-rounds` goes on, in the TUI's words (`-p` has its own).
pub const GO_ON: &str = "Send a message to let it go on.";
