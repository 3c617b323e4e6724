//! What holds a prompt's turn and the children it runs at every step, shared between them: the
//! model responses the prompt may still take — its child agents' counted with its own, so
//! `--max-rounds` bounds every request the prompt makes — and the parent's plan mode as the
//! person left it a moment ago, which each child reads at each of its calls. A child is never
//! wider than its parent at any moment: the person's Shift+Tab reaches it at its next call.
//!
//! The parent and its children run as futures of one task, so the parent's word (after each
//! command it takes while children run) is there before any child's next step; the atomics only
//! make the sharing safe to hold, not racy to read.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

/// The bounds of one prompt's turn, shared with its children.
#[derive(Debug)]
pub(in crate::agent) struct Bounds {
    /// Model responses the prompt may take, its children's included (`--max-rounds`).
    max_rounds: u32,
    /// Model responses taken so far.
    rounds: AtomicU32,
    /// The parent's plan mode, as it last said it.
    plan_mode: AtomicBool,
}

impl Bounds {
    /// The bounds of a turn that may take `max_rounds` model responses.
    pub fn new(max_rounds: u32) -> Self {
        Self { max_rounds, rounds: AtomicU32::new(0), plan_mode: AtomicBool::new(false) }
    }

    /// A new prompt's turn begins: no response taken yet.
    pub fn begin(&self) {
        self.rounds.store(0, Ordering::Release);
    }

    /// Takes one more model response, if the limit leaves one: `false` when it is spent.
    pub fn take_round(&self) -> bool {
        self.rounds
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| {
                (used < self.max_rounds).then_some(used + 1)
            })
            .is_ok()
    }

    /// Model responses taken so far in this turn, the children's included.
    pub fn rounds(&self) -> u32 {
        self.rounds.load(Ordering::Acquire)
    }

    /// Model responses the turn may take.
    pub fn max_rounds(&self) -> u32 {
        self.max_rounds
    }

    /// The parent says whether it is in plan mode now.
    pub fn set_plan_mode(&self, on: bool) {
        self.plan_mode.store(on, Ordering::Release);
    }

    /// Whether the parent was in plan mode when it last said.
    pub fn plan_mode(&self) -> bool {
        self.plan_mode.load(Ordering::Acquire)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn responses_are_taken_until_the_limit_and_a_new_turn_begins_at_none() {
        let bounds = Bounds::new(2);
        assert!(bounds.take_round() && bounds.take_round());
        assert!(!bounds.take_round(), "a third is over the limit");
        assert_eq!(bounds.rounds(), 2, "a refused response is not counted");
        bounds.begin();
        assert_eq!(bounds.rounds(), 0);
        assert!(bounds.take_round());
    }

    #[test]
    fn the_plan_mode_said_last_is_the_one_read() {
        let bounds = Bounds::new(1);
        assert!(!bounds.plan_mode());
        bounds.set_plan_mode(true);
        assert!(bounds.plan_mode());
        bounds.set_plan_mode(false);
        assert!(!bounds.plan_mode());
    }
}
