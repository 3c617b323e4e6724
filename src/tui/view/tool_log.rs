//! The tool pane: the running and recent tool calls, newest at the bottom, each with its command or
//! path, how it ended and how long it took; the newest one also shows the tail of its output.
//!
//! Only the end of an output is ever read (see `text::tail_lines`), so a command that printed
//! megabytes costs no more to draw than one that printed a line.

use super::super::text::{tail_lines, truncate};
use super::super::theme;
use super::{pane, spinner};
use crate::agent::{ToolRun, ToolStatus};
use crate::tools::bash::hint::SandboxHint;
use crate::tools::names::screen_name;
use crate::visible::one_line;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Bytes read from the end of an output to find its last lines.
const TAIL_BYTES: usize = 16 * 1024;
/// How to read a call's whole output, in the pane's bottom border.
const OUTPUT_HINT: &str = " Ctrl+G whole output ";
/// The fewest characters of a search's pattern its row keeps before its time gives way.
const MIN_SUMMARY_CHARS: usize = 12;
/// Indentation of output lines under their call.
const OUTPUT_INDENT: &str = "  ";
/// Cells of a border kept on each side of a call's line drawn into it.
const BORDER_INSET: usize = 2;
/// The narrowest border a call's line is drawn into.
const BORDER_MIN_WIDTH: usize = 12;

/// What searches found, by call id (`Snapshot::call_tallies`).
type Tallies = imbl::HashMap<String, Arc<str>>;

/// Draws the newest calls of `runs` into `area`, a search with what it found (`tallies`).
/// `frame` animates running calls; `now` says how long they have been running.
pub fn render(
    (runs, tallies): (&imbl::Vector<Arc<ToolRun>>, &Tallies),
    area: Rect,
    buf: &mut Buffer,
    (frame, now): (u64, Instant),
) {
    let mut block = pane(Span::styled(" Tools ", theme::TITLE), false);
    if !runs.is_empty() {
        block = block.title_bottom(Line::styled(OUTPUT_HINT, theme::DIM).right_aligned());
    }
    let inner = block.inner(area);
    block.render(area, buf);
    if inner.is_empty() {
        return;
    }
    let width = usize::from(inner.width);
    let height = usize::from(inner.height);
    if runs.is_empty() {
        buf.set_line(
            inner.x,
            inner.y,
            &Line::styled(truncate("No tool calls yet.", width).into_owned(), theme::DIM),
            inner.width,
        );
        return;
    }
    // Headers of the newest calls, oldest first, then as much of the newest output as fits.
    let headers = runs.len().min(height);
    let newest = runs.len() - 1;
    let room_for_output = height - headers;
    let mut lines: Vec<Line<'static>> = Vec::with_capacity(height);
    for index in runs.len() - headers..runs.len() {
        let run = &runs[index];
        lines.push(header(run, tallies.get(&run.id), width, frame, now));
        if index == newest && room_for_output > 0 {
            for text in tail_lines(&run.output, room_for_output, TAIL_BYTES) {
                if text.trim().is_empty() && lines.len() == headers {
                    continue;
                }
                let shown = truncate(&text, width.saturating_sub(OUTPUT_INDENT.len()));
                lines.push(Line::from(vec![
                    Span::raw(OUTPUT_INDENT),
                    Span::styled(shown.into_owned(), theme::RUN_OUTPUT),
                ]));
            }
        }
    }
    for (row, line) in lines.iter().take(height).enumerate() {
        let y = inner.y + u16::try_from(row).unwrap_or(u16::MAX);
        buf.set_line(inner.x, y, line, inner.width);
    }
}

/// Where the screen has no rows for the tool pane (a short stacked screen, 40×12), the newest
/// call's line in the bottom border of `area` (the conversation's), so that a running command,
/// how it ended and what the sandbox had to do with it stay in view.
pub fn render_in_border(
    (runs, tallies): (&imbl::Vector<Arc<ToolRun>>, &Tallies),
    area: Rect,
    buf: &mut Buffer,
    (frame, now): (u64, Instant),
) {
    let Some(run) = runs.last() else {
        return;
    };
    // The border's corners and a cell of the line on each side stay.
    let width = usize::from(area.width).saturating_sub(BORDER_INSET * 2);
    if area.height < 2 || width < BORDER_MIN_WIDTH {
        return;
    }
    let mut line = header(run, tallies.get(&run.id), width.saturating_sub(2), frame, now);
    line.spans.insert(0, Span::raw(" "));
    line.spans.push(Span::raw(" "));
    let x = area.x + u16::try_from(BORDER_INSET).unwrap_or(0);
    buf.set_line(x, area.bottom() - 1, &line, u16::try_from(width).unwrap_or(0));
}

