//! The one-line status bar: provider and model, what the agent is doing (and `PLAN` in plan
//! mode), tokens in and out (and the share of the prompt read from the provider's cache, where it
//! says, and of the context window the next request takes), rounds since the last board update
//! against the reminder threshold, rounds the item in progress has stood still (marked stale), and
//! the keys that matter now.
//!
//! Facts go on the left and hints on the right; when the line is too short, hints go first.

use super::super::text::{clean_line, compact_count, truncate, width as text_width};
use super::super::theme;
use super::board_lines::rounds_text;
use super::spinner;
use crate::agent::{Activity, Snapshot};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use std::time::{Duration, Instant};

const SEPARATOR: &str = " │ ";

/// Everything the bar shows that is not in the snapshot.
#[derive(Debug, Clone, Copy)]
pub struct StatusInfo<'a> {
    pub now: Instant,
    pub frame: u64,
    /// A message that takes the hints' place for a moment ("press Ctrl+C again to quit").
    pub flash: Option<&'a str>,
    /// The agent task has ended: nothing more will happen.
    pub agent_gone: bool,
    pub hints: &'a [(String, &'static str)],
}

/// Draws the bar into `area` (one row).
pub fn render(snapshot: &Snapshot, info: &StatusInfo<'_>, area: Rect, buf: &mut Buffer) {
    if area.is_empty() {
        return;
    }
    buf.set_style(area, theme::STATUS_BAR);
    let width = usize::from(area.width);
    let mut left = facts(snapshot, info, width);
    let left_width: usize = left.iter().map(Span::width).sum();
    let right = match info.flash {
        Some(flash) => vec![Span::styled(format!("{flash} "), theme::STATUS_ATTENTION)],
        None => hint_spans(info.hints, width.saturating_sub(left_width + 1)),
    };
    let right_width: usize = right.iter().map(Span::width).sum();
    if left_width > width {
        let text: String = left.iter().map(|span| span.content.as_ref()).collect();
        left = vec![Span::raw(truncate(&text, width).into_owned())];
    }
    buf.set_line(area.x, area.y, &Line::from(left), area.width);
    if right_width > 0 && left_width + right_width < width {
        let x = area.x + u16::try_from(width - right_width).unwrap_or(0);
        buf.set_line(x, area.y, &Line::from(right), area.width);
    }
}

