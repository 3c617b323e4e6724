//! Drawing a frame: a pure function of the `App`.
//!
//! Panes first, then whatever covers them (an overlay, the approval modal). Nothing here changes
//! state or reads the clock; what `prepare` did not lay out is laid out on the fly and dropped.

use super::app::{App, Overlay, source};
use super::view::status_bar::{self, StatusInfo};
use super::view::tool_log;
use ratatui::Frame;
use ratatui::layout::Rect;

/// Draws the whole screen.
pub fn render(app: &App, frame: &mut Frame<'_>) {
    let screen = frame.area();
    let regions = app.regions(screen);
    let buf = frame.buffer_mut();
    let snapshot = app.snapshot();
    let source = source(snapshot);
    let main_focus = app.overlay.is_none() && !app.todo.focused;

    app.conversation.render(&source, regions.conversation, buf);
    app.todo.render(&snapshot.board, regions.todos, buf, app.is_busy(), app.frame);
    tool_log::render(&snapshot.tools, regions.tools, buf, app.frame);
    app.composer.render(regions.composer, buf, main_focus, app.is_busy());
    let hints = app.hints();
    let info = StatusInfo {
        now: app.now,
        frame: app.frame,
        flash: app.flash(),
        agent_gone: app.agent_gone,
        hints: &hints,
    };
    status_bar::render(snapshot, &info, regions.status, buf);

    let covered = overlay_area(screen);
    match &app.overlay {
        Some(Overlay::History(history)) => history.render(covered, buf),
        Some(Overlay::Help(help)) => help.render(covered, buf),
        None => {}
    }
    if let Some(request) = app.visible_approval() {
        app.approval.render(request, covered, buf);
    }
}

/// The part of the screen overlays cover: all of it but the status bar, which keeps showing the
/// keys that work in the overlay.
pub fn overlay_area(screen: Rect) -> Rect {
    if screen.height > 1 { Rect { height: screen.height - 1, ..screen } } else { screen }
}
