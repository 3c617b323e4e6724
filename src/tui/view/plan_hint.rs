//! The composer's hint for a finished plan: a plan waiting for approval never takes the keyboard
//! (the person may be typing), so the prompt's bottom border says how to approve or edit it.

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
/// Columns kept for the border's corners.
const CORNERS: u16 = 2;

/// Draws the hint on the bottom border of the composer at `area`, while a plan waits.
pub fn render(snapshot: &Snapshot, area: Rect, buf: &mut Buffer) {
    if !snapshot.plan_ready || snapshot.activity != Activity::Idle || area.height == 0 {
        return;
    }
    let room = usize::from(area.width.saturating_sub(CORNERS));
    let Some(form) = FORMS.iter().find(|form| form.chars().count() <= room) else { return };
    let line = Line::from(Span::styled(*form, theme::STATUS_ATTENTION));
    buf.set_line(area.x + 1, area.bottom() - 1, &line, area.width.saturating_sub(CORNERS));
}
