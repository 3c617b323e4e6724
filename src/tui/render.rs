//! Drawing a frame: a pure function of the `App`.
//!
//! The layers of the view stack are drawn from the bottom up (`layers::ORDER` read backwards):
//! the panes first, then whatever covers them, so the view on top is the one that has the keys.
//! Nothing here changes state or reads the clock; what `prepare` did not lay out is laid out on
//! the fly and dropped.

use super::app::App;
use super::layers::{ORDER, Slot};
use super::layout::{Regions, overlay_area};
use super::main_view::source;
use super::view::status_bar::{self, StatusInfo};
use super::view::{plan_hint, tool_log};
use ratatui::Frame;
use ratatui::buffer::Buffer;

/// Draws the whole screen.
pub fn render(app: &App, frame: &mut Frame<'_>) {
    let screen = frame.area();
    let regions = app.regions(screen);
    let buf = frame.buffer_mut();
    for slot in ORDER.into_iter().rev().filter(|slot| app.is_open(*slot)) {
        draw(app, slot, regions, buf);
    }
    if app.no_color {
        super::theme::strip_colours(buf);
    }
}

/// Draws one layer: the panes into their regions, an overlay over all but the status bar.
pub(super) fn draw(app: &App, slot: Slot, regions: Regions, buf: &mut Buffer) {
    let snapshot = app.snapshot();
    let covered = overlay_area(buf.area);
    let views = &app.views;
    let holding = app.type_ahead.holding(app.now);
    match slot {
        Slot::Main => draw_main(app, regions, buf),
        Slot::Board => views.board.render(snapshot, regions.todos, buf, app.is_busy(), app.frame),
        Slot::Completion => {
            if let Some(menu) = &views.main.completer.menu {
                menu.render(regions.composer, buf);
            }
        }
        Slot::Help => views.help.iter().for_each(|help| help.render(covered, buf)),
        Slot::Agents => {
            views.agents.iter().for_each(|agents| agents.render(snapshot, covered, buf))
        }
        Slot::History => {
            views.inspector.iter().for_each(|inspector| inspector.render(covered, buf))
        }
        Slot::Output => views.pager.iter().for_each(|pager| pager.render(covered, buf)),
        Slot::Sessions => {
            views.picker.iter().for_each(|picker| picker.render(covered, buf, holding))
        }
        Slot::Approval | Slot::CoveredApproval => {
            if let Some(request) = app.visible_approval() {
                views.approval.render(request, covered, buf, holding);
            }
        }
    }
}

/// The main screen: the conversation, the tool log, the composer and the status bar.
fn draw_main(app: &App, regions: Regions, buf: &mut Buffer) {
    let snapshot = app.snapshot();
    let main = &app.views.main;
    let main_focus = app.main_focused();
    main.conversation.render(&source(snapshot), regions.conversation, buf);
    let runs = (&snapshot.tools, &snapshot.call_tallies);
    tool_log::render(runs, regions.tools, buf, (app.frame, app.now));
    // No rows for the tool pane: the newest call in the conversation's border, unless the
    // border says the conversation is scrolled.
    if regions.tools.is_empty() && main.conversation.is_following() {
        tool_log::render_in_border(runs, regions.conversation, buf, (app.frame, app.now));
    }
    main.composer.render(regions.composer, buf, main_focus, app.is_busy());
    if !app.views.board.focused {
        plan_hint::render(snapshot, regions.composer, buf);
    }
    if main_focus && main.confirming_plan {
        plan_hint::render_confirm(regions.composer, buf);
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
}
