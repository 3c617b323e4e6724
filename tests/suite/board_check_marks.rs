//! What the screen shows of board items' checks: the pane's marks (passed, failed with the time
//! of the run, stale, checking…, never run), the check command under each item of a plan that
//! waits for approval, the last check opened in the pager by Enter or `o`, the keys the status
//! bar lists for them, and the approval box saying which item's completion asks for a command.
//!
//! Times are drawn on a fixed clock (UTC unless a test gives another), never the machine's.

use super::board_pane::{focused, pane_text};
use crate::support::tui::{app_with, draw, press, screen_text, sent, type_text};
use keel::agent::{
    Activity, AgentEvent, ApprovalRequest, Asking, CheckEnd, CheckRecord, ChildAgent, ChildStatus,
    Command, Entry, Snapshot,
};
use keel::board::Board;
use keel::message::Usage;
use keel::tools::task::Kind;
use keel::tui::OverlayKind;
use keel::tui::view::board::BoardPane;
use keel::tui::view::board::marks::Clock;
use ratatui::crossterm::event::KeyCode;
use ratatui::style::Modifier;
use serde_json::json;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// 2026-12-07 14:32:05 UTC.
const RUN_AT_SECONDS: u64 = 1_796_653_925;
const ONE_HOUR: i64 = 3600;

fn run_at() -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(RUN_AT_SECONDS)
}

fn record(command: &str, end: CheckEnd, failures_in_row: u32, output: &str) -> Arc<CheckRecord> {
    let exit_code = match &end {
        CheckEnd::Passed => Some(0),
        CheckEnd::Failed { .. } => Some(1),
        CheckEnd::Running => None,
    };
    Arc::new(CheckRecord {
        command: command.into(),
        end,
        exit_code,
        output: output.into(),
        at: run_at(),
        duration: Duration::from_millis(2_100),
        failures_in_row,
    })
}

fn failed() -> CheckEnd {
    CheckEnd::Failed { why: "exit 1".into() }
}

/// One item for each mark, and one without a check.
fn marked_snapshot() -> Snapshot {
    let mut board = Board::default();
    board
        .update(&json!({"items": [
            {"id": "1", "text": "Read the parser", "status": "completed", "check": "true"},
            {"id": "2", "text": "Fix the parser", "status": "in_progress", "check": "cargo test -q parser"},
            {"id": "3", "text": "Write the CSV", "check": "test -s out.csv"},
            {"id": "4", "text": "Lint", "check": "cargo clippy"},
            {"id": "5", "text": "Ship", "check": "make dist"},
            {"id": "6", "text": "Tell the team"},
        ]}))
        .unwrap();
    board.mark_check_passed("1");
    let checks = imbl::HashMap::from_iter([
        ("1".to_owned(), record("true", CheckEnd::Passed, 0, "")),
        (
            "2".to_owned(),
            record("cargo test -q parser", failed(), 1, "test parser ... FAILED\nerror: 1 failed"),
        ),
        ("3".to_owned(), record("test -s out.csv", failed(), 3, "")),
        ("4".to_owned(), record("cargo clippy", CheckEnd::Running, 0, "")),
    ]);
    Snapshot { board: Arc::new(board), checks, ..Snapshot::default() }
}

/// The drawn row that holds `needle`, without the pane's borders.
fn row_with<'a>(text: &'a str, needle: &str) -> &'a str {
    let row = text.lines().find(|line| line.contains(needle));
    row.unwrap_or_else(|| panic!("{needle}: {text}")).trim_matches('│').trim()
}

// ---------------------------------------------------------------- the pane's marks

#[test]
fn snapshot_each_mark_at_40_columns() {
    let snapshot = marked_snapshot();
    let text = pane_text(&BoardPane::default(), &snapshot, (40, 12));
    insta::assert_snapshot!("check_marks_40x12", text);
    assert!(row_with(&text, "#1 Read the parser").ends_with("Read the parser  ✓"), "{text}");
    assert!(row_with(&text, "#2 Fix the parser").contains("Fix the parser  ✗ 14:32"), "{text}");
    assert!(row_with(&text, "#3 Write").contains("✗ 14:32 stale"), "{text}");
    assert!(row_with(&text, "#4 Lint").ends_with("Lint  checking…"), "{text}");
    assert!(row_with(&text, "#5 Ship").ends_with("Ship  check"), "{text}");
    assert!(row_with(&text, "#6 Tell the team").ends_with("Tell the team"), "{text}");
    // Only a stale item says so.
    assert_eq!(text.matches("stale").count(), 1, "{text}");
}

