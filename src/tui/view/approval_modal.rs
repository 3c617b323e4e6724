//! The approval modal: a tool call waiting for the person's yes or no.
//!
//! It shows the child agent that asks, when one does, the board item whose completion runs
//! the command as its check, when that is why it asks, then the tool, the command or path, and
//! for file changes the diff (`+` green, `-` red), scrollable when long; the answer keys are
//! pinned at the bottom so they are always in view.
//! Nothing is hidden without a mark: the command wraps at spaces (every character kept), and
//! when the body does not fit, the borders say how many rows are above and below. While typing
//! that began before the box goes on, the answer line says the keys go to the composer (see
//! `type_ahead`).

use super::super::keymap::{Binding, KeySpec, Motion, hints, keys_label, scroll_keys};
use super::super::layout::centered;
use super::super::stack::{Ctx, Effect, Hints, View};
use super::super::text::{shown_exactly, truncate};
use super::super::theme;
use super::super::wrap::{Prefix, hard_wrap, wrap};
use super::command_wrap::wrap_command;
use super::pane;
use crate::agent::{ApprovalRequest, Asking, Decision};
use crate::tools::names::screen_name;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::KeyCode;
use ratatui::layout::{Position, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Widget};

/// The modal's widest box.
const MAX_WIDTH: u16 = 100;
/// Cells kept free around the box.
const MARGIN: u16 = 1;
/// Rows under the body: a blank line and the pinned answer line.
const ANSWER_ROWS: usize = 2;
/// Rows the box adds to its body: borders and the answer rows.
const CHROME_ROWS: usize = 2 + ANSWER_ROWS;
/// The hint of the "always" answer, left out where the box does not offer it.
const ALWAYS_HINT: &str = "always";
/// Indentation of the command under the heading.
const INDENT: &str = "  ";

/// What a key does to the modal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Answer(Decision),
    Scroll(Motion),
}

/// The modal's keys.
pub const KEYS: &[Binding<Action>] = &[
    Binding {
        keys: &[KeySpec::char('y')],
        action: Action::Answer(Decision::Once),
        help: "allow it this once",
        hint: Some("yes"),
    },
    Binding {
        keys: &[KeySpec::char('a')],
        action: Action::Answer(Decision::Always),
        help: "allow it and calls like it this session (bash: one simple command's program and subcommand)",
        hint: Some(ALWAYS_HINT),
    },
    Binding {
        keys: &[KeySpec::char('n')],
        action: Action::Answer(Decision::Deny),
        help: "refuse; the model is told you declined",
        hint: Some("no"),
    },
    Binding {
        keys: &[KeySpec::plain(KeyCode::Esc)],
        action: Action::Answer(Decision::DenyAndStop),
        help: "refuse and end the turn",
        hint: Some("no, stop"),
    },
    Binding {
        keys: scroll_keys::UP,
        action: Action::Scroll(Motion::Up),
        help: "scroll the diff up",
        hint: None,
    },
    Binding {
        keys: scroll_keys::DOWN,
        action: Action::Scroll(Motion::Down),
        help: "scroll the diff down",
        hint: None,
    },
    Binding {
        keys: &[KeySpec::plain(KeyCode::PageUp)],
        action: Action::Scroll(Motion::PageUp),
        help: "up a page",
        hint: None,
    },
    Binding {
        keys: &[KeySpec::plain(KeyCode::PageDown)],
        action: Action::Scroll(Motion::PageDown),
        help: "down a page",
        hint: None,
    },
];

/// Scroll state of the modal for one request.
#[derive(Debug, Clone, Default)]
pub struct ApprovalModal {
    request_id: String,
    offset: usize,
    page: usize,
}

impl ApprovalModal {
    /// Resets the scroll when a different request is shown.
    pub fn track(&mut self, request: &ApprovalRequest) {
        if self.request_id != request.id {
            self.request_id.clone_from(&request.id);
            self.offset = 0;
        }
    }

    pub fn scroll(&mut self, motion: Motion) {
        self.offset = motion.from(self.offset, self.page.max(1));
    }

    /// Clamps the offset to what the next frame at `screen` shows.
    pub fn prepare(&mut self, request: &ApprovalRequest, screen: Rect) {
        self.track(request);
        let (area, body) = geometry(request, screen);
        let inner = pane(Line::default(), true).inner(area);
        self.page = usize::from(inner.height).saturating_sub(ANSWER_ROWS);
        self.offset = self.offset.min(body.len().saturating_sub(self.page));
    }

