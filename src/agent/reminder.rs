//! When to remind the model of its board, and how long its step in progress has stood still
//! (docs/board.md).
//!
//! A round is one model response that asked for at least one tool. A round that called `todo`,
//! valid or not, resets `rounds_since_todo`; any other round adds one. Before the next request,
//! once the count reaches the threshold and the board still has open items (or none at all), the
//! reminder goes after the tool results and the count starts again, so it fires at most once per
//! `threshold` rounds.
//!
//! With `--nag-threshold auto` the threshold follows the model's own rhythm ([`ReminderCounts`]): once it
//! has left the same number k of silent rounds between two board updates twice in a row
//! (reminded or not), it is not reminded before k + 1 silent rounds; otherwise — and at least —
//! the default applies, so a silent model is still reminded within max(3, 2k) rounds.

use crate::board::Board;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// The threshold when none is set, and the least `auto` uses.
pub const DEFAULT_THRESHOLD: u32 = 3;
/// Past this many thresholds without a change, the item in progress is marked stale.
pub const STALE_THRESHOLDS: u32 = 2;

/// How many silent rounds go by before the reminder (`--nag-threshold`, `nag_threshold`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NagThreshold {
    /// After this many rounds; 0 turns the reminder off.
    Fixed(u32),
    /// After the model's own rhythm, plus one.
    Auto,
}

impl Default for NagThreshold {
    fn default() -> Self {
        Self::Fixed(DEFAULT_THRESHOLD)
    }
}

impl fmt::Display for NagThreshold {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Fixed(rounds) => write!(f, "{rounds}"),
            Self::Auto => f.write_str("auto"),
        }
    }
}

impl FromStr for NagThreshold {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let text = text.trim();
        if text.eq_ignore_ascii_case("auto") {
            return Ok(Self::Auto);
        }
        text.parse()
            .map(Self::Fixed)
            .map_err(|_| format!("expected a number of rounds (0 = off) or \"auto\", not '{text}'"))
    }
}

impl<'de> Deserialize<'de> for NagThreshold {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Rounds(u32),
            Word(String),
        }
        match Raw::deserialize(deserializer).map_err(|_| {
            serde::de::Error::custom("expected a number of rounds (0 = off) or \"auto\"")
        })? {
            Raw::Rounds(rounds) => Ok(Self::Fixed(rounds)),
            Raw::Word(word) => word.parse().map_err(serde::de::Error::custom),
        }
    }
}

/// The reminder as it stands — its counts and the setting they are read against — where front
/// ends read it (`Snapshot::reminder`) and the agent keeps it: one value, no copies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reminder {
    pub counts: ReminderCounts,
    pub nag: NagThreshold,
}

impl Default for Reminder {
    /// Off, with nothing counted: what a front end shows before the agent says otherwise.
    fn default() -> Self {
        Self { counts: ReminderCounts::default(), nag: NagThreshold::Fixed(0) }
    }
}

impl Reminder {
    /// A reminder at a fixed `threshold` that has counted `since_todo` silent rounds, its item
    /// in progress standing still for `rounds_in_progress` (what front ends draw).
    pub fn at(threshold: u32, since_todo: u32, rounds_in_progress: u32) -> Self {
        let counts = ReminderCounts { since_todo, rounds_in_progress, ..ReminderCounts::default() };
        Self { counts, nag: NagThreshold::Fixed(threshold) }
    }

    /// Rounds since the last `todo` call (or the last reminder).
    pub fn since_todo(&self) -> u32 {
        self.counts.since_todo
    }

    /// Rounds since the item in progress last changed (0 with none in progress).
    pub fn rounds_in_progress(&self) -> u32 {
        self.counts.rounds_in_progress
    }

    /// The threshold in force now (0: off); with `auto`, the one the rhythm gives.
    pub fn threshold(&self) -> u32 {
        self.counts.threshold(self.nag)
    }

    /// Whether the threshold follows the model's rhythm (`--nag-threshold auto`).
    pub fn auto(&self) -> bool {
        self.nag == NagThreshold::Auto
    }

    /// Whether the item in progress (if one is) has stood still past twice the threshold.
    pub fn is_stale(&self) -> bool {
        is_stale(self.counts.rounds_in_progress, self.threshold())
    }
}