#[test]
fn a_failed_check_shows_the_time_on_the_persons_clock() {
    let snapshot = marked_snapshot();
    let east = BoardPane::with_clock(Clock::at_offset(ONE_HOUR));
    let text = pane_text(&east, &snapshot, (60, 12));
    assert!(row_with(&text, "#2 Fix").contains("✗ 15:32"), "{text}");
    let west = BoardPane::with_clock(Clock::at_offset(-15 * ONE_HOUR));
    let text = pane_text(&west, &snapshot, (60, 12));
    assert!(row_with(&text, "#2 Fix").contains("✗ 23:32"), "{text}");
}

#[test]
fn a_record_of_a_check_the_item_no_longer_has_marks_nothing_of_it() {
    let mut snapshot = marked_snapshot();
    snapshot.checks.insert("5".into(), record("make old-dist", failed(), 3, ""));
    snapshot.checks.insert("6".into(), record("gone", failed(), 1, ""));
    let text = pane_text(&BoardPane::default(), &snapshot, (60, 12));
    assert!(row_with(&text, "#5 Ship").ends_with("Ship  check"), "{text}");
    assert!(row_with(&text, "#6 Tell").ends_with("Tell the team"), "{text}");
}

#[test]
fn a_mark_never_cuts_a_long_item_at_40_columns() {
    let mut board = Board::default();
    board
        .update(&json!({"items": [
            {"id": "12", "text": "Split the tokenizer out of the parser module", "check": "cargo test -q tokenizer", "blocked_by": ["13"]},
            {"id": "13", "text": "Test the tokenizer"},
        ]}))
        .unwrap();
    let checks = imbl::HashMap::from_iter([(
        "12".to_owned(),
        record("cargo test -q tokenizer", failed(), 1, ""),
    )]);
    let snapshot = Snapshot { board: Arc::new(board), checks, ..Snapshot::default() };
    let text = pane_text(&BoardPane::default(), &snapshot, (40, 8));
    insta::assert_snapshot!("check_mark_wrapped_40x8", text);
    let inside = text.lines().map(|line| line.trim_matches(['│', '╭', '╰']));
    let joined = inside.flat_map(str::split_whitespace).collect::<Vec<_>>().join(" ");
    for part in ["Split the tokenizer out of the parser module", "✗ 14:32", "(blocked by #13)"] {
        assert!(joined.contains(part), "{part} cut: {text}");
    }
}

// ---------------------------------------------------------------- plan mode

#[test]
fn snapshot_a_waiting_plan_shows_each_items_check_under_it() {
    let snapshot = Snapshot { plan_mode: true, plan_ready: true, ..marked_snapshot() };
    let text = pane_text(&BoardPane::default(), &snapshot, (40, 16));
    insta::assert_snapshot!("plan_ready_checks_40x16", text);
    let lines: Vec<&str> = text.lines().map(|line| line.trim_matches('│').trim()).collect();
    let under = |item: &str| {
        let at = lines.iter().position(|line| line.contains(item)).unwrap();
        lines[at + 1]
    };
    assert_eq!(under("#2 Fix the parser"), "check: cargo test -q parser", "{text}");
    assert_eq!(under("#5 Ship"), "check: make dist", "{text}");
    assert_eq!(under("#6 Tell the team"), "", "an item without a check has no line: {text}");
    assert_eq!(text.matches("check: ").count(), 5, "{text}");
    // Before the plan is ready, or outside plan mode, the commands stay off the pane.
    let drafting = Snapshot { plan_mode: true, ..marked_snapshot() };
    let text = pane_text(&BoardPane::default(), &drafting, (40, 16));
    assert!(!text.contains("check: "), "{text}");
}

// ---------------------------------------------------------------- the check in the pager

