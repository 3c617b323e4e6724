//! The rule that keeps type-ahead from answering a box it was not typed at.
//!
//! keel invites typing while it works, so an approval box can appear under the person's fingers,
//! mid-word. Its answers are single letters (`y`, `a`, `n`), and a letter meant for the next
//! prompt must never approve a command. So a view that acts on single keys and appears by itself
//! answers a key only when both hold:
//! - it has been on screen for at least [`GRACE_PERIOD`] (nobody reads a box faster), and
//! - the person's last typed key is at least [`BURST_GAP`] old (a burst of typing, begun before
//!   the box or carried on through it, has paused).
//!
//! Until then keys go on where they were going — the composer — whole, and the box says so. The
//! rule is a pure function of the instants it is given; the caller passes the time in.

use std::time::{Duration, Instant};

/// How long after a box appears every key still counts as typing.
pub const GRACE_PERIOD: Duration = Duration::from_millis(800);
/// A key within this long of the previous typed key continues a burst of typing.
pub const BURST_GAP: Duration = Duration::from_millis(800);

/// When the box appeared and when the person last typed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TypeAhead {
    shown_at: Option<Instant>,
    last_typed: Option<Instant>,
    /// Some typing went past the box since it appeared (the box then says how to answer).
    diverted: bool,
}

impl TypeAhead {
    /// A box that acts on single keys appeared at `at`.
    pub fn shown(&mut self, at: Instant) {
        self.shown_at = Some(at);
        self.diverted = false;
    }

    /// A key went to the composer (or anywhere but a box's answers) at `at`.
    pub fn typed(&mut self, at: Instant) {
        self.last_typed = Some(at);
    }

    /// A key was kept from the box and sent on as typing, at `at`.
    pub fn divert(&mut self, at: Instant) {
        self.typed(at);
        self.diverted = true;
    }

    /// Whether the box may take a key pressed at `now` as an answer.
    pub fn accepts(&self, now: Instant) -> bool {
        let settled =
            self.shown_at.is_none_or(|shown| now.saturating_duration_since(shown) >= GRACE_PERIOD);
        let paused =
            self.last_typed.is_none_or(|typed| now.saturating_duration_since(typed) >= BURST_GAP);
        settled && paused
    }

    /// Whether the box should say that typing goes to the composer: keys were kept from it, or a
    /// burst of typing was under way when it appeared, and the typing has not paused yet.
    pub fn holding(&self, now: Instant) -> bool {
        let burst_at_show = match (self.shown_at, self.last_typed) {
            (Some(shown), Some(typed)) => shown.saturating_duration_since(typed) < BURST_GAP,
            _ => false,
        };
        (self.diverted || burst_at_show) && !self.accepts(now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Keys at 8 a second, the box appearing between two of them.
    const TYPING: Duration = Duration::from_millis(125);

    #[test]
    fn a_box_answers_nothing_within_its_grace_period() {
        let start = Instant::now();
        let mut guard = TypeAhead::default();
        assert!(guard.accepts(start), "no box shown yet: nothing holds keys back");
        guard.shown(start);
        assert!(!guard.accepts(start));
        assert!(!guard.accepts(start + GRACE_PERIOD - Duration::from_millis(1)));
        assert!(guard.accepts(start + GRACE_PERIOD));
        assert!(!guard.holding(start), "nobody was typing: the box shows its keys");
    }

    #[test]
    fn typing_through_the_box_never_answers_it_until_it_pauses() {
        let start = Instant::now();
        let mut guard = TypeAhead::default();
        let mut now = start;
        for _ in 0..4 {
            guard.typed(now);
            now += TYPING;
        }
        guard.shown(now - TYPING / 2);
        assert!(guard.holding(now), "a burst was under way when the box appeared");
        // Five seconds of typing at 8 keys a second: every key is typing.
        for _ in 0..40 {
            assert!(!guard.accepts(now), "a key in the burst answered the box");
            guard.divert(now);
            now += TYPING;
        }
        let last = now - TYPING;
        assert!(guard.holding(last + BURST_GAP - Duration::from_millis(1)));
        assert!(!guard.accepts(last + BURST_GAP - Duration::from_millis(1)));
        assert!(guard.accepts(last + BURST_GAP), "after a pause the box answers");
        assert!(!guard.holding(last + BURST_GAP));
    }

    #[test]
    fn a_pause_before_the_box_leaves_only_the_grace_period() {
        let start = Instant::now();
        let mut guard = TypeAhead::default();
        guard.typed(start);
        let shown = start + BURST_GAP * 2;
        guard.shown(shown);
        assert!(!guard.holding(shown), "the typing had paused before the box came");
        assert!(guard.accepts(shown + GRACE_PERIOD));
    }

    #[test]
    fn a_new_box_forgets_the_old_ones_diverted_keys() {
        let start = Instant::now();
        let mut guard = TypeAhead::default();
        guard.shown(start);
        guard.divert(start);
        let later = start + BURST_GAP * 4;
        guard.shown(later);
        assert!(!guard.holding(later));
    }
}