/// Everything the reminder and the drift mark count, in one place: the rounds since the last
/// `todo` call and the model's rhythm. Saved with the session as one record whenever it changes,
/// so a resumed one goes on counting where it stopped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReminderCounts {
    /// Rounds since the last `todo` call, or since the reminder went out (see [`after_round`]).
    /// Logs written before the counts were one record kept it apart (`Record::Rounds`).
    #[serde(default)]
    pub since_todo: u32,
    /// Tool rounds in this conversation so far; the repeated-step answer names rounds by it.
    pub round: u32,
    /// Rounds since the item in progress last changed (0 with none in progress).
    pub rounds_in_progress: u32,
    /// Rounds without `todo` since the model's last call of it, reminders or not; `None`
    /// before its first.
    pub silent: Option<u32>,
    /// The silent rounds between the model's last board updates, newest first.
    pub gaps: [Option<u32>; 2],
    /// The reminder went out in this turn while there was no board (at most once a turn).
    #[serde(default)]
    pub reminded_without_board: bool,
}

impl ReminderCounts {
    /// After a round that asked for tools. `changed` says whether the item in progress changed
    /// during it, `in_progress` whether one is in progress now.
    pub fn after_round(self, called_todo: bool, changed: bool, in_progress: bool) -> Self {
        let since_todo = after_round(self.since_todo, called_todo);
        let (silent, gaps) = match (called_todo, self.silent) {
            (true, Some(gap)) => (Some(0), [Some(gap), self.gaps[0]]),
            (true, None) => (Some(0), self.gaps),
            (false, silent) => (silent.map(|rounds| rounds.saturating_add(1)), self.gaps),
        };
        let rounds_in_progress = match (changed, in_progress) {
            (false, true) => self.rounds_in_progress.saturating_add(1),
            _ => 0,
        };
        let round = self.round.saturating_add(1);
        Self { since_todo, round, rounds_in_progress, silent, gaps, ..self }
    }

    /// The rhythm the model keeps: the same gap twice in a row.
    pub fn rhythm(&self) -> Option<u32> {
        match self.gaps {
            [Some(newest), Some(before)] if newest == before => Some(newest),
            _ => None,
        }
    }

    /// Whether the next request carries the reminder, and the threshold it is due at: the one
    /// decision. Due once the model was silent `threshold` rounds and the board is empty or has
    /// an item to work on ([`is_due`]); with no board, at most once a turn.
    pub fn due(&self, nag: NagThreshold, board: &Board) -> Option<u32> {
        let threshold = self.threshold(nag);
        let once_without_board = !(board.is_empty() && self.reminded_without_board);
        (is_due(self.since_todo, threshold, board) && once_without_board).then_some(threshold)
    }

    /// The threshold in force now; 0 is off.
    pub fn threshold(&self, nag: NagThreshold) -> u32 {
        match nag {
            NagThreshold::Fixed(rounds) => rounds,
            NagThreshold::Auto => self
                .rhythm()
                .map_or(DEFAULT_THRESHOLD, |k| k.saturating_add(1).max(DEFAULT_THRESHOLD)),
        }
    }
}

/// The count after a round that asked for tools.
pub fn after_round(rounds_since_todo: u32, called_todo: bool) -> u32 {
    if called_todo { 0 } else { rounds_since_todo.saturating_add(1) }
}

/// Whether the next request carries the reminder: the model was silent `threshold` rounds and
/// the board is empty or has an item to work on. Items that wait only for blockers still open
/// do not count. A threshold of 0 turns it off. ([`ReminderCounts::due`] adds: with no board, at
/// most once a turn.)
fn is_due(rounds_since_todo: u32, threshold: u32, board: &Board) -> bool {
    threshold > 0
        && rounds_since_todo >= threshold
        && (board.is_empty() || board.has_unblocked_open_items())
}