#[test]
fn snapshot_enter_on_an_item_with_a_check_opens_its_last_run() {
    let (mut app, mut rx) = focused(marked_snapshot());
    // Focus starts on the item in progress, #2, whose check failed.
    let hints = screen_text(&draw(&mut app, (120, 30)));
    assert!(row_with(&hints, "Enter/o").contains("Enter/o check"), "{hints}");
    press(&mut app, KeyCode::Enter);
    assert!(sent(&mut rx).is_empty(), "Enter opened the check, it did not ask for an approval");
    let terminal = draw(&mut app, (80, 16));
    insta::assert_snapshot!("check_pager_80x16", terminal.backend());
    let text = screen_text(&terminal);
    assert!(text.contains("check #2"), "{text}");
    assert!(text.contains("$ cargo test -q parser"), "{text}");
    assert!(text.contains("failed (exit 1) · 2.1s · at 14:32"), "{text}");
    assert!(text.contains("test parser ... FAILED") && text.contains("error: 1 failed"), "{text}");
    // A check has no calls before or after it to step to: the status bar does not offer `[`.
    let wide = screen_text(&draw(&mut app, (160, 30)));
    assert!(wide.contains("close") && !wide.contains("call before"), "{wide}");
    // Closing it gives the board its keyboard back.
    press(&mut app, KeyCode::Esc);
    assert!(app.board_focused());
    assert!(!screen_text(&draw(&mut app, (80, 16))).contains("$ cargo test"));
}

#[test]
fn o_opens_a_passed_check_and_the_stale_count_is_told() {
    let (mut app, _rx) = focused(marked_snapshot());
    press(&mut app, KeyCode::Up);
    type_text(&mut app, "o");
    let text = screen_text(&draw(&mut app, (80, 16)));
    assert!(
        text.contains("$ true") && text.contains("passed (exit 0) · 2.1s · at 14:32"),
        "{text}"
    );
    assert!(text.contains("(no output)"), "{text}");
    press(&mut app, KeyCode::Esc);
    press(&mut app, KeyCode::Down);
    press(&mut app, KeyCode::Down);
    press(&mut app, KeyCode::Enter);
    let text = screen_text(&draw(&mut app, (80, 16)));
    assert!(text.contains("failed 3 times in a row: stale"), "{text}");
}

#[test]
fn without_a_check_record_enter_and_o_do_what_they_did() {
    let (mut app, mut rx) = focused(marked_snapshot());
    // #5 has a check that never ran: Enter asks for the approval as before (the agent says
    // there is no plan), and `o` has no child to open.
    for _ in 0..3 {
        press(&mut app, KeyCode::Down);
    }
    let hints = screen_text(&draw(&mut app, (120, 30)));
    assert!(!hints.contains("Enter/o check"), "{hints}");
    press(&mut app, KeyCode::Enter);
    assert_eq!(sent(&mut rx), [Command::ApprovePlan]);
    type_text(&mut app, "o");
    assert!(app.board_focused(), "nothing opened");
    assert!(!screen_text(&draw(&mut app, (80, 16))).contains("$ make dist"));
}

#[test]
fn a_waiting_plan_keeps_enter_for_the_approval_and_o_still_shows_the_check() {
    let snapshot = Snapshot { plan_mode: true, plan_ready: true, ..marked_snapshot() };
    let (mut app, mut rx) = focused(snapshot);
    let hints = screen_text(&draw(&mut app, (140, 30)));
    assert!(hints.contains("Enter approve plan") && hints.contains("o check"), "{hints}");
    assert!(!hints.contains("Enter/o check"), "{hints}");
    type_text(&mut app, "o");
    assert!(screen_text(&draw(&mut app, (80, 16))).contains("$ cargo test -q parser"));
    press(&mut app, KeyCode::Esc);
    press(&mut app, KeyCode::Enter);
    assert_eq!(sent(&mut rx), [Command::ApprovePlan]);
}

#[test]
fn the_open_check_follows_a_new_run_of_it() {
    let (mut app, _rx) = focused(marked_snapshot());
    press(&mut app, KeyCode::Enter);
    let mut next = marked_snapshot();
    next.seq += 1;
    next.checks.insert("2".into(), record("cargo test -q parser", CheckEnd::Running, 1, ""));
    app.apply_snapshot(next);
    let text = screen_text(&draw(&mut app, (80, 16)));
    assert!(text.contains("running since 14:32") && !text.contains("FAILED"), "{text}");
}