/// The facts that fit in `width`, dropping the least useful first: provider and model, then
/// the token counts, then the drift. The agent's state (and plan mode) always stays.
fn facts(snapshot: &Snapshot, info: &StatusInfo<'_>, width: usize) -> Vec<Span<'static>> {
    let mut groups = fact_groups(snapshot, info);
    let total = |groups: &[Group]| -> usize {
        groups
            .iter()
            .map(|group| group.spans.iter().map(Span::width).sum::<usize>() + SEPARATOR.len())
            .sum()
    };
    for rank in 0..=Group::LAST_DROPPED {
        if total(&groups) <= width {
            break;
        }
        groups.retain(|group| group.drop != Some(rank));
    }
    let mut spans = vec![Span::raw(" ")];
    for group in groups {
        if spans.len() > 1 {
            spans.push(Span::styled(SEPARATOR, theme::DIM));
        }
        spans.extend(group.spans);
    }
    spans
}

/// One fact, and when it goes if the bar is short (lowest first; `None`: never).
struct Group {
    spans: Vec<Span<'static>>,
    drop: Option<u8>,
}

impl Group {
    /// The highest `drop` rank in use.
    const LAST_DROPPED: u8 = 2;

    fn kept(spans: Vec<Span<'static>>) -> Self {
        Self { spans, drop: None }
    }
}

/// Provider, state (with plan mode), tokens, the reminder's counter when it is on, and how long
/// the item in progress has stood still.
fn fact_groups(snapshot: &Snapshot, info: &StatusInfo<'_>) -> Vec<Group> {
    let provider = if snapshot.provider.is_empty() {
        "keel".to_owned()
    } else if snapshot.model.is_empty() {
        snapshot.provider.to_string()
    } else {
        format!("{} · {}", snapshot.provider, snapshot.model)
    };
    let (state, state_style) = if info.agent_gone {
        ("agent stopped".to_owned(), theme::ERROR)
    } else {
        activity(&snapshot.activity, info.now, info.frame)
    };
    let mut state_spans = Vec::new();
    if snapshot.plan_mode {
        state_spans.push(Span::styled(" PLAN ", theme::PLAN_BADGE));
        state_spans.push(Span::raw(" "));
    }
    let waiting = snapshot.plan_ready && snapshot.activity == Activity::Idle && !info.agent_gone;
    state_spans.push(if waiting {
        Span::styled("plan ready for your approval", theme::STATUS_ATTENTION)
    } else {
        Span::styled(state, state_style)
    });
    let usage = &snapshot.usage;
    let mut tokens =
        format!("↑{} ↓{}", compact_count(usage.input_tokens), compact_count(usage.output_tokens));
    if let Some(percent) = usage.cache_percent() {
        tokens.push_str(&format!(" cache {percent}%"));
    }
    if let Some(percent) = snapshot.context.percent() {
        tokens.push_str(&format!(" ctx {percent}%"));
    }
    let mut groups = vec![
        Group { spans: vec![Span::raw(provider)], drop: Some(0) },
        Group::kept(state_spans),
        Group { spans: vec![Span::raw(tokens)], drop: Some(1) },
    ];
    if snapshot.nag_threshold > 0 {
        let due = snapshot.rounds_since_todo + 1 >= snapshot.nag_threshold;
        let auto = if snapshot.nag_auto { " auto" } else { "" };
        groups.push(Group::kept(vec![Span::styled(
            format!("todo {}/{}{auto}", snapshot.rounds_since_todo, snapshot.nag_threshold),
            if due { theme::STATUS_BUSY } else { Style::new() },
        )]));
    }
    if let Some(item) = snapshot.board.in_progress().filter(|_| snapshot.rounds_in_progress > 0) {
        let rounds = rounds_text(snapshot.rounds_in_progress);
        let (text, style) = if snapshot.is_stale() {
            (format!("#{} stale, {rounds}", clean_line(&item.id)), theme::TODO_STALE)
        } else {
            (format!("#{} {rounds}", clean_line(&item.id)), Style::new())
        };
        groups.push(Group { spans: vec![Span::styled(text, style)], drop: Some(2) });
    }
    groups
}

/// The agent's state in words, and how loudly to show it.
fn activity(activity: &Activity, now: Instant, frame: u64) -> (String, Style) {
    match activity {
        Activity::Idle => ("idle".to_owned(), Style::new()),
        Activity::Thinking => (format!("{} thinking", spinner(frame)), theme::STATUS_BUSY),
        Activity::RunningTool { name } => {
            (format!("{} running `{name}`", spinner(frame)), theme::STATUS_BUSY)
        }
        Activity::Retrying { attempt, until, .. } => {
            let left = until.saturating_duration_since(now);
            (
                format!("waiting for retry in {}s (attempt {attempt})", seconds_up(left)),
                theme::STATUS_BUSY,
            )
        }
        Activity::AwaitingApproval => ("awaiting approval".to_owned(), theme::STATUS_ATTENTION),
        Activity::Compacting => (format!("{} compacting", spinner(frame)), theme::STATUS_BUSY),
    }
}

/// Whole seconds, rounded up: a countdown shows 1s, not 0s, until it is over.
pub fn seconds_up(duration: Duration) -> u64 {
    duration.as_secs() + u64::from(duration.subsec_nanos() > 0)
}

/// As many hints as fit in `room` columns, in order.
fn hint_spans(hints: &[(String, &'static str)], room: usize) -> Vec<Span<'static>> {
    let mut spans = Vec::new();
    let mut used = 1;
    for (key, label) in hints {
        let separator = if spans.is_empty() { 0 } else { 3 };
        let cost = separator + text_width(key) + 1 + text_width(label);
        if used + cost > room {
            break;
        }
        if separator > 0 {
            spans.push(Span::styled(" · ", theme::DIM));
        }
        spans.push(Span::styled(key.clone(), theme::KEY));
        spans.push(Span::raw(format!(" {label}")));
        used += cost;
    }
    if !spans.is_empty() {
        spans.push(Span::raw(" "));
    }
    spans
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn countdowns_round_up() {
        assert_eq!(seconds_up(Duration::from_millis(4_100)), 5);
        assert_eq!(seconds_up(Duration::from_secs(4)), 4);
        assert_eq!(seconds_up(Duration::ZERO), 0);
    }
}
