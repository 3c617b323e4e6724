//! What the pager shows for a board item's last check (Enter or `o` on the focused board): the
//! command, how it ended — its exit in words, how long it took, the local time it ran — and
//! the tail of its output keel kept.

use super::super::super::theme;
use super::super::board::marks::Clock;
use super::output::Output;
use crate::agent::{CheckEnd, CheckRecord, check_time};
use ratatui::style::Style;

impl Output {
    /// Item `item`'s last check, `record`, with times on `clock`.
    pub fn check(item: &str, record: &CheckRecord, clock: Clock) -> Self {
        let (mut text, mut styles) = (String::new(), Vec::new());
        let mut push = |line: &str, style: Style| {
            text.push_str(line);
            text.push('\n');
            styles.push(style);
        };
        push(&format!("$ {}", record.command), theme::USER_TEXT);
        let at = clock.hh_mm(record.at);
        let took = check_time(record.duration_ms());
        let (ended, style) = match &record.end {
            CheckEnd::Running => (format!("running since {at}"), theme::RUN_RUNNING),
            CheckEnd::Passed => (format!("passed (exit 0) · {took} · at {at}"), theme::RUN_OK),
            CheckEnd::Failed { why } => {
                (format!("failed ({why}) · {took} · at {at}"), theme::RUN_FAILED)
            }
        };
        push(&ended, style);
        if record.failures_in_row > 1 {
            let stale = if record.stale() { ": stale" } else { "" };
            let note = format!("failed {} times in a row{stale}", record.failures_in_row);
            push(&note, theme::STATUS_ATTENTION);
        }
        push("", Style::new());
        if record.output.is_empty() {
            push("(no output)", theme::DIM);
        }
        for line in record.output.lines() {
            push(line, Style::new());
        }
        let name = format!("check #{item}");
        let mut output = Self::indexed(None, name, record.command.clone(), text, styles);
        output.styled_from = 0;
        output
    }
}