// ---------------------------------------------------------------- the approval box

#[test]
fn snapshot_the_approval_box_names_the_item_whose_check_asks() {
    let request = ApprovalRequest {
        id: "check_1".into(),
        tool: "bash".into(),
        asking: Asking::Command,
        detail: "cargo test -q parser".into(),
        diff: None,
        always: Some("`cargo test -q parser`".into()),
        sandbox: None,
        agent: None,
        check: Some("#3 Fix the parser".into()),
    };
    let snapshot = Snapshot {
        seq: 1,
        activity: Activity::AwaitingApproval,
        pending_approval: Some(Arc::new(request)),
        ..Snapshot::default()
    };
    let (mut app, _rx) = app_with(snapshot);
    let terminal = draw(&mut app, (60, 20));
    insta::assert_snapshot!("approval_box_check_60x20", terminal.backend());
    let text = screen_text(&terminal);
    let lines: Vec<&str> = text.lines().collect();
    let why = lines
        .iter()
        .position(|line| line.contains("Completing #3 Fix the parser runs its check first:"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(lines[why + 1].contains("bash wants to run:"), "{text}");
    assert!(lines[why + 2].contains("cargo test -q parser"), "{text}");
}

// ---------------------------------------------------------------- the conversation

#[test]
fn a_checks_end_reads_as_a_notice_in_the_conversation() {
    let end = |passed: bool, exit: &str| AgentEvent::CheckEnd {
        item: "3".into(),
        command: "cargo test -q parser".into(),
        passed,
        exit_code: Some(if passed { 0 } else { 1 }),
        exit: exit.into(),
        duration_ms: 2_100,
        output: "test parser ... FAILED".into(),
        failures_in_row: u32::from(!passed),
    };
    let transcript: imbl::Vector<Entry> =
        [end(false, "exit 1"), end(true, "exit 0")].iter().filter_map(AgentEvent::entry).collect();
    let (mut app, _rx) = app_with(Snapshot { seq: 1, transcript, ..Snapshot::default() });
    let terminal = draw(&mut app, (100, 20));
    let text = screen_text(&terminal);
    let notice = |line: &str| {
        let row =
            text.lines().position(|row| row.contains(line)).unwrap_or_else(|| panic!("{text}"));
        let x = text.lines().nth(row).unwrap().chars().position(|c| c == '·').unwrap();
        let cell =
            &terminal.backend().buffer()[(u16::try_from(x).unwrap(), u16::try_from(row).unwrap())];
        assert!(cell.modifier.contains(Modifier::DIM), "{line}: not drawn as a dim notice");
    };
    notice("· ✗ check #3 cargo test -q parser · exit 1 · 2.1s");
    notice("· ✓ check #3 cargo test -q parser · 2.1s");
    assert!(!text.contains("FAILED"), "the output stays in the check's view: {text}");
}

#[test]
fn o_keeps_opening_the_child_of_an_item_a_child_did_and_enter_shows_its_check() {
    let mut snapshot = marked_snapshot();
    let child = ChildAgent {
        id: Arc::from("a1"),
        call_id: Arc::from("toolu_1"),
        label: Arc::from("Fix the parser"),
        item: Some(Arc::from("2")),
        kind: Kind::General,
        status: ChildStatus::Done,
        tool: None,
        rounds: 2,
        usage: Usage::default(),
        view: Some(Box::default()),
    };
    snapshot.children = [Arc::new(child)].into_iter().collect();
    let (mut app, _rx) = focused(snapshot);
    let hints = screen_text(&draw(&mut app, (140, 30)));
    assert!(hints.contains("Enter check") && hints.contains("o child agent"), "{hints}");
    type_text(&mut app, "o");
    assert_eq!(app.overlay(), Some(OverlayKind::Agents));
    press(&mut app, KeyCode::Esc);
    type_text(&mut app, "/todos");
    press(&mut app, KeyCode::Enter);
    press(&mut app, KeyCode::Enter);
    assert_eq!(app.overlay(), Some(OverlayKind::Output));
    assert!(screen_text(&draw(&mut app, (80, 16))).contains("$ cargo test -q parser"));
}