    /// Draws the modal over `screen`; `holding` while typing that began before the box goes on
    /// (its keys go to the composer, not to the box).
    pub fn render(&self, request: &ApprovalRequest, screen: Rect, buf: &mut Buffer, holding: bool) {
        let (area, body) = geometry(request, screen);
        Clear.render(area, buf);
        let mut block = pane(Line::styled(" Approval needed ", theme::STATUS_ATTENTION), true);
        let body_rows = usize::from(block.inner(area).height).saturating_sub(ANSWER_ROWS);
        let offset = self.offset.min(body.len().saturating_sub(body_rows));
        let below = body.len().saturating_sub(offset + body_rows);
        if offset > 0 {
            let mark = format!(" ↑ {offset} more above ");
            block = block.title_top(Line::styled(mark, theme::STATUS_ATTENTION).right_aligned());
        }
        if below > 0 {
            let mark = format!(" ↓ {below} more below (j) ");
            block = block.title_bottom(Line::styled(mark, theme::STATUS_ATTENTION).right_aligned());
        }
        let inner = block.inner(area);
        block.render(area, buf);
        if inner.is_empty() {
            return;
        }
        for (row, line) in body.iter().skip(offset).take(body_rows).enumerate() {
            let y = inner.y + u16::try_from(row).unwrap_or(u16::MAX);
            buf.set_line(inner.x, y, line, inner.width);
        }
        let width = usize::from(inner.width);
        let answers = if holding { holding_line(width) } else { answer_line(request, width) };
        buf.set_line(inner.x, inner.bottom() - 1, &answers, inner.width);
    }
}

impl View for ApprovalModal {
    type Action = Action;
    const KEYS: &'static [Binding<Action>] = KEYS;

    fn act(&mut self, action: Action, ctx: &mut Ctx<'_>) {
        match action {
            Action::Answer(decision) => {
                let Some(request) = &ctx.snapshot.pending_approval else {
                    return;
                };
                // "Always" is not offered for a call it cannot cover.
                if decision != Decision::Always || request.always.is_some() {
                    ctx.effect(Effect::Answer { id: request.id.clone(), decision });
                }
            }
            Action::Scroll(motion) => self.scroll(motion),
        }
    }

    /// The answers the box offers (no "always" where it offers none), then the inspector.
    fn hints(&self, ctx: &Ctx<'_>) -> Hints {
        let pending = ctx.snapshot.pending_approval.as_ref();
        let offers_always = pending.is_some_and(|request| request.always.is_some());
        let mut shown = hints(KEYS);
        shown.retain(|(_, hint)| offers_always || *hint != ALWAYS_HINT);
        shown.push((keys_label(&[KeySpec::ctrl('t')]), "request"));
        shown
    }

    /// The wheel scrolls the diff.
    fn wheel(&mut self, up: bool, _at: Position, _ctx: &mut Ctx<'_>) -> bool {
        self.scroll(if up { Motion::Up } else { Motion::Down });
        true
    }
}

/// The box and its body lines for this request on this screen.
fn geometry(request: &ApprovalRequest, screen: Rect) -> (Rect, Vec<Line<'static>>) {
    let outer_width = MAX_WIDTH.min(screen.width.saturating_sub(2 * MARGIN));
    let inner = pane(Line::default(), true).inner(Rect::new(0, 0, outer_width, 1));
    let body = body(request, usize::from(inner.width));
    let wanted = u16::try_from(body.len() + CHROME_ROWS).unwrap_or(u16::MAX);
    (centered(screen, MAX_WIDTH, wanted, MARGIN), body)
}

