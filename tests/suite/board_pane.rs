//! The board pane and its keys, drawn into a `TestBackend` and driven through `App`.
//!
//! Snapshots: the pane alone at 40×12 and the whole screen at 120×40, with dependencies and an
//! item in progress gone stale; a plan waiting for approval. Key tests check the commands the
//! board's keys and `/todo`, `/plan`, `/approve`, Shift+Tab send.

use crate::support::tui::{draw, type_text};
use keel::agent::{Command, Reminder, Snapshot};
use keel::board::{Board, BoardEdit};
use keel::tui::view::board::BoardPane;
use keel::tui::{App, TuiOptions};
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;
use serde_json::json;
use std::sync::Arc;
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};

fn board_with_dependencies() -> Arc<Board> {
    let mut board = Board::default();
    board
        .update(&json!({"items": [
            {"id": "1", "text": "Read the parser", "status": "completed"},
            {"id": "2", "text": "Split the tokenizer out", "status": "in_progress", "activeForm": "Splitting the tokenizer"},
            {"id": "3", "text": "Test the tokenizer", "status": "pending", "blocked_by": ["2"]},
            {"id": "4", "text": "Update the docs", "status": "pending", "blocked_by": ["1", "2", "3"]},
            {"id": "5", "text": "Tidy up", "status": "pending"},
        ]}))
        .unwrap();
    Arc::new(board)
}

/// Item #2 has stood still for 7 rounds with the reminder at 3: stale.
fn stale_snapshot() -> Snapshot {
    Snapshot {
        board: board_with_dependencies(),
        reminder: Reminder::at(3, 2, 7),
        provider: "anthropic".into(),
        model: "claude-sonnet-4-5".into(),
        ..Snapshot::default()
    }
}

/// The pane alone, drawn into a buffer of `(width, height)`, a line per row, ends trimmed.
pub(super) fn pane_text(
    pane: &BoardPane,
    snapshot: &Snapshot,
    (width, height): (u16, u16),
) -> String {
    let area = Rect::new(0, 0, width, height);
    let mut buf = Buffer::empty(area);
    pane.render(snapshot, area, &mut buf, false, 0);
    (0..height)
        .map(|y| (0..width).map(|x| buf[(x, y)].symbol()).collect::<String>().trim_end().to_owned())
        .collect::<Vec<_>>()
        .join("\n")
}

fn app_with(snapshot: Snapshot) -> (App, UnboundedReceiver<Command>) {
    let (tx, rx) = unbounded_channel();
    let mut app = App::new(tx, TuiOptions::default());
    app.apply_snapshot(snapshot);
    (app, rx)
}

fn sent(rx: &mut UnboundedReceiver<Command>) -> Vec<Command> {
    std::iter::from_fn(|| rx.try_recv().ok()).collect()
}

fn press(app: &mut App, code: KeyCode) {
    app.handle_key(KeyEvent::new(code, KeyModifiers::NONE));
}

/// An app on `snapshot` whose board has the keyboard (`/todos`).
pub(super) fn focused(snapshot: Snapshot) -> (App, UnboundedReceiver<Command>) {
    let (mut app, rx) = app_with(snapshot);
    type_text(&mut app, "/todos");
    press(&mut app, KeyCode::Enter);
    assert!(app.board_focused());
    (app, rx)
}

fn edit(command: &str) -> Command {
    Command::EditBoard(BoardEdit::parse(command).unwrap())
}

// ---------------------------------------------------------------- snapshots

#[test]
fn snapshot_pane_40x12_with_dependencies_and_a_stale_item() {
    let text = pane_text(&BoardPane::default(), &stale_snapshot(), (40, 12));
    insta::assert_snapshot!("pane_dependencies_stale_40x12", text);
    assert!(text.contains("stale, 7 rounds"), "{text}");
    // What follows an item's text starts a line of its own rather than break across it.
    assert!(text.contains("#3 Test the tokenizer\n") || text.contains("#3 Test the tokenizer "));
    assert!(text.contains("    (blocked by #2)"), "{text}");
    assert!(text.contains("    ← Splitting the tokenizer"), "{text}");
}

#[test]
fn snapshot_screen_120x40_with_dependencies_and_a_stale_item() {
    let (mut app, _rx) = app_with(stale_snapshot());
    let terminal = draw(&mut app, (120, 40));
    insta::assert_snapshot!("screen_dependencies_stale_120x40", terminal.backend());
}

#[test]
fn snapshot_pane_focused_on_a_plan_ready_for_approval() {
    let snapshot = Snapshot {
        plan_mode: true,
        plan_ready: true,
        reminder: Reminder::at(3, 2, 0),
        ..stale_snapshot()
    };
    let (mut app, _rx) = app_with(snapshot);
    assert!(!app.board_focused(), "a plan that arrives leaves the keyboard where it is");
    type_text(&mut app, "/todos");
    press(&mut app, KeyCode::Enter);
    press(&mut app, KeyCode::Down);
    let terminal = draw(&mut app, (120, 40));
    insta::assert_snapshot!("plan_ready_focused_120x40", terminal.backend());
    let mut pane = BoardPane::default();
    pane.focus(app.snapshot());
    insta::assert_snapshot!("plan_ready_pane_40x12", pane_text(&pane, app.snapshot(), (40, 12)));
}

