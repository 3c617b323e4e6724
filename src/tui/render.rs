//! Drawing a frame: a pure function of the `App`.
//!
//! Panes first, then whatever covers them (the help, the inspector, the approval modal). Nothing here changes
//! state or reads the clock; what `prepare` did not lay out is laid out on the fly and dropped.

use super::app::App;
use super::layout::overlay_area;
use super::main_view::source;
use super::view::status_bar::{self, StatusInfo};
use super::view::{plan_hint, tool_log};
use ratatui::Frame;

/// Draws the whole screen.
pub fn render(app: &App, frame: &mut Frame<'_>) {
    let screen = frame.area();
    let regions = app.regions(screen);
    let buf = frame.buffer_mut();
    let snapshot = app.snapshot();
    let source = source(snapshot);
    let main_focus = app.overlay().is_none() && !app.board.focused;

    app.main.conversation.render(&source, regions.conversation, buf);
    app.board.render(snapshot, regions.todos, buf, app.is_busy(), app.frame);
    let runs = (&snapshot.tools, &snapshot.call_tallies);
    tool_log::render(runs, regions.tools, buf, (app.frame, app.now));
    // No rows for the tool pane: the newest call in the conversation's border, unless the
    // border says the conversation is scrolled.
    if regions.tools.is_empty() && app.main.conversation.is_following() {
        tool_log::render_in_border(runs, regions.conversation, buf, (app.frame, app.now));
    }
    app.main.composer.render(regions.composer, buf, main_focus, app.is_busy());
    if !app.board.focused {
        plan_hint::render(snapshot, regions.composer, buf);
    }
    if main_focus && app.main.confirming_plan {
        plan_hint::render_confirm(regions.composer, buf);
    }
    if let Some(menu) = app.main.completer.menu.as_ref().filter(|_| main_focus) {
        menu.render(regions.composer, buf);
    }
    let hints = app.hints();
    let info = StatusInfo {
        now: app.now,
        frame: app.frame,
        flash: app.flash(),
        agent_gone: app.agent_gone,
        hints: &hints,
        price: app.prices.of(&snapshot.model),
    };
    status_bar::render(snapshot, &info, regions.status, buf);

    // The rest of the view stack, bottom up: what is on top is drawn last.
    let covered = overlay_area(screen);
    if let Some(help) = &app.help {
        help.render(covered, buf);
    }
    if let Some(agents) = &app.agents {
        agents.render(snapshot, covered, buf);
    }
    if let Some(picker) = &app.picker {
        picker.render(covered, buf, app.type_ahead.holding(app.now));
    }
    let approval = app.visible_approval();
    if let Some(request) = approval.filter(|_| !app.approval_on_top()) {
        app.approval.render(request, covered, buf, app.type_ahead.holding(app.now));
    }
    if let Some(inspector) = &app.inspector {
        inspector.render(covered, buf);
    }
    if let Some(pager) = &app.pager {
        pager.render(covered, buf);
    }
    if let Some(request) = approval.filter(|_| app.approval_on_top()) {
        app.approval.render(request, covered, buf, app.type_ahead.holding(app.now));
    }
    if app.no_color {
        super::theme::strip_colours(buf);
    }
}