/// The tool, the whole command (or path) with every character shown, what "always" would
/// cover, and the whole diff: broken at the width, never cut.
fn body(request: &ApprovalRequest, width: usize) -> Vec<Line<'static>> {
    let is_command = matches!(request.asking, Asking::Command | Asking::UnconfinedCommand);
    let unconfined = matches!(request.asking, Asking::UnconfinedCommand | Asking::DemoUnconfined);
    let verb = match request.asking {
        Asking::Command | Asking::UnconfinedCommand => "wants to run",
        Asking::Change => "wants to change",
        Asking::Call { read_only: true } => "wants to call (its server marks it read-only)",
        Asking::Call { read_only: false } => "wants to call",
        Asking::DemoUnconfined => "would run these commands with the sandbox off",
    };
    // A child agent's call names the child first: who asks is part of what is approved.
    let mut lines: Vec<Line<'static>> = request
        .agent
        .iter()
        .flat_map(|agent| {
            let asks = Span::styled(crate::visible::one_line(agent), theme::TITLE);
            wrap(&[asks, Span::raw(" asks:")], width, &Prefix::default())
        })
        .collect();
    // A board item's check: why completing it asks for a command.
    if let Some(item) = &request.check {
        let spans = [
            Span::raw("Completing "),
            Span::styled(crate::visible::one_line(item), theme::TITLE),
            Span::raw(" runs its check first:"),
        ];
        lines.extend(wrap(&spans, width, &Prefix::default()));
    }
    lines.push(Line::from(vec![
        Span::styled(crate::visible::one_line(screen_name(&request.tool)), theme::TOOL_NAME),
        Span::raw(format!(" {verb}:")),
    ]));
    let room = width.saturating_sub(INDENT.len());
    for line in request.detail.split('\n') {
        for row in wrap_command(&shown_exactly(line), room) {
            lines.push(Line::from(vec![Span::raw(INDENT), Span::styled(row, theme::USER_TEXT)]));
        }
    }
    lines.push(Line::default());
    let always = match &request.always {
        Some(covers) => Some(format!("a: always allow {covers}")),
        None if request.asking == Asking::DemoUnconfined => None,
        None if request.asking == Asking::UnconfinedCommand => {
            Some("a: not offered — without a sandbox every command is asked about".to_owned())
        }
        None if is_command => Some(
            "a: not offered — this line is more than one simple command, so it is asked about \
             every time"
                .to_owned(),
        ),
        None => Some("a: not offered for this call".to_owned()),
    };
    if let Some(always) = always {
        lines.extend(wrap(&[Span::styled(always, theme::DIM)], width, &Prefix::default()));
    }
    if let Some(sandbox) = &request.sandbox {
        // Where there is no sandbox, the words that say so are not secondary text.
        let style = if unconfined { theme::STATUS_ATTENTION } else { theme::DIM };
        lines.extend(wrap(&[Span::styled(sandbox.clone(), style)], width, &Prefix::default()));
    }
    if let Some(diff) = &request.diff {
        lines.push(Line::default());
        for line in diff.trim_end().split('\n') {
            let spans = [Span::styled(shown_exactly(line), diff_style(line))];
            lines.extend(hard_wrap(&spans, width, &Prefix::default()));
        }
    }
    lines
}

fn diff_style(line: &str) -> Style {
    if line.starts_with("+++") || line.starts_with("---") {
        theme::DIFF_FILE
    } else if line.starts_with('+') {
        theme::DIFF_ADDED
    } else if line.starts_with('-') {
        theme::DIFF_REMOVED
    } else if line.starts_with("@@") {
        theme::DIFF_HUNK
    } else {
        Style::new()
    }
}

/// What the answer line says while typing goes past the box.
fn holding_line(width: usize) -> Line<'static> {
    let text = "typing goes to the composer · pause, then answer";
    Line::styled(truncate(text, width).into_owned(), theme::STATUS_ATTENTION)
}

/// `y yes · a always · n no · Esc no, stop`, from the binding table; `a` only where it is
/// offered.
fn answer_line(request: &ApprovalRequest, width: usize) -> Line<'static> {
    let mut spans = Vec::new();
    let offered = |binding: &&Binding<Action>| {
        request.always.is_some() || binding.action != Action::Answer(Decision::Always)
    };
    let keys: Vec<Binding<Action>> = KEYS.iter().filter(offered).copied().collect();
    for (key, hint) in hints(&keys) {
        if !spans.is_empty() {
            spans.push(Span::styled(" · ", theme::DIM));
        }
        spans.push(Span::styled(key, theme::KEY));
        spans.push(Span::raw(format!(" {hint}")));
    }
    let line = Line::from(spans);
    if line.width() <= width {
        line
    } else {
        Line::raw(truncate(&line.to_string(), width).into_owned())
    }
}