#[test]
fn a_fresh_item_in_progress_is_not_stale_and_the_reminder_off_never_is() {
    let fresh = Snapshot { reminder: Reminder::at(3, 2, 6), ..stale_snapshot() };
    let text = pane_text(&BoardPane::default(), &fresh, (60, 12));
    assert!(text.contains("· 6 rounds") && !text.contains("stale"), "{text}");
    let off = Snapshot { reminder: Reminder::at(0, 2, 50), ..stale_snapshot() };
    assert!(!off.is_stale());
    let text = pane_text(&BoardPane::default(), &off, (60, 12));
    assert!(text.contains("· 50 rounds") && !text.contains("stale"), "{text}");
}

// ---------------------------------------------------------------- keys

#[test]
fn board_keys_send_edits_for_the_selected_item() {
    let (mut app, mut rx) = focused(stale_snapshot());
    // Focus starts on the item in progress, #2.
    type_text(&mut app, " ");
    assert_eq!(sent(&mut rx), [edit("done 2")]);
    press(&mut app, KeyCode::Up);
    type_text(&mut app, "x");
    assert_eq!(sent(&mut rx), [edit("undo 1")], "a completed item goes back to pending");
    type_text(&mut app, "jjd");
    assert!(sent(&mut rx).is_empty(), "the first d only asks");
    type_text(&mut app, "d");
    assert_eq!(sent(&mut rx), [edit("rm 3")]);
    // No agent answers here: each key acts on the board as the edits sent before it leave it.
    // #3 is gone, so #4 stands where it stood.
    type_text(&mut app, "J");
    assert_eq!(sent(&mut rx), [edit("move 4 4")]);
    // The selection moves with the item.
    type_text(&mut app, "KK");
    assert_eq!(sent(&mut rx), [edit("move 4 3"), edit("move 4 2")]);
    press(&mut app, KeyCode::Home);
    type_text(&mut app, "K");
    assert!(sent(&mut rx).is_empty(), "the first item cannot move up");
    press(&mut app, KeyCode::Enter);
    assert_eq!(sent(&mut rx), [Command::ApprovePlan], "the agent says there is no plan");
}

#[test]
fn edit_and_add_put_the_command_in_the_composer() {
    let (mut app, mut rx) = focused(stale_snapshot());
    type_text(&mut app, "e");
    assert!(!app.board_focused(), "the composer has the keyboard to edit the text");
    assert_eq!(app.composer_text(), "/todo edit 2 Split the tokenizer out");
    for _ in 0.."Split the tokenizer out".len() {
        press(&mut app, KeyCode::Backspace);
    }
    type_text(&mut app, "Split the lexer out");
    press(&mut app, KeyCode::Enter);
    assert_eq!(sent(&mut rx), [edit("edit 2 Split the lexer out")]);
    assert_eq!(app.composer_text(), "");

    type_text(&mut app, "/todos");
    press(&mut app, KeyCode::Enter);
    type_text(&mut app, "a");
    assert_eq!(app.composer_text(), "/todo add ");
    type_text(&mut app, "Write a changelog");
    press(&mut app, KeyCode::Enter);
    assert_eq!(sent(&mut rx), [edit("add Write a changelog")]);
}

#[test]
fn todo_commands_are_sent_and_bad_ones_stay_in_the_composer() {
    let (mut app, mut rx) = app_with(stale_snapshot());
    type_text(&mut app, "/todo move 5 1");
    press(&mut app, KeyCode::Enter);
    assert_eq!(sent(&mut rx), [edit("move 5 1")]);
    type_text(&mut app, "/todo move 5 first");
    press(&mut app, KeyCode::Enter);
    assert!(sent(&mut rx).is_empty());
    assert_eq!(app.composer_text(), "/todo move 5 first", "kept to be put right");
    let screen = format!("{:?}", draw(&mut app, (120, 40)).backend());
    assert!(screen.contains("/todo: /todo move: the position must be a whole number"), "{screen}");
}

#[test]
fn shift_tab_and_slash_commands_switch_plan_mode_and_approve() {
    let (mut app, mut rx) = app_with(stale_snapshot());
    app.handle_key(KeyEvent::new(KeyCode::BackTab, KeyModifiers::SHIFT));
    assert_eq!(sent(&mut rx), [Command::PlanMode(true)]);
    app.apply_snapshot(Snapshot { plan_mode: true, ..stale_snapshot() });
    press(&mut app, KeyCode::BackTab);
    assert_eq!(sent(&mut rx), [Command::PlanMode(false)]);
    type_text(&mut app, "/plan");
    press(&mut app, KeyCode::Enter);
    assert_eq!(sent(&mut rx), [Command::PlanMode(false)], "/plan toggles as Shift+Tab does");
    type_text(&mut app, "/approve");
    press(&mut app, KeyCode::Enter);
    assert_eq!(sent(&mut rx), [Command::ApprovePlan]);
}

