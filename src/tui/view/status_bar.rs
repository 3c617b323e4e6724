//! The one-line status bar: provider and model, what the agent is doing (and `PLAN` in plan
//! mode), the child agents running, the turn's time, tokens in and out (and the share of the prompt read from the
//! provider's cache, where it says, and of the context window the next request takes), the cost
//! (the child agents' with it) where the model's price is known, rounds since the
//! last board update against the reminder threshold (`↻ 1/3`), rounds the item in progress has
//! stood still (marked stale), the sandbox commands run in, and the keys that matter now.
//!
//! Facts go on the left and hints on the right; when the line is too short, hints go first, then
//! the facts in the order of [`rank`].

use super::super::text::{clean_line, compact_count, truncate, width as text_width};
use super::super::theme;
use super::board::lines::rounds_text;
use super::spinner;
use crate::agent::{Activity, Snapshot};
use crate::pricing::Price;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use std::time::{Duration, Instant};

const SEPARATOR: &str = " │ ";
/// How the sandbox's label ends when it cannot be set up (see `runtime::sandbox`).
const UNAVAILABLE: &str = "unavailable";

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
    /// The model's price, when it is known.
    pub price: Option<Price>,
}

/// When each fact leaves a bar too short for all of them, first to last. The agent's state (with
/// plan mode) and the reminder's counter always stay.
mod rank {
    pub const SANDBOX: u8 = 0;
    pub const PROVIDER: u8 = 1;
    pub const COST: u8 = 2;
    pub const TOKENS: u8 = 3;
    pub const TURN_TIME: u8 = 4;
    pub const DRIFT: u8 = 5;
    /// The highest rank in use.
    pub const LAST: u8 = DRIFT;
}

/// Marks the reminder's counter: rounds since the board last changed, against the threshold.
const REMINDER_MARK: &str = "↻";

/// Draws the bar into `area` (one row).
pub fn render(snapshot: &Snapshot, info: &StatusInfo<'_>, area: Rect, buf: &mut Buffer) {
    if area.is_empty() {
        return;
    }
    buf.set_style(area, theme::STATUS_BAR);
    let width = usize::from(area.width);
    // A flash ("Press Ctrl+C again to quit") is what the person must read now: the facts make
    // room for it, however short the line.
    let flash = info.flash.map(|flash| {
        let flash = truncate(flash, width.saturating_sub(2)).into_owned();
        vec![Span::styled(format!("{flash} "), theme::STATUS_ATTENTION)]
    });
    let flash_width =
        flash.as_ref().map_or(0, |spans| spans.iter().map(Span::width).sum::<usize>() + 1);
    let room = width.saturating_sub(flash_width);
    let mut left = facts(snapshot, info, room);
    let mut left_width: usize = left.iter().map(Span::width).sum();
    if left_width > room {
        let text: String = left.iter().map(|span| span.content.as_ref()).collect();
        left = vec![Span::raw(truncate(&text, room).into_owned())];
        left_width = left.iter().map(Span::width).sum();
    }
    let right = match flash {
        Some(flash) => flash,
        None => hint_spans(info.hints, width.saturating_sub(left_width + 1)),
    };
    let right_width: usize = right.iter().map(Span::width).sum();
    buf.set_line(area.x, area.y, &Line::from(left), area.width);
    if right_width > 0 && left_width + right_width < width {
        let x = area.x + u16::try_from(width - right_width).unwrap_or(0);
        buf.set_line(x, area.y, &Line::from(right), area.width);
    }
}