/// Whether the item in progress has stood still for more than twice the threshold (never with
/// the reminder off).
pub fn is_stale(rounds_in_progress: u32, threshold: u32) -> bool {
    threshold > 0 && rounds_in_progress > threshold.saturating_mul(STALE_THRESHOLDS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn board(status: &str) -> Board {
        let mut board = Board::default();
        board.update(&json!({"items": [{"id": "1", "text": "a", "status": status}]})).unwrap();
        board
    }

    /// The pace after rounds given as a pattern: `T` a round that called todo, `.` one that
    /// did not.
    fn pace(rounds: &str) -> ReminderCounts {
        rounds.chars().fold(ReminderCounts::default(), |pace, round| {
            pace.after_round(round == 'T', false, true)
        })
    }

    #[test]
    fn todo_resets_and_other_rounds_count() {
        assert_eq!(after_round(2, true), 0);
        assert_eq!(after_round(2, false), 3);
        assert_eq!(after_round(u32::MAX, false), u32::MAX);
    }

    #[test]
    fn the_counts_since_todo_follow_the_same_rule() {
        assert_eq!(pace("T..").since_todo, 2);
        assert_eq!(pace("..T").since_todo, 0);
        assert_eq!(pace("").since_todo, 0);
    }

    #[test]
    fn due_at_the_threshold_with_open_or_no_items() {
        let empty = Board::default();
        assert!(!is_due(2, 3, &empty));
        assert!(is_due(3, 3, &empty));
        assert!(is_due(4, 3, &board("pending")));
    }

    #[test]
    fn never_due_when_off_or_when_everything_is_done() {
        assert!(!is_due(10, 0, &Board::default()));
        assert!(!is_due(10, 3, &board("completed")));
    }

    #[test]
    fn items_that_only_wait_for_open_blockers_do_not_count_as_open() {
        use crate::board::{BoardItem, Status};
        let item = |id: &str, status, blocked_by: &[&str]| BoardItem {
            id: id.into(),
            text: "step".into(),
            status,
            active_form: None,
            blocked_by: blocked_by.iter().map(|id| (*id).to_owned()).collect(),
            ..BoardItem::default()
        };
        // A validated board always has an open item free to start (blockers form no cycle and
        // exist); one restored from a saved session need not. Every open item here waits for one
        // that is gone or for another that waits.
        let blocked = Board::from_items(vec![
            item("1", Status::Completed, &[]),
            item("2", Status::Pending, &["gone"]),
            item("3", Status::Pending, &["2"]),
        ]);
        assert!(blocked.has_open_items());
        assert!(!is_due(10, 3, &blocked));
        let free = Board::from_items(vec![
            item("1", Status::Pending, &[]),
            item("2", Status::Pending, &["1"]),
        ]);
        assert!(is_due(3, 3, &free), "one free item is enough");
    }

    #[test]
    fn thresholds_parse_from_flags_and_files() {
        assert_eq!("4".parse(), Ok(NagThreshold::Fixed(4)));
        assert_eq!(" AUTO ".parse(), Ok(NagThreshold::Auto));
        assert!("three".parse::<NagThreshold>().unwrap_err().contains("\"auto\""));
        let from_toml = |text: &str| serde_json::from_str::<NagThreshold>(text);
        assert_eq!(from_toml("0").unwrap(), NagThreshold::Fixed(0));
        assert_eq!(from_toml("\"auto\"").unwrap(), NagThreshold::Auto);
        assert!(from_toml("-1").is_err());
        assert_eq!(NagThreshold::Auto.to_string(), "auto");
    }

    #[test]
    fn a_fixed_threshold_ignores_the_rhythm() {
        assert_eq!(pace("T....T....T").threshold(NagThreshold::Fixed(3)), 3);
    }

    #[test]
    fn auto_waits_one_round_longer_than_a_rhythm_shown_twice_in_a_row() {
        // Gaps of 4 and 4: not reminded before 5 silent rounds.
        assert_eq!(pace("T....T....T").rhythm(), Some(4));
        assert_eq!(pace("T....T....T").threshold(NagThreshold::Auto), 5);
        // One gap is no rhythm yet, two different ones neither: the default.
        assert_eq!(pace("T....T").threshold(NagThreshold::Auto), DEFAULT_THRESHOLD);
        assert_eq!(pace("T....T.....T").threshold(NagThreshold::Auto), DEFAULT_THRESHOLD);
        // The newest two gaps count: 6, then 4 and 4.
        assert_eq!(pace("T......T....T....T").threshold(NagThreshold::Auto), 5);
    }

    #[test]
    fn auto_never_reminds_sooner_than_the_default_and_a_silent_model_within_twice_its_rhythm() {
        for k in 0..12u32 {
            let gap = ".".repeat(k as usize);
            let threshold = pace(&format!("T{gap}T{gap}T")).threshold(NagThreshold::Auto);
            assert!(threshold >= DEFAULT_THRESHOLD, "k = {k}");
            assert!(threshold > k, "not reminded before k + 1 silent rounds (k = {k})");
            assert!(
                threshold <= DEFAULT_THRESHOLD.max(2 * k),
                "reminded within max(3, 2k) (k = {k})"
            );
        }
        assert_eq!(pace("").threshold(NagThreshold::Auto), DEFAULT_THRESHOLD);
        assert_eq!(pace("......").threshold(NagThreshold::Auto), DEFAULT_THRESHOLD);
    }

    #[test]
    fn rounds_in_progress_count_until_the_item_changes() {
        let still = ReminderCounts::default().after_round(true, true, true);
        assert_eq!(still.rounds_in_progress, 0);
        let later = still.after_round(false, false, true).after_round(true, false, true);
        assert_eq!(later.rounds_in_progress, 2, "a board update that keeps the item counts on");
        assert_eq!(later.after_round(true, true, true).rounds_in_progress, 0);
        assert_eq!(later.after_round(false, false, false).rounds_in_progress, 0);
        assert_eq!(later.round, 3);
    }

    #[test]
    fn stale_past_twice_the_threshold() {
        assert!(!is_stale(6, 3));
        assert!(is_stale(7, 3));
        assert!(!is_stale(100, 0));
    }
}
