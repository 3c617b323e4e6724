//! The composer's hint for a finished plan: a plan waiting for approval never takes the keyboard
//! (the person may be typing), so the prompt's bottom border says how to approve or edit it —
//! and, once a short approval was typed in words, asks for the one key that confirms it.

use super::super::theme;
use crate::agent::{Activity, Snapshot};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

/// The longest form first; the first that fits the border is drawn.
const FORMS: [&str; 3] = [
    " plan ready: /approve runs it · /todos edits it ",
    " plan ready: /approve · /todos ",
    " /approve ",
];
/// What the border asks once a short approval was typed (`plan_words`), longest first.
const CONFIRM_FORMS: [&str; 3] = [
    " approve the plan and start? y yes · n send as a message · Esc keep editing ",
    " approve the plan? y yes · n send · Esc edit ",
    " approve? y / n ",
];
/// Columns kept for the border's corners.
const CORNERS: u16 = 2;

/// Draws the hint on the bottom border of the composer at `area`, while a plan waits.
pub fn render(snapshot: &Snapshot, area: Rect, buf: &mut Buffer) {
    if !snapshot.plan_ready || snapshot.activity != Activity::Idle {
        return;
    }
    draw(&FORMS, area, buf);
}

/// Draws the question a short approval typed in words waits on, on the same border.
pub fn render_confirm(area: Rect, buf: &mut Buffer) {
    draw(&CONFIRM_FORMS, area, buf);
}

/// The first of `forms` that fits the bottom border of the composer at `area`.
fn draw(forms: &[&str], area: Rect, buf: &mut Buffer) {
    if area.height == 0 {
        return;
    }
    let room = usize::from(area.width.saturating_sub(CORNERS));
    let Some(form) = forms.iter().find(|form| form.chars().count() <= room) else { return };
    let line = Line::from(Span::styled(*form, theme::STATUS_ATTENTION));
    buf.set_line(area.x + 1, area.bottom() - 1, &line, area.width.saturating_sub(CORNERS));
}