#[test]
fn a_plan_is_approved_with_one_key_once_the_board_is_focused() {
    let (mut app, mut rx) = app_with(Snapshot { plan_mode: true, ..stale_snapshot() });
    assert!(!app.board_focused());
    app.apply_snapshot(Snapshot { plan_mode: true, plan_ready: true, ..stale_snapshot() });
    assert!(!app.board_focused(), "the plan never takes the keyboard by itself");
    type_text(&mut app, "/todos");
    press(&mut app, KeyCode::Enter);
    assert!(app.board_focused());
    press(&mut app, KeyCode::Enter);
    assert_eq!(sent(&mut rx), [Command::ApprovePlan]);
    assert!(!app.board_focused());
}

#[test]
fn a_plan_does_not_take_the_keyboard_from_someone_typing() {
    let (mut app, mut rx) = app_with(Snapshot { plan_mode: true, ..stale_snapshot() });
    type_text(&mut app, "also d");
    app.apply_snapshot(Snapshot { plan_mode: true, plan_ready: true, ..stale_snapshot() });
    assert!(!app.board_focused());
    type_text(&mut app, "ocs");
    assert_eq!(app.composer_text(), "also docs", "the letters stay in the prompt");
    assert!(sent(&mut rx).is_empty(), "no board key was pressed");
}

/// A board of ten items whose item in progress (#6) wraps over three rows in a narrow pane.
fn long_snapshot() -> Snapshot {
    let items: Vec<serde_json::Value> = (1..=10)
        .map(|i| {
            let status = match i {
                1..=5 => "completed",
                6 => "in_progress",
                _ => "pending",
            };
            json!({"id": i.to_string(), "text": format!("Step {i}"), "status": status,
                   "activeForm": "Rewriting the module loader and every test that uses it"})
        })
        .collect();
    let mut board = Board::default();
    board.update(&json!({ "items": items })).unwrap();
    Snapshot { board: Arc::new(board), ..Snapshot::default() }
}

#[test]
fn the_pane_marks_items_hidden_above_and_below_and_an_item_it_cuts() {
    let snapshot = long_snapshot();
    let text = pane_text(&BoardPane::default(), &snapshot, (60, 3));
    insta::assert_snapshot!("board_pane_hidden_both_ways_60x3", text);
    let rows: Vec<&str> = text.lines().collect();
    // Items, not lines, are counted; the first five are above, four below.
    assert!(rows[0].contains(" ↑ 5 more "), "{text}");
    assert!(rows[2].contains(" ↓ 4 more · /todos "), "{text}");
    // The item in progress is cut at the bottom edge, and says so.
    assert!(rows[1].trim_end_matches('│').trim_end().ends_with('…'), "{text}");
    // Narrower, the notes shrink rather than run into the title: nothing is cut mid-word.
    // Narrower, the marks keep their one form (never a bare `↑5`, which reads like a token
    // count) and nothing is cut mid-word.
    let narrow = pane_text(&BoardPane::default(), &snapshot, (40, 4));
    insta::assert_snapshot!("board_pane_hidden_both_ways_40x4", narrow);
    let top = narrow.lines().next().unwrap();
    assert!(top.contains(" ↑ 5 more ") && top.contains("Todos 5/10 "), "{narrow}");
    assert!(narrow.lines().last().unwrap().contains(" ↓ 4 more "), "{narrow}");
}

#[test]
fn keys_act_on_the_board_as_the_edits_on_their_way_will_leave_it() {
    // The item in progress, #2, is selected.
    let (mut app, mut rx) = focused(stale_snapshot());
    // `d d Space` faster than the agent answers: #2 goes, and Space marks the item now in its
    // place (#3), not #2 again ("there is no item #2").
    press(&mut app, KeyCode::Char('d'));
    press(&mut app, KeyCode::Char('d'));
    press(&mut app, KeyCode::Char(' '));
    assert_eq!(sent(&mut rx), [edit("rm 2"), edit("done 3")]);
    // Space again before the answer: #3 is done by then, so it is marked pending again.
    press(&mut app, KeyCode::Char(' '));
    assert_eq!(sent(&mut rx), [edit("undo 3")]);

    // The agent took all three: its board is what keys act on again.
    let mut board = (*stale_snapshot().board).clone();
    for command in ["rm 2", "done 3", "undo 3"] {
        board = BoardEdit::parse(command).unwrap().apply(&board).unwrap().0;
    }
    app.apply_snapshot(Snapshot {
        board: Arc::new(board),
        board_edits_taken: 3,
        ..stale_snapshot()
    });
    press(&mut app, KeyCode::Char(' '));
    assert_eq!(sent(&mut rx), [edit("done 3")]);
}

#[test]
fn enter_with_no_plan_to_approve_is_answered_not_ignored() {
    // No plan waits: Enter still goes to the agent, which says why nothing was approved.
    let (mut app, mut rx) = focused(Snapshot { plan_mode: true, ..stale_snapshot() });
    press(&mut app, KeyCode::Enter);
    assert_eq!(sent(&mut rx), [Command::ApprovePlan]);
    assert!(app.board_focused(), "the board keeps the keyboard, to edit the plan");
}
