//! Small truths of the screen: a blocked board item is dimmed rather than drawn in palette
//! colour 8 (the background of some themes), and what else the tour of the TUI found.

use keel::agent::Snapshot;
use keel::board::Board;
use keel::tui::view::board::BoardPane;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier};
use serde_json::json;
use std::sync::Arc;

#[test]
fn a_blocked_item_is_dimmed_not_drawn_in_palette_colour_8() {
    let mut board = Board::default();
    board
        .update(&json!({"items": [
            {"id": "1", "text": "Split the tokenizer out", "status": "in_progress", "activeForm": "Splitting"},
            {"id": "2", "text": "Test the tokenizer", "status": "pending", "blocked_by": ["1"]},
        ]}))
        .unwrap();
    let snapshot = Snapshot { board: Arc::new(board), ..Snapshot::default() };
    let area = Rect::new(0, 0, 50, 6);
    let mut buf = Buffer::empty(area);
    BoardPane::default().render(&snapshot, area, &mut buf, false, 0);
    let row = (0..area.height)
        .find(|y| {
            (0..area.width).map(|x| buf[(x, *y)].symbol()).collect::<String>().contains("Test")
        })
        .expect("the blocked item is drawn");
    let text: Vec<_> = (0..area.width)
        .map(|x| &buf[(x, row)])
        .filter(|cell| cell.symbol().chars().all(char::is_alphabetic) && cell.symbol() != " ")
        .collect();
    assert!(!text.is_empty());
    for cell in text {
        assert_ne!(cell.fg, Color::DarkGray, "colour 8 is the background in Solarized Dark");
        assert_ne!(cell.fg, Color::Indexed(8));
        assert!(cell.modifier.contains(Modifier::DIM), "{:?} is dimmed", cell.symbol());
    }
}

#[test]
fn ctrl_w_deletes_back_to_whitespace_like_readline() {
    use keel::tui::view::composer::Composer;
    use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    let mut composer = Composer::new();
    for c in "cat src/tui/view.rs --flag=a.b  ".chars() {
        composer.input(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
    }
    let ctrl_w = KeyEvent::new(KeyCode::Char('w'), KeyModifiers::CONTROL);
    composer.input(ctrl_w);
    assert_eq!(composer.text(), "cat src/tui/view.rs ", "the flag goes whole, with the blanks");
    composer.input(ctrl_w);
    assert_eq!(composer.text(), "cat ", "the path goes whole, not one part of it");
    composer.input(ctrl_w);
    composer.input(ctrl_w);
    assert_eq!(composer.text(), "");
}

/// The screen with `snapshot` applied to `app`, as text.
fn screen_of(app: &mut keel::tui::App, (width, height): (u16, u16)) -> String {
    let mut terminal =
        ratatui::Terminal::new(ratatui::backend::TestBackend::new(width, height)).unwrap();
    app.prepare(Rect::new(0, 0, width, height));
    terminal.draw(|frame| keel::tui::render(app, frame)).unwrap();
    let buffer = terminal.backend().buffer();
    (0..buffer.area.height)
        .map(|y| (0..buffer.area.width).map(|x| buffer[(x, y)].symbol()).collect::<String>())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn a_call_that_failed_was_declined_refused_or_rejected_says_so_on_its_line() {
    use keel::agent::{CallMark, Entry, Refusal, ToolStatus};
    use keel::tools::bash::hint::SandboxHint;
    let call = |id: &str, name: &str, summary: &str| Entry::ToolCall {
        id: id.into(),
        name: name.into(),
        summary: summary.into(),
    };
    let transcript: imbl::Vector<Entry> = [
        Entry::User { text: "Clean up.".into() },
        call("c1", "bash", "make clean"),
        call("c2", "todo", "#3 completed, #4 in_progress"),
        call("c3", "bash", "rm -rf target"),
        call("c4", "read_file", "Makefile"),
        call("c5", "bash", "curl -s example.com || true"),
        call("c6", "write_file", "notes.md"),
        call("c7", "bash", "pip install rich"),
    ]
    .into_iter()
    .collect();
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    let mut app = keel::tui::App::new(tx, keel::tui::TuiOptions::default());
    app.apply_snapshot(Snapshot { transcript: transcript.clone(), ..Snapshot::default() });
    let before = screen_of(&mut app, (80, 16));
    assert!(!before.contains("failed"), "nothing has ended yet:\n{before}");

    // The calls end after their lines were laid out: the lines are marked all the same.
    let mark = |status, hint, reason: Option<&str>| CallMark {
        status,
        hint,
        reason: reason.map(Into::into),
    };
    let marks: imbl::HashMap<String, CallMark> = [
        ("c1".to_owned(), mark(ToolStatus::Failed, None, None)),
        (
            "c2".to_owned(),
            mark(ToolStatus::Failed, None, Some("Item 4: blocked by unknown item '9'")),
        ),
        ("c3".to_owned(), mark(ToolStatus::Declined, None, None)),
        ("c5".to_owned(), mark(ToolStatus::Succeeded, Some(SandboxHint::NoNetwork), None)),
        ("c6".to_owned(), mark(ToolStatus::Refused(Refusal::PlanMode), None, None)),
        ("c7".to_owned(), mark(ToolStatus::Failed, Some(SandboxHint::NoNetwork), None)),
    ]
    .into_iter()
    .collect();
    app.apply_snapshot(Snapshot { transcript, call_marks: marks, ..Snapshot::default() });
    let after = screen_of(&mut app, (99, 16));
    insta::assert_snapshot!("call_marks_99x16", after);
    assert!(after.contains("make clean ✗ failed"), "{after}");
    assert!(
        after.contains("✗ rejected: Item 4: blocked by unknown item '9'"),
        "a refused board update, with the board's reason: {after}"
    );
    assert!(after.contains("rm -rf target ⊘ declined"), "{after}");
    assert!(after.contains("read_file Makefile  "), "a call that succeeded is left as it was");
    assert!(after.contains("|| true ⚠ no network"), "exit 0 hides no failure: {after}");
    assert!(
        after.contains("notes.md ⊘ refused: plan mode"),
        "keel's refusal, not the person's: {after}"
    );
    assert!(after.contains("pip install rich ✗ failed · no network"), "{after}");
}

#[test]
fn tab_completes_a_slash_command_in_the_composer() {
    use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let mut app = keel::tui::App::new(tx, keel::tui::TuiOptions::default());
    for c in "/comp".chars() {
        app.handle_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
    }
    app.handle_key(KeyEvent::new(KeyCode::Tab, KeyModifiers::NONE));
    let screen = screen_of(&mut app, (60, 12));
    assert!(screen.contains("/compact "), "{screen}");
    app.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    assert_eq!(rx.try_recv().ok(), Some(keel::agent::Command::Compact), "it runs as typed whole");
}
