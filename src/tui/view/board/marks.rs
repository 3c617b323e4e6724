//! What the board pane says of an item's check, after its text: `✓` once its last check
//! passed, `✗ 14:32` when it failed (the time of that run), `checking…` while it runs, `stale`
//! after three failures in a row, and a dim `check` for a check never run. Plan mode's waiting
//! plan also shows each item's check command under it, so the person sees what they approve.
//!
//! Times are the person's local time of day: [`Clock`] holds the offset from UTC, found once
//! when keel starts, and passed in so a test draws the same marks on any machine.

use crate::agent::{CheckEnd, CheckRecord, Snapshot};
use crate::board::BoardItem;
use crate::tui::text::clean_line;
use crate::tui::theme;
use ratatui::text::Span;
use std::time::{SystemTime, UNIX_EPOCH};

const SECONDS_PER_MINUTE: i64 = 60;
const SECONDS_PER_HOUR: i64 = 60 * SECONDS_PER_MINUTE;
const SECONDS_PER_DAY: i64 = 24 * SECONDS_PER_HOUR;
/// The largest offset from UTC any zone uses (UTC+14), with room to spare: anything past it
/// is not an offset.
const MAX_OFFSET_SECONDS: i64 = 18 * SECONDS_PER_HOUR;
/// What goes before a mark, after the item's text.
const GAP: &str = "  ";
/// What goes before the check command under an item of a waiting plan.
const CHECK_LINE_LEAD: &str = "check: ";

/// The person's clock: how far their local time is from UTC.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Clock {
    utc_offset_seconds: i64,
}

impl Clock {
    /// A clock `seconds` east of UTC (negative: west).
    pub fn at_offset(seconds: i64) -> Self {
        Self { utc_offset_seconds: seconds.clamp(-MAX_OFFSET_SECONDS, MAX_OFFSET_SECONDS) }
    }

    /// The local clock now: `TZ`, else the system's zone; UTC when neither can be read.
    pub fn local() -> Self {
        use chrono::Offset as _;
        Self::at_offset(i64::from(chrono::Local::now().offset().fix().local_minus_utc()))
    }

    /// `at`'s local time of day, to the minute: `14:32`.
    pub fn hh_mm(self, at: SystemTime) -> String {
        let since_epoch = match at.duration_since(UNIX_EPOCH) {
            Ok(after) => i64::try_from(after.as_secs()).unwrap_or(0),
            Err(before) => -i64::try_from(before.duration().as_secs()).unwrap_or(0),
        };
        let of_day = (since_epoch + self.utc_offset_seconds).rem_euclid(SECONDS_PER_DAY);
        let (hours, minutes) =
            (of_day / SECONDS_PER_HOUR, of_day % SECONDS_PER_HOUR / SECONDS_PER_MINUTE);
        format!("{hours:02}:{minutes:02}")
    }
}

/// The mark after an item's text, if the item has a check (or one runs for it now); a check
/// never run goes unmarked under a waiting plan, which shows its command (`check_line`).
pub fn check_mark(snapshot: &Snapshot, item: &BoardItem, clock: Clock) -> Vec<Span<'static>> {
    let record = snapshot.checks.get(&item.id).map(AsRef::as_ref);
    // A record of a check the item no longer has says nothing of the one it has now.
    let current = record.filter(|record| item.check.as_deref() == Some(record.command.as_str()));
    let mark = |text: String, style| vec![Span::styled(format!("{GAP}{text}"), style)];
    match (record, current) {
        (Some(record), _) if record.end == CheckEnd::Running => {
            mark("checking…".to_owned(), theme::RUN_RUNNING)
        }
        _ if item.check.is_none() => Vec::new(),
        _ if item.check_passed => mark("✓".to_owned(), theme::RUN_OK),
        (_, Some(record)) => failed_or_passed(record, clock),
        // A waiting plan shows the command itself under the item.
        _ if snapshot.plan_ready => Vec::new(),
        _ => mark("check".to_owned(), theme::DIM),
    }
}

/// `✓`, or `✗ 14:32` and, three failures in a row on, `stale`.
fn failed_or_passed(record: &CheckRecord, clock: Clock) -> Vec<Span<'static>> {
    if record.passed() {
        return vec![Span::styled(format!("{GAP}✓"), theme::RUN_OK)];
    }
    let mut spans =
        vec![Span::styled(format!("{GAP}✗ {}", clock.hh_mm(record.at)), theme::RUN_FAILED)];
    if record.stale() {
        spans.push(Span::styled(" stale", theme::STATUS_ATTENTION));
    }
    spans
}

/// The line under an item of a plan that waits for approval: `check: cargo test -q parser`.
pub fn check_line(item: &BoardItem) -> Option<Span<'static>> {
    let command = item.check.as_deref()?;
    Some(Span::styled(format!("{CHECK_LINE_LEAD}{}", clean_line(command)), theme::DIM))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn the_time_of_day_is_shifted_by_the_offset_and_wraps_at_midnight() {
        // 2026-12-07 23:45:10 UTC.
        let at = UNIX_EPOCH + Duration::from_secs(1_796_687_110);
        assert_eq!(Clock::default().hh_mm(at), "23:45");
        assert_eq!(Clock::at_offset(SECONDS_PER_HOUR).hh_mm(at), "00:45");
        assert_eq!(Clock::at_offset(-(5 * SECONDS_PER_HOUR + 30 * 60)).hh_mm(at), "18:15");
    }
}