/// The facts that fit in `width`, dropping the least useful first (see [`rank`]).
fn facts(snapshot: &Snapshot, info: &StatusInfo<'_>, width: usize) -> Vec<Span<'static>> {
    let mut groups = fact_groups(snapshot, info);
    // A space first, then the groups with a separator between each two.
    let total = |groups: &[Group]| -> usize {
        let facts: usize = groups.iter().flat_map(|group| &group.spans).map(Span::width).sum();
        1 + facts + groups.len().saturating_sub(1) * text_width(SEPARATOR)
    };
    for rank in 0..=rank::LAST {
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
    fn dropped_at(rank: u8, spans: Vec<Span<'static>>) -> Self {
        Self { spans, drop: Some(rank) }
    }

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
    let mut groups = vec![
        Group::dropped_at(rank::PROVIDER, vec![Span::raw(provider)]),
        Group::kept(state_spans),
    ];
    groups.extend(children(snapshot));
    groups.extend(turn_time(snapshot, info.now));
    groups.push(tokens(snapshot));
    groups.extend(cost(snapshot, info.price));
    groups.extend(reminder(snapshot));
    groups.extend(drift(snapshot));
    groups.extend(sandbox(snapshot));
    groups.extend(mcp(snapshot));
    groups
}

/// `sandbox: workspace · no network`: where commands run. A sandbox that cannot be set up stays
/// in view, marked, for as long as it lasts.
fn sandbox(snapshot: &Snapshot) -> Option<Group> {
    let label = snapshot.sandbox.as_deref()?;
    Some(if label.ends_with(UNAVAILABLE) {
        Group::kept(vec![Span::styled(label.to_owned(), theme::STATUS_ATTENTION)])
    } else {
        Group::dropped_at(rank::SANDBOX, vec![Span::styled(label.to_owned(), theme::DIM)])
    })
}

/// `mcp 2/3`: the MCP servers up of those enabled (`starting` while some start), in the error
/// colour when one failed; nothing when none is configured.
fn mcp(snapshot: &Snapshot) -> Option<Group> {
    use crate::tools::mcp::Status;
    let enabled: Vec<&Status> = snapshot
        .mcp
        .iter()
        .map(|server| &server.status)
        .filter(|status| **status != Status::Disabled)
        .collect();
    if enabled.is_empty() {
        return None;
    }
    let ready = enabled.iter().filter(|status| ***status == Status::Ready).count();
    let mut text = format!("mcp {ready}/{}", enabled.len());
    if enabled.iter().any(|status| **status == Status::Starting) {
        text.push_str(" starting");
    }
    let failed = enabled.iter().any(|status| matches!(status, Status::Failed(_)));
    let style = if failed { theme::ERROR } else { Style::new() };
    Some(Group::dropped_at(rank::PROVIDER, vec![Span::styled(text, style)]))
}

/// `turn 12s`: how long the running turn has taken so far, or the last one took.
fn turn_time(snapshot: &Snapshot, now: Instant) -> Option<Group> {
    let elapsed = snapshot.turn_clock.elapsed(now)?;
    Some(Group::dropped_at(rank::TURN_TIME, vec![Span::raw(format!("turn {}", clock(elapsed)))]))
}

/// `↑12.3k ↓2.0k cache 93% ctx 62%`: tokens in and out, the prompt's share read from the cache,
/// and the next request's share of the context window.
fn tokens(snapshot: &Snapshot) -> Group {
    let usage = &snapshot.usage;
    let mut tokens =
        format!("↑{} ↓{}", compact_count(usage.input_tokens), compact_count(usage.output_tokens));
    if let Some(percent) = usage.cache_percent() {
        tokens.push_str(&format!(" cache {percent}%"));
    }
    if let Some(percent) = snapshot.context.percent() {
        tokens.push_str(&format!(" ctx {percent}%"));
    }
    Group::dropped_at(rank::TOKENS, vec![Span::raw(tokens)])
}

/// `2 agents`: the child agents running now.
fn children(snapshot: &Snapshot) -> Option<Group> {
    let running = snapshot.children.iter().filter(|child| child.is_running()).count();
    let noun = if running == 1 { "agent" } else { "agents" };
    (running > 0)
        .then(|| Group::kept(vec![Span::styled(format!("{running} {noun}"), theme::STATUS_BUSY)]))
}

/// `$0.42`: what the conversation's tokens cost, its child agents' with them, where the model's
/// price is known.
fn cost(snapshot: &Snapshot, price: Option<Price>) -> Option<Group> {
    let mut usage = snapshot.usage;
    for child in &snapshot.children {
        usage.add(child.usage);
    }
    if usage.input_tokens == 0 && usage.output_tokens == 0 {
        return None;
    }
    let dollars = price?.cost(&usage);
    Some(Group::dropped_at(rank::COST, vec![Span::raw(crate::pricing::dollars(dollars))]))
}

/// `↻ 1/3`: rounds since the board last changed against the reminder's threshold, when it is on.
fn reminder(snapshot: &Snapshot) -> Option<Group> {
    if snapshot.reminder.threshold() == 0 {
        return None;
    }
    let due = snapshot.reminder.since_todo() + 1 >= snapshot.reminder.threshold();
    let auto = if snapshot.reminder.auto() { " auto" } else { "" };
    Some(Group::kept(vec![Span::styled(
        format!(
            "{REMINDER_MARK} {}/{}{auto}",
            snapshot.reminder.since_todo(),
            snapshot.reminder.threshold()
        ),
        if due { theme::STATUS_BUSY } else { Style::new() },
    )]))
}

/// `#2 4 rounds`: how long the item in progress has stood still, marked when stale.
fn drift(snapshot: &Snapshot) -> Option<Group> {
    let item =
        snapshot.board.in_progress().filter(|_| snapshot.reminder.rounds_in_progress() > 0)?;
    let rounds = rounds_text(snapshot.reminder.rounds_in_progress());
    let (text, style) = if snapshot.is_stale() {
        (format!("#{} stale, {rounds}", clean_line(&item.id)), theme::TODO_STALE)
    } else {
        (format!("#{} {rounds}", clean_line(&item.id)), Style::new())
    };
    Some(Group::dropped_at(rank::DRIFT, vec![Span::styled(text, style)]))
}

/// `8s`, `1m 05s`, `2h 03m`.
fn clock(elapsed: Duration) -> String {
    const MINUTE: u64 = 60;
    const HOUR: u64 = 60 * MINUTE;
    let seconds = elapsed.as_secs();
    match seconds {
        0..MINUTE => format!("{seconds}s"),
        MINUTE..HOUR => format!("{}m {:02}s", seconds / MINUTE, seconds % MINUTE),
        _ => format!("{}h {:02}m", seconds / HOUR, seconds % HOUR / MINUTE),
    }
}

/// The agent's state in words, and how loudly to show it.
fn activity(activity: &Activity, now: Instant, frame: u64) -> (String, Style) {
    match activity {
        Activity::Idle => ("idle".to_owned(), Style::new()),
        Activity::Thinking => (format!("{} thinking", spinner(frame)), theme::STATUS_BUSY),
        Activity::RunningTool { name } => {
            let name = crate::visible::one_line(name);
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
    fn times_read_at_a_glance() {
        assert_eq!(clock(Duration::from_millis(8_900)), "8s");
        assert_eq!(clock(Duration::from_secs(65)), "1m 05s");
        assert_eq!(clock(Duration::from_secs(2 * 3600 + 3 * 60 + 9)), "2h 03m");
    }

    #[test]
    fn countdowns_round_up() {
        assert_eq!(seconds_up(Duration::from_millis(4_100)), 5);
        assert_eq!(seconds_up(Duration::from_secs(4)), 4);
        assert_eq!(seconds_up(Duration::ZERO), 0);
    }
}
