//! The conversation's scrolling (following new output, paging, the wheel) and the TUI's
//! robustness: tiny sizes, resize storms, and long transcripts laid out only where looked at.

use crate::support::screens::*;
use crate::support::tui::{app_with, ctrl, draw, press, screen_text, type_text};
use keel::agent::{ApprovalRequest, Entry, Snapshot, StreamingText};
use keel::message::{ContentBlock, Message};
use keel::tui::view::inspector::Inspector;
use keel::tui::{App, UiEvent, render};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyModifiers, MouseEvent, MouseEventKind};
use ratatui::layout::Rect;
use std::sync::Arc;

fn long_conversation(entries: usize) -> Snapshot {
    let transcript = (0..entries)
        .map(|i| {
            if i % 2 == 0 {
                user(&format!("Question {i}"))
            } else {
                assistant(&format!("Answer {i} with **bold** text and a list:\n\n- one\n- two"))
            }
        })
        .collect();
    Snapshot { transcript, ..base_snapshot() }
}

/// The conversation pane's rows of a wide screen (left of the right column).
fn conversation_rows(terminal: &Terminal<TestBackend>) -> Vec<String> {
    screen_text(terminal).lines().map(|line| line.chars().take(70).collect()).collect()
}

#[test]
fn page_up_stops_following_and_new_entries_do_not_move_the_view() {
    let (mut app, _rx) = app_with(long_conversation(60));
    draw(&mut app, WIDE);
    assert!(app.is_following());
    press(&mut app, KeyCode::PageUp);
    assert!(!app.is_following());
    let before = conversation_rows(&draw(&mut app, WIDE));

    let mut more = long_conversation(60);
    more.transcript.push_back(assistant("A brand new answer that must not yank the view."));
    more.transcript.push_back(user("and another prompt"));
    app.apply_snapshot(more);
    let after = conversation_rows(&draw(&mut app, WIDE));
    assert_eq!(before[1..30], after[1..30], "the rows being read stay put");
    assert!(!screen_text(&draw(&mut app, WIDE)).contains("brand new answer"));

    press(&mut app, KeyCode::End);
    assert!(app.is_following());
    assert!(screen_text(&draw(&mut app, WIDE)).contains("and another prompt"));
}

#[test]
fn following_shows_new_output_as_it_arrives() {
    let (mut app, _rx) = app_with(long_conversation(60));
    draw(&mut app, WIDE);
    let mut more = long_conversation(60);
    more.streaming = Some(StreamingText::from("streaming words arrive here"));
    app.apply_snapshot(more);
    assert!(screen_text(&draw(&mut app, WIDE)).contains("streaming words arrive here"));
}

#[test]
fn paging_up_in_a_conversation_that_fits_keeps_following() {
    let (mut app, _rx) = app_with(long_conversation(2));
    draw(&mut app, WIDE);
    press(&mut app, KeyCode::PageUp);
    press(&mut app, KeyCode::Home);
    assert!(app.is_following());
}

#[test]
fn paging_down_to_the_end_resumes_following() {
    let (mut app, _rx) = app_with(long_conversation(60));
    draw(&mut app, WIDE);
    press(&mut app, KeyCode::PageUp);
    press(&mut app, KeyCode::PageUp);
    assert!(!app.is_following());
    for _ in 0..5 {
        press(&mut app, KeyCode::PageDown);
    }
    assert!(app.is_following());
}

#[test]
fn home_goes_to_the_top() {
    let (mut app, _rx) = app_with(long_conversation(60));
    draw(&mut app, WIDE);
    press(&mut app, KeyCode::Home);
    assert!(screen_text(&draw(&mut app, WIDE)).contains("Question 0"));
}

#[test]
fn the_mouse_wheel_scrolls_the_conversation() {
    let (mut app, _rx) = app_with(long_conversation(60));
    draw(&mut app, WIDE);
    let wheel = |kind| {
        UiEvent::Mouse(MouseEvent { kind, column: 10, row: 10, modifiers: KeyModifiers::NONE })
    };
    app.handle_event(wheel(MouseEventKind::ScrollUp));
    assert!(!app.is_following());
    app.handle_event(wheel(MouseEventKind::ScrollDown));
    assert!(app.is_following());
}