/// `✓ bash  cargo test   exit 0 · 1.2s`, `✓ grep TODO src  12 matches in 3 files · 4ms`, cut to
/// `width` (the summary gives way first).
fn header(
    run: &ToolRun,
    tally: Option<&Arc<str>>,
    width: usize,
    frame: u64,
    now: Instant,
) -> Line<'static> {
    let (mark, style) = mark(run, frame);
    let name = one_line(screen_name(&run.name));
    let lead = format!("{mark} {name} ");
    let tail_of = |tally: Option<&str>, timed| {
        let outcome = outcome(run, tally, now, timed);
        if outcome.is_empty() { String::new() } else { format!("  {outcome}") }
    };
    let room = |tail: &str| width.saturating_sub(lead.chars().count() + tail.chars().count());
    let tally = tally.map(|tally| &**tally);
    let mut tail = tail_of(tally, true);
    // A search's tally is long: in a narrow pane its time gives way before its pattern does,
    // then the files it counted (`12 matches in 3 files` becomes `12 matches`).
    let summary = one_line(&run.summary);
    let wanted = summary.chars().count().min(MIN_SUMMARY_CHARS);
    if let Some(tally) = tally {
        let short = tally.split_once(" in ").map_or(tally, |(matches, _)| matches);
        for shorter in [tail_of(Some(tally), false), tail_of(Some(short), false)] {
            if room(&tail) >= wanted {
                break;
            }
            tail = shorter;
        }
    }
    let room = room(&tail);
    let summary = truncate(&summary, room).into_owned();
    let mut spans = vec![
        Span::styled(format!("{mark} "), style),
        Span::styled(name, theme::TOOL_NAME),
        Span::raw(" "),
        Span::raw(summary),
    ];
    if !tail.is_empty() {
        spans.push(Span::styled(tail, theme::DIM));
    }
    Line::from(spans)
}

/// The mark before a call: how it ended, and a warning where a command that exited 0 shows a
/// failure the sandbox explains (`curl … || true`).
fn mark(run: &ToolRun, frame: u64) -> (char, Style) {
    match run.status {
        ToolStatus::Running => (spinner(frame), theme::RUN_RUNNING),
        ToolStatus::Succeeded if hint(run).is_some() => ('⚠', theme::RUN_FAILED),
        ToolStatus::Succeeded => ('✓', theme::RUN_OK),
        ToolStatus::Failed => ('✗', theme::RUN_FAILED),
        ToolStatus::Declined | ToolStatus::Refused(_) => ('⊘', theme::RUN_STOPPED),
        ToolStatus::Interrupted => ('■', theme::RUN_STOPPED),
    }
}

/// What the sandbox had to do with a finished command, from the line its result ends with.
fn hint(run: &ToolRun) -> Option<SandboxHint> {
    (run.status != ToolStatus::Running).then(|| SandboxHint::in_result(&run.output)).flatten()
}

/// `exit 0 · 1.2s`, `exit 6 · no network · 1.2s`, `12 matches in 3 files · 4ms`, `declined`,
/// `refused: plan mode`, `running 3.4s`; `timed`: with the time a finished call took.
fn outcome(run: &ToolRun, tally: Option<&str>, now: Instant, timed: bool) -> String {
    let mut parts = Vec::new();
    match run.status {
        ToolStatus::Running => {
            // Whole seconds: the line changes once a second, not every frame.
            let seconds = now.saturating_duration_since(run.started).as_secs();
            parts.push(match seconds {
                0 => "running".to_owned(),
                _ => format!("running {}", format_duration(Duration::from_secs(seconds))),
            });
        }
        ToolStatus::Declined => parts.push("declined".to_owned()),
        ToolStatus::Refused(refusal) => parts.push(refusal.label().to_owned()),
        ToolStatus::Interrupted => parts.push("interrupted".to_owned()),
        ToolStatus::Succeeded | ToolStatus::Failed => {
            if let Some(code) = run.exit_code {
                parts.push(format!("exit {code}"));
            } else if let Some(tally) = tally.filter(|_| run.status == ToolStatus::Succeeded) {
                parts.push(one_line(tally));
            } else if run.status == ToolStatus::Failed {
                parts.push("failed".to_owned());
            }
            parts.extend(hint(run).map(|hint| hint.label().to_owned()));
        }
    }
    if let Some(duration) = run.duration.filter(|_| timed) {
        parts.push(format_duration(duration));
    }
    parts.join(" · ")
}

/// `850ms`, `1.2s`, `2m05s`.
pub fn format_duration(duration: Duration) -> String {
    const MINUTE: u64 = 60;
    let millis = duration.as_millis();
    if millis < 1000 {
        format!("{millis}ms")
    } else if duration.as_secs() < MINUTE {
        format!("{:.1}s", duration.as_secs_f64())
    } else {
        let secs = duration.as_secs();
        format!("{}m{:02}s", secs / MINUTE, secs % MINUTE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_naturally() {
        assert_eq!(format_duration(Duration::from_millis(850)), "850ms");
        assert_eq!(format_duration(Duration::from_millis(1234)), "1.2s");
        assert_eq!(format_duration(Duration::from_secs(125)), "2m05s");
    }
}
