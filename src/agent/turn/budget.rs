//! What stops a turn before its next request: the round limit (`--max-rounds`), or — for a child
//! agent — its budget, model responses or input tokens, whichever runs out first. A child's
//! token budget is checked against the next request as keel estimates it, so a child stops
//! within its budget rather than one request past it.

use crate::agent::turn::Turn;

impl Turn<'_> {
    /// Why the turn must stop after `rounds` model responses, if it must.
    pub(super) fn over_limit(&mut self, rounds: u32) -> Option<String> {
        let Some(budget) = self.config.budget else {
            return (rounds >= self.config.max_rounds).then(|| {
                format!(
                    "Stopped after {rounds} model responses in this turn (the limit set by \
                     --max-rounds or max_rounds). {GO_ON}"
                )
            });
        };
        if rounds >= budget.rounds {
            return Some(format!(
                "it used its budget of {} model responses (max_child_rounds)",
                budget.rounds
            ));
        }
        let used = self.state.view().usage.input_tokens;
        let next = self.meter.estimate(&self.state.view().history);
        (used.saturating_add(next) > budget.input_tokens).then(|| {
            format!(
                "its next request, about {next} input tokens, would take it past its budget of \
                 {} (max_child_tokens) with the {used} it has used",
                budget.input_tokens
            )
        })
    }
}

/// How a turn stopped at `--max-rounds` goes on, in the TUI's words (`-p` has its own).
pub const GO_ON: &str = "Send a message to let it go on.";