// ---------------------------------------------------------------- robustness

/// A state with every pane busy: long transcript, board, tools, streaming, queued prompts.
fn busy_app() -> App {
    app_with(busy_snapshot()).0
}

fn busy_snapshot() -> Snapshot {
    let mut snapshot = mid_task_snapshot();
    snapshot.board = long_board();
    for entry in long_conversation(40).transcript {
        snapshot.transcript.push_back(entry);
    }
    snapshot.transcript.push_back(Entry::Error { text: "a very long error ".repeat(20) });
    snapshot.streaming = Some(StreamingText::from("# Title\n\n```\ncode\n```\n- a\n- b"));
    snapshot.queued.push_back("queued prompt".into());
    snapshot.history = sample_history();
    snapshot
}

#[test]
fn tiny_sizes_and_resize_storms_never_panic() {
    let mut apps = vec![busy_app()];
    let mut with_help = busy_app();
    type_text(&mut with_help, "?");
    apps.push(with_help);
    let mut with_history = busy_app();
    with_history.handle_key(ctrl('t'));
    apps.push(with_history);
    let mut snapshot = busy_snapshot();
    snapshot.pending_approval = Some(Arc::new(ApprovalRequest {
        id: "call_9".into(),
        tool: "write_file".into(),
        asking: keel::agent::Asking::Change,
        detail: "a/very/long/path/".repeat(10),
        always: None,
        sandbox: None,
        diff: Some("+added line\n-removed line\n".repeat(50)),
        agent: None,
        check: None,
    }));
    apps.push(app_with(snapshot).0);

    let mut rng = fastrand::Rng::with_seed(7);
    for mut app in apps {
        for size in [(1, 1), (40, 12), (2, 2), (0, 0), (1, 40), (200, 1), (99, 30), (100, 30)] {
            draw(&mut app, size);
        }
        let mut terminal = Terminal::new(TestBackend::new(120, 40)).unwrap();
        for _ in 0..200 {
            let (w, h) = (rng.u16(0..260), rng.u16(0..90));
            terminal.backend_mut().resize(w, h);
            // Draw without `prepare` sometimes: render must cope with a cold cache.
            if rng.bool() {
                app.prepare(Rect::new(0, 0, w, h));
            }
            terminal.draw(|frame| render(&app, frame)).unwrap();
            press(&mut app, KeyCode::PageUp);
        }
    }
}

#[test]
fn rendering_a_long_transcript_draws_only_what_is_visible() {
    let (mut app, _rx) = app_with(long_conversation(10_000));
    let terminal = draw(&mut app, WIDE);
    assert!(screen_text(&terminal).contains("Answer 9999"));
    // A screen of 40 rows holds a handful of entries; the other 9,990 are never laid out.
    let laid_out = app.conversation_laid_out();
    assert!((1..=40).contains(&laid_out), "{laid_out} of 10,000 entries laid out");
}

#[test]
fn the_inspector_opens_on_a_long_history_by_laying_out_only_what_is_visible() {
    let history = (0..10_000)
        .map(|i| {
            let text = format!("message {i} {}", "x".repeat(500));
            if i % 2 == 0 {
                Message::user_text(text)
            } else {
                Message::assistant(vec![ContentBlock::Text { text }])
            }
        })
        .collect();
    let mut overlay = Inspector::open(&Snapshot { history, ..Snapshot::default() });
    let area = Rect::new(0, 0, 120, 40);
    overlay.prepare(area);
    let mut terminal = Terminal::new(TestBackend::new(120, 40)).unwrap();
    terminal.draw(|frame| overlay.render(frame.area(), frame.buffer_mut())).unwrap();
    assert!(screen_text(&terminal).contains("message 9999"));
    let laid_out = overlay.laid_out();
    assert!((1..=40).contains(&laid_out), "{laid_out} of 10,000 messages laid out");
}
