//! What a screen of any size still tells: the item in progress whole in the right column at
//! 120×40, the newest call's line where there are no rows for the tool pane (40×12), the quit
//! prompt at 80 columns however many facts the bar holds, and a sandbox's hint on the tool
//! pane's line. Drawn into a `TestBackend`.

use crate::support::tui::{app_with, ctrl, draw, screen_text};
use keel::agent::{Activity, Snapshot, ToolRun, ToolStatus};
use keel::board::Board;
use keel::message::Usage;
use keel::runtime::sandbox::Mode;
use keel::tools::bash::hint::SandboxHint;
use serde_json::json;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn board(text: &str, active_form: &str) -> Arc<Board> {
    let mut board = Board::default();
    board
        .update(&json!({"items": [
            {"id": "1", "text": text, "status": "in_progress", "activeForm": active_form},
            {"id": "2", "text": "Write greet.sh", "status": "pending"},
        ]}))
        .unwrap();
    Arc::new(board)
}

fn run(summary: &str, status: ToolStatus, exit_code: Option<i32>, output: &str) -> Arc<ToolRun> {
    Arc::new(ToolRun {
        id: "c1".into(),
        name: "bash".into(),
        summary: summary.into(),
        status,
        exit_code,
        started: Instant::now(),
        duration: Some(Duration::from_millis(12)),
        output: output.into(),
    })
}

#[test]
fn at_120x40_what_the_item_in_progress_is_doing_is_never_broken_across_lines() {
    let (text, active) = ("Look around the workspace", "Looking around the workspace");
    let (mut app, _rx) = app_with(Snapshot { board: board(text, active), ..Snapshot::default() });
    let screen = screen_text(&draw(&mut app, (120, 40)));
    assert!(screen.contains(&format!("#1 {text}")), "{screen}");
    assert!(screen.contains(&format!("    ← {active}")), "a line of its own: {screen}");
    // Where it fits, it stays on the item's line.
    let (mut app, _rx) =
        app_with(Snapshot { board: board("Look around", "Looking"), ..Snapshot::default() });
    let screen = screen_text(&draw(&mut app, (120, 40)));
    assert!(screen.contains("#1 Look around  ← Looking"), "{screen}");
}

#[test]
fn at_40x12_the_newest_call_shows_in_the_conversations_border() {
    let snapshot = Snapshot {
        board: board("Look around the workspace", "Looking"),
        tools: [run("./greet.sh keel", ToolStatus::Succeeded, Some(0), "Hello, keel!")]
            .into_iter()
            .collect(),
        ..Snapshot::default()
    };
    let (mut app, _rx) = app_with(snapshot);
    let screen = screen_text(&draw(&mut app, (40, 12)));
    assert!(!screen.contains("╭ Tools"), "no rows for the tool pane here: {screen}");
    let border = screen.lines().find(|line| line.contains("✓ bash")).unwrap_or_default();
    assert!(border.starts_with("╰─ ✓ bash ./greet.sh"), "{screen}");
    assert!(border.contains("exit 0"), "{border}");
    insta::assert_snapshot!("tool_line_in_border_40x12", screen);
}

#[test]
fn at_80_columns_the_quit_prompt_is_shown_whatever_the_bar_holds() {
    let snapshot = Snapshot {
        provider: "anthropic".into(),
        model: "claude-sonnet-4-5".into(),
        usage: Usage { input_tokens: 1_234_567, output_tokens: 98_765, ..Usage::default() },
        sandbox: Some("sandbox: workspace · no network".into()),
        activity: Activity::Idle,
        reminder: keel::agent::Reminder::at(3, 2, 0),
        ..Snapshot::default()
    };
    let (mut app, _rx) = app_with(snapshot);
    app.handle_key(ctrl('c'));
    let screen = screen_text(&draw(&mut app, (80, 24)));
    let bar = screen.lines().last().unwrap();
    assert!(bar.contains("Press Ctrl+C again to quit"), "{bar}");
    assert!(bar.contains("idle"), "the agent's state stays: {bar}");
}

#[test]
fn a_command_that_exited_0_is_not_a_plain_success_when_the_sandbox_explains_a_failure() {
    let output = format!(
        "Exit code 0\n--- stderr ---\ncurl: (6) Could not resolve host: example.com\n\n{}\n",
        SandboxHint::NoNetwork.line(Mode::Workspace)
    );
    let snapshot = Snapshot {
        tools: [run("curl -s example.com || true", ToolStatus::Succeeded, Some(0), &output)]
            .into_iter()
            .collect(),
        ..Snapshot::default()
    };
    let (mut app, _rx) = app_with(snapshot);
    let screen = screen_text(&draw(&mut app, (120, 40)));
    let line = screen.lines().find(|line| line.contains(" bash cur"));
    let line = line.unwrap_or_else(|| panic!("{screen}"));
    assert!(line.contains("⚠ bash cur"), "{line}");
    assert!(line.contains("exit 0 · no network"), "{line}");
    assert!(!line.contains('✓'), "{line}");
}
