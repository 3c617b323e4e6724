//! What keel knows of an item's last check (docs/board.md, "Checks"): the command, how it
//! ended, the tail of what it printed, when, and how many times in a row it has failed. The
//! board pane marks items from it (✓ passed, ✗ failed, stale), Enter on an item shows it
//! whole, and it is saved with the session so a resumed one shows the same marks.

use serde::{Deserialize, Serialize};
use std::time::{Duration, SystemTime};

/// Failed checks of one item in a row after which the model is told plainly to fix the cause
/// or re-plan, and the board marks the item stale.
pub const STALE_AFTER: u32 = 3;
/// The most of a check's output kept, from its end: the lines that say why it failed.
pub const OUTPUT_TAIL_BYTES: usize = 4 * 1024;
/// The most lines of a failed check's output the model reads with the refusal.
pub const OUTPUT_TAIL_LINES: usize = 20;

/// How a check ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "state")]
pub enum CheckEnd {
    /// Still running.
    Running,
    /// Exit 0: the item could be completed.
    Passed,
    /// Anything else, in words: `exit 1`, `timed out after 300 s`, `could not start: …`.
    Failed { why: String },
}

/// An item's last check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckRecord {
    pub command: String,
    pub end: CheckEnd,
    pub exit_code: Option<i32>,
    /// The last lines of its output (stdout and stderr as `bash` reports them), at most
    /// [`OUTPUT_TAIL_BYTES`].
    pub output: String,
    /// When it started.
    pub at: SystemTime,
    pub duration: Duration,
    /// Failed runs of this item's check in a row, this one included (0 once one passes).
    pub failures_in_row: u32,
}

impl CheckRecord {
    /// A check of `command` starting now, after `failures_in_row` failures.
    pub fn running(command: &str, failures_in_row: u32) -> Self {
        Self {
            command: command.to_owned(),
            end: CheckEnd::Running,
            exit_code: None,
            output: String::new(),
            at: SystemTime::now(),
            duration: Duration::ZERO,
            failures_in_row,
        }
    }

    /// How long it ran, in whole milliseconds, as events and hooks tell it.
    pub fn duration_ms(&self) -> u64 {
        u64::try_from(self.duration.as_millis()).unwrap_or(u64::MAX)
    }

    pub fn passed(&self) -> bool {
        self.end == CheckEnd::Passed
    }

    /// The item's check has failed [`STALE_AFTER`] times in a row.
    pub fn stale(&self) -> bool {
        self.failures_in_row >= STALE_AFTER
    }

    /// The exit in words, as the refusal and the lines print it: `exit 1`, `passed`, ….
    pub fn exit_words(&self) -> String {
        match &self.end {
            CheckEnd::Running => "running".to_owned(),
            CheckEnd::Passed => "exit 0".to_owned(),
            CheckEnd::Failed { why } => why.clone(),
        }
    }
}

/// The last [`OUTPUT_TAIL_LINES`] lines of `output`, within [`OUTPUT_TAIL_BYTES`], cut at a
/// character boundary.
pub fn tail(output: &str) -> String {
    let output = output.trim_end();
    let from_lines = output
        .char_indices()
        .filter(|&(_, c)| c == '\n')
        .map(|(at, _)| at + 1)
        .rev()
        .nth(OUTPUT_TAIL_LINES - 1)
        .unwrap_or(0);
    let mut from = from_lines.max(output.len().saturating_sub(OUTPUT_TAIL_BYTES));
    while !output.is_char_boundary(from) {
        from += 1;
    }
    output[from..].to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tail_is_the_last_lines_within_the_cap() {
        let many: String = (1..=30).map(|n| format!("line {n}\n")).collect();
        let kept = tail(&many);
        assert!(kept.starts_with("line 11\n") && kept.ends_with("line 30"), "{kept}");
        let wide = "é".repeat(OUTPUT_TAIL_BYTES);
        assert!(tail(&wide).len() <= OUTPUT_TAIL_BYTES);
        assert_eq!(tail("ok\n"), "ok");
    }

    #[test]
    fn three_failures_in_a_row_make_an_item_stale() {
        let mut record = CheckRecord::running("false", STALE_AFTER - 1);
        assert!(!record.stale());
        record.failures_in_row += 1;
        assert!(record.stale());
    }
}
