//! The order holds for every pair of layers that can be open together: the upper one is drawn
//! over the lower one, and a key (Esc, which every layer answers) goes to it first.

use super::*;
use crate::agent::{ApprovalRequest, Asking, Command, Snapshot, TurnDiff};
use crate::board::{Board, BoardItem, Status};
use crate::tui::TuiOptions;
use crate::tui::render::draw;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::{Buffer, Cell};
use ratatui::crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::Rect;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};

/// Wide enough for the side-by-side panes, with room around the help and the approval box.
const SCREEN: Rect = Rect { x: 0, y: 0, width: 110, height: 30 };
/// A symbol no view draws: the cells a layer leaves alone keep it.
const UNDRAWN: &str = "\u{1}";
/// Well past the type-ahead guard: a key then answers the approval box and the session picker.
const LATER: Duration = Duration::from_secs(5);

/// The agent's state every case starts from: a board, and the approval box if asked for.
fn snapshot(approval: bool) -> Snapshot {
    let item = |id: &str, status| BoardItem {
        id: id.to_owned(),
        text: format!("Step {id}"),
        status,
        active_form: None,
        blocked_by: Vec::new(),
        ..BoardItem::default()
    };
    let board = Board::from_items(vec![item("1", Status::InProgress), item("2", Status::Pending)]);
    let request = ApprovalRequest {
        id: "call-1".to_owned(),
        tool: "bash".to_owned(),
        asking: Asking::Command,
        detail: "cargo test".to_owned(),
        diff: None,
        always: None,
        sandbox: None,
        agent: None,
        check: None,
    };
    Snapshot {
        board: Arc::new(board),
        pending_approval: approval.then(|| Arc::new(request)),
        ..Snapshot::default()
    }
}

/// An app at `start` with the layers `open` open (the approval box covered by the inspector
/// stands for the two).
fn app_with(open: &[Slot], start: Instant) -> (App, UnboundedReceiver<Command>) {
    let (commands, receiver) = unbounded_channel();
    let mut app = App::new(commands, TuiOptions::default());
    let approval = open.iter().any(|slot| matches!(slot, Slot::Approval | Slot::CoveredApproval));
    app.apply_snapshot_at(snapshot(approval), start);
    app.now = start;
    let snapshot = app.snapshot.clone();
    for slot in open {
        let views = &mut app.views;
        match slot {
            Slot::Approval | Slot::Main => {}
            Slot::CoveredApproval => {
                views.inspector = Some(Box::new(Inspector::open(&snapshot)));
                app.inspector_over_approval = true;
            }
            Slot::Sessions => views.picker = Some(Box::new(SessionPicker::open(&snapshot))),
            Slot::Output => {
                let changes = TurnDiff { asked: 1, diffs: Vec::new(), notes: vec!["n".into()] };
                views.pager = Some(Box::new(Pager::turn_diff(&changes)));
            }
            Slot::History => views.inspector = Some(Box::new(Inspector::open(&snapshot))),
            Slot::Agents => views.agents = Some(Box::new(AgentsView::open(&snapshot, None))),
            Slot::Help => views.help = Some(HelpOverlay::new(super::super::input::help_sections())),
            Slot::Completion => {
                views.main.composer.prefill("/");
                views.main.completer.refresh(&views.main.composer);
            }
            Slot::Board => views.board.focus(&snapshot),
        }
    }
    (app, receiver)
}

fn drawn(app: &mut App) -> Buffer {
    app.prepare(SCREEN);
    let mut terminal = Terminal::new(TestBackend::new(SCREEN.width, SCREEN.height)).unwrap();
    terminal.draw(|frame| crate::tui::render(app, frame)).unwrap();
    terminal.backend().buffer().clone()
}

/// Whether `slot` is still there after a key: the approval box, covered or not, while the
/// request is unanswered.
fn still_open(app: &App, slot: Slot) -> bool {
    match slot {
        Slot::Approval | Slot::CoveredApproval => app.visible_approval().is_some(),
        _ => app.is_open(slot),
    }
}

/// Whether `upper` and `lower` can be on screen at once.
fn together(upper: Slot, lower: Slot) -> bool {
    match (upper, lower) {
        // One box: on top, or under the inspector opened over it.
        (Slot::Approval, Slot::CoveredApproval) => false,
        // The inspector opened over the box is on top of both.
        (Slot::CoveredApproval, _) => false,
        // The menu shows only while the main screen has the focus: under an approval box at most.
        (_, Slot::Completion) => upper == Slot::Approval,
        (Slot::Completion, _) => false,
        // Always there: under everything.
        (_, Slot::Main) => false,
        _ => true,
    }
}

#[test]
fn every_layer_is_open_where_the_cases_open_it() {
    let start = Instant::now();
    for slot in ORDER {
        let (app, _commands) = app_with(&[slot], start);
        assert!(still_open(&app, slot), "{slot:?} is open");
        let (app, _commands) = app_with(&[], start);
        let always = matches!(slot, Slot::Board | Slot::Main);
        assert_eq!(app.is_open(slot), always, "{slot:?} is not open in an empty app");
    }
}

#[test]
fn the_layer_on_top_is_drawn_on_top_and_gets_the_key_first() {
    let start = Instant::now();
    let mut pairs = 0;
    for (index, upper) in ORDER.into_iter().enumerate() {
        for lower in ORDER.into_iter().skip(index + 1).filter(|lower| together(upper, *lower)) {
            pairs += 1;
            let (mut both, _commands) = app_with(&[lower, upper], start);
            let frame = drawn(&mut both);
            // What the upper layer draws by itself, over cells no layer writes.
            let mut own = Buffer::filled(SCREEN, Cell::new(UNDRAWN));
            draw(&both, upper, both.regions(SCREEN), &mut own);
            let footprint: Vec<_> =
                SCREEN.positions().filter(|at| own[*at].symbol() != UNDRAWN).collect();
            assert!(!footprint.is_empty(), "{upper:?} draws something");
            for at in footprint {
                assert_eq!(frame[at], own[at], "{upper:?} is drawn over {lower:?} (at {at:?})");
            }

            both.handle_key_at(KeyEvent::from(KeyCode::Esc), start + LATER);
            assert!(!still_open(&both, upper), "Esc reached {upper:?} over {lower:?}");
            assert!(still_open(&both, lower), "Esc stopped at {upper:?}, over {lower:?}");
        }
    }
    assert_eq!(pairs, 25, "the cases cover every pair");
}
