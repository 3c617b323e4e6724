//! The TUI drawn into a `TestBackend` and driven through `App`, without a terminal.
//!
//! Snapshots cover every visible state at a wide (120×40) and a narrow (60×20) size; the key tests
//! check state transitions and the commands `App` sends, captured from its channel.

use crate::support::tui::{
    app, app_with, ctrl, draw, key, new_app, press, screen_text, sent, type_text,
};
use keel::agent::{
    Activity, ApprovalRequest, Command, Decision, Entry, Snapshot, StreamingText, ToolRun,
    ToolStatus,
};
use keel::board::Board;
use keel::message::{ContentBlock, Message, Role, Usage};
use keel::tui::type_ahead::GRACE_PERIOD;
use keel::tui::view::inspector::{self, Inspector};
use keel::tui::{App, OverlayKind, TuiOptions, UiEvent, render};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseEvent, MouseEventKind};
use ratatui::layout::Rect;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};

const WIDE: (u16, u16) = (120, 40);
const NARROW: (u16, u16) = (60, 20);

// ---------------------------------------------------------------- helpers

/// Draws at both sizes and compares with the committed snapshots.
fn snap_both(name: &str, mut make: impl FnMut() -> App) {
    for size in [WIDE, NARROW] {
        let mut app = make();
        let terminal = draw(&mut app, size);
        insta::assert_snapshot!(format!("{name}_{}x{}", size.0, size.1), terminal.backend());
    }
}

fn board(items: Value) -> Arc<Board> {
    let mut board = Board::default();
    board.update(&json!({ "items": items })).unwrap();
    Arc::new(board)
}

fn mid_task_board() -> Arc<Board> {
    board(json!([
        {"id": "1", "text": "Read hello.py", "status": "completed"},
        {"id": "2", "text": "Add type hints to greet()", "status": "in_progress", "activeForm": "Adding type hints"},
        {"id": "3", "text": "Add docstrings", "status": "pending"},
        {"id": "4", "text": "Run the tests", "status": "pending"},
    ]))
}

fn finished_board() -> Arc<Board> {
    board(json!([
        {"id": "1", "text": "Read hello.py", "status": "completed"},
        {"id": "2", "text": "Add type hints to greet()", "status": "completed"},
        {"id": "3", "text": "Add docstrings", "status": "completed"},
        {"id": "4", "text": "Run the tests", "status": "completed"},
    ]))
}

fn long_board() -> Arc<Board> {
    let items: Vec<Value> = (1..=18)
        .map(|i| {
            let status = match i {
                1..=6 => "completed",
                7 => "in_progress",
                _ => "pending",
            };
            json!({"id": i.to_string(), "text": format!("Step {i}: update module_{i}.py and its tests"), "status": status, "activeForm": format!("Updating module_{i}.py")})
        })
        .collect();
    board(Value::Array(items))
}

fn run(id: &str, name: &str, summary: &str, status: ToolStatus, output: &str) -> Arc<ToolRun> {
    let finished = status != ToolStatus::Running;
    Arc::new(ToolRun {
        id: id.into(),
        name: name.into(),
        summary: summary.into(),
        status,
        exit_code: finished.then_some(if status == ToolStatus::Failed { 1 } else { 0 }),
        started: Instant::now(),
        duration: finished.then_some(Duration::from_millis(1234)),
        output: Arc::from(output),
    })
}

fn base_snapshot() -> Snapshot {
    Snapshot {
        seq: 1,
        provider: Arc::from("anthropic"),
        model: Arc::from("claude-sonnet-4-5"),
        nag_threshold: 3,
        usage: Usage { input_tokens: 12_345, output_tokens: 2_048, ..Usage::default() },
        ..Snapshot::default()
    }
}

fn transcript(entries: Vec<Entry>) -> imbl::Vector<Entry> {
    entries.into_iter().collect()
}

fn user(text: &str) -> Entry {
    Entry::User { text: text.into() }
}

fn assistant(text: &str) -> Entry {
    Entry::Assistant { text: text.into() }
}

fn tool_call(id: &str, name: &str, summary: &str) -> Entry {
    Entry::ToolCall { id: id.into(), name: name.into(), summary: summary.into() }
}

fn mid_task_snapshot() -> Snapshot {
    Snapshot {
        transcript: transcript(vec![
            user("Add type hints and docstrings to hello.py, then run the tests."),
            assistant("I'll plan this on the board, then work through it step by step."),
            tool_call("t1", "todo", "4 items"),
            tool_call("t2", "read_file", "hello.py"),
            Entry::Reminder { text: "<reminder>Update your todos.</reminder>".into() },
            assistant("The file has one function, `greet`. Adding hints now."),
            tool_call("t3", "edit_file", "hello.py"),
            tool_call("t4", "bash", "python -m pytest -q"),
        ]),
        board: mid_task_board(),
        tools: [
            run(
                "t2",
                "read_file",
                "hello.py",
                ToolStatus::Succeeded,
                "1\tdef greet(name):\n2\t    return f\"Hello, {name}!\"",
            ),
            run("t3", "edit_file", "hello.py", ToolStatus::Succeeded, "Edited hello.py"),
            run("t4", "bash", "python -m pytest -q", ToolStatus::Running, "collecting ...\n....\n"),
        ]
        .into_iter()
        .collect(),
        activity: Activity::RunningTool { name: "bash".into() },
        rounds_since_todo: 2,
        ..base_snapshot()
    }
}

fn sample_history() -> imbl::Vector<Message> {
    [
        Message::user_text("Add type hints to hello.py"),
        Message::assistant(vec![
            ContentBlock::Text { text: "I'll read the file first.".into() },
            ContentBlock::ToolUse {
                id: "toolu_01".into(),
                name: "read_file".into(),
                input: json!({"path": "hello.py"}),
            },
        ]),
        Message {
            role: Role::User,
            content: vec![
                ContentBlock::ToolResult {
                    tool_use_id: "toolu_01".into(),
                    content: "1\tdef greet(name):\n2\t    return f\"Hello, {name}!\"".into(),
                    is_error: false,
                },
                ContentBlock::Reminder { text: "<reminder>Update your todos.</reminder>".into() },
            ],
        },
        Message::assistant(vec![ContentBlock::Text {
            text: "`greet` takes a name and returns a greeting.".into(),
        }]),
    ]
    .into_iter()
    .collect()
}

/// The inspector on its own, opened on `sample_history` as an Anthropic session sends it.
fn sample_inspector() -> Inspector {
    Inspector::open(&Snapshot { history: sample_history(), ..Snapshot::default() })
}

// ---------------------------------------------------------------- snapshots

#[test]
fn snapshot_empty_first_run() {
    snap_both("empty_first_run", || {
        let (app, _rx) = new_app(TuiOptions {
            first_run_help: Some(keel::agent::CONFIGURE_HELP.into()),
            ..TuiOptions::default()
        });
        app
    });
}

#[test]
fn snapshot_board_mid_task() {
    snap_both("board_mid_task", || app_with(mid_task_snapshot()).0);
}

#[test]
fn snapshot_finished_board() {
    snap_both("finished_board", || {
        let mut snapshot = mid_task_snapshot();
        snapshot.board = finished_board();
        snapshot.activity = Activity::Idle;
        snapshot.rounds_since_todo = 0;
        snapshot.tools = [run(
            "t4",
            "bash",
            "python -m pytest -q",
            ToolStatus::Succeeded,
            "....\n4 passed in 0.12s\n",
        )]
        .into_iter()
        .collect();
        snapshot.transcript.push_back(tool_call("t5", "todo", "4 items"));
        snapshot.transcript.push_back(assistant(
            "Done: `greet` has type hints and a docstring, and all **4 tests** pass.",
        ));
        app_with(snapshot).0
    });
}

#[test]
fn snapshot_long_board_scrolled_in_focus() {
    snap_both("long_board_focused", || {
        let mut snapshot = mid_task_snapshot();
        snapshot.board = long_board();
        let (mut app, _rx) = app_with(snapshot);
        type_text(&mut app, "/todos");
        press(&mut app, KeyCode::Enter);
        assert!(app.board_focused());
        app.prepare(Rect::new(0, 0, 60, 20));
        app.prepare(Rect::new(0, 0, 120, 40));
        for _ in 0..3 {
            type_text(&mut app, "j");
        }
        app
    });
}

#[test]
fn snapshot_streaming_markdown() {
    snap_both("streaming_markdown", || {
        let snapshot = Snapshot {
            transcript: transcript(vec![user("How will you add the hints?")]),
            streaming: Some(StreamingText::from(
                "## Plan\n\nI'll **add type hints** to `hello.py` and keep *behaviour* the same:\n\n\
                 1. Read the file\n2. Annotate `greet`\n   - parameters\n   - return type\n\n\
                 ```python\ndef greet(name: str) -> str:\n    return f\"Hello, {name}!\"\n```\n\n> Tests run last.",
            )),
            activity: Activity::Thinking,
            ..base_snapshot()
        };
        app_with(snapshot).0
    });
}

#[test]
fn snapshot_error_entry() {
    snap_both("error_entry", || {
        let snapshot = Snapshot {
            transcript: transcript(vec![
                user("Fix the failing test"),
                Entry::Error {
                    text: "The provider rejected the API key (401 Unauthorized). Set ANTHROPIC_API_KEY to a valid key and try again.".into(),
                },
                Entry::Notice {
                    text: "Turn interrupted.".into(),
                },
            ]),
            ..base_snapshot()
        };
        app_with(snapshot).0
    });
}

#[test]
fn snapshot_history_overlay_with_search_hit() {
    snap_both("history_search", || {
        let snapshot = Snapshot {
            history: sample_history(),
            transcript: transcript(vec![user("Add type hints to hello.py")]),
            ..base_snapshot()
        };
        let (mut app, _rx) = app_with(snapshot);
        app.handle_key(ctrl('t'));
        type_text(&mut app, "/greet");
        press(&mut app, KeyCode::Enter);
        app
    });
}

#[test]
fn snapshot_inspector_highlights_hits_in_wire_messages() {
    for size in [WIDE, NARROW] {
        let mut overlay = sample_inspector();
        let area = Rect::new(0, 0, size.0, size.1);
        overlay.prepare(area);
        overlay.act(inspector::Action::Search);
        for c in "greet".chars() {
            overlay.type_key(&key(KeyCode::Char(c)));
        }
        overlay.type_key(&key(KeyCode::Enter));
        assert_eq!(overlay.hit_count(), 3);
        assert_eq!(overlay.current_hit(), Some(0));
        overlay.act(inspector::Action::NextHit);
        overlay.prepare(area);
        let mut terminal = Terminal::new(TestBackend::new(size.0, size.1)).unwrap();
        terminal.draw(|frame| overlay.render(frame.area(), frame.buffer_mut())).unwrap();
        insta::assert_snapshot!(
            format!("inspector_wire_search_{}x{}", size.0, size.1),
            terminal.backend()
        );
    }
}

#[test]
fn snapshot_retry_drops_the_partial_answer_and_counts_down() {
    snap_both("retry_countdown", || {
        let prompt = transcript(vec![user("Summarise the README")]);
        let (mut app, _rx) = app_with(Snapshot {
            transcript: prompt.clone(),
            streaming: Some(StreamingText::from("The README says that keel is a termi")),
            activity: Activity::Thinking,
            ..base_snapshot()
        });
        // Drawn once with the partial answer, so a stale layout would show.
        draw(&mut app, WIDE);
        let now = Instant::now();
        app.apply_snapshot(Snapshot {
            transcript: prompt,
            streaming: None,
            activity: Activity::Retrying {
                attempt: 1,
                until: now + Duration::from_millis(4_500),
                reason: "stream cut off".into(),
            },
            ..base_snapshot()
        });
        app.on_tick(now);
        app
    });
}

#[test]
fn snapshot_help_overlay() {
    snap_both("help_overlay", || {
        let (mut app, _rx) = app_with(base_snapshot());
        type_text(&mut app, "?");
        assert_eq!(app.overlay(), Some(OverlayKind::Help));
        app
    });
}

#[test]
fn snapshot_approval_modal_with_diff() {
    snap_both("approval_modal", || {
        let mut snapshot = mid_task_snapshot();
        snapshot.activity = Activity::AwaitingApproval;
        snapshot.pending_approval = Some(Arc::new(ApprovalRequest {
            id: "t3".into(),
            tool: "edit_file".into(),
            detail: "hello.py".into(),
            always: Some("every edit_file call for the rest of the session".into()),
            sandbox: None,
            diff: Some(
                "--- a/hello.py\n+++ b/hello.py\n@@ -1,2 +1,3 @@\n-def greet(name):\n+def greet(name: str) -> str:\n+    \"\"\"Return a greeting for name.\"\"\"\n     return f\"Hello, {name}!\"\n"
                    .into(),
            ),
        }));
        app_with(snapshot).0
    });
}

// ---------------------------------------------------------------- keys

#[test]
fn enter_sends_the_prompt() {
    let (mut app, mut rx) = app();
    type_text(&mut app, "Add tests");
    press(&mut app, KeyCode::Enter);
    assert_eq!(sent(&mut rx), [Command::Submit("Add tests".into())]);
    assert_eq!(app.composer_text(), "");
}

#[test]
fn enter_on_an_empty_composer_sends_nothing() {
    let (mut app, mut rx) = app();
    press(&mut app, KeyCode::Enter);
    type_text(&mut app, "   ");
    press(&mut app, KeyCode::Enter);
    assert!(sent(&mut rx).is_empty());
}

#[test]
fn shift_or_alt_enter_inserts_a_newline() {
    let (mut app, mut rx) = app();
    type_text(&mut app, "one");
    app.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::SHIFT));
    type_text(&mut app, "two");
    app.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::ALT));
    type_text(&mut app, "three");
    assert_eq!(app.composer_text(), "one\ntwo\nthree");
    assert!(sent(&mut rx).is_empty());
    press(&mut app, KeyCode::Enter);
    assert_eq!(sent(&mut rx), [Command::Submit("one\ntwo\nthree".into())]);
}

#[test]
fn up_recalls_earlier_prompts_on_an_empty_composer() {
    let (mut app, mut rx) = app();
    for prompt in ["first", "second"] {
        type_text(&mut app, prompt);
        press(&mut app, KeyCode::Enter);
    }
    sent(&mut rx);
    press(&mut app, KeyCode::Up);
    assert_eq!(app.composer_text(), "second");
    press(&mut app, KeyCode::Up);
    assert_eq!(app.composer_text(), "first");
    press(&mut app, KeyCode::Down);
    assert_eq!(app.composer_text(), "second");
    press(&mut app, KeyCode::Enter);
    assert_eq!(sent(&mut rx), [Command::Submit("second".into())]);
}

#[test]
fn up_recalls_prompts_of_a_resumed_session() {
    let snapshot = Snapshot {
        transcript: transcript(vec![user("from last time"), assistant("ok")]),
        ..base_snapshot()
    };
    let (mut app, _rx) = app_with(snapshot);
    press(&mut app, KeyCode::Up);
    assert_eq!(app.composer_text(), "from last time");
}

#[test]
fn up_moves_the_cursor_when_the_composer_has_text() {
    let (mut app, _rx) = app();
    type_text(&mut app, "old");
    press(&mut app, KeyCode::Enter);
    type_text(&mut app, "new");
    press(&mut app, KeyCode::Up);
    assert_eq!(app.composer_text(), "new");
}

#[test]
fn esc_interrupts_the_turn() {
    let mut snapshot = base_snapshot();
    snapshot.activity = Activity::Thinking;
    let (mut app, mut rx) = app_with(snapshot);
    press(&mut app, KeyCode::Esc);
    assert_eq!(sent(&mut rx), [Command::Cancel]);
}

#[test]
fn ctrl_c_clears_and_a_second_within_a_second_quits() {
    let (mut app, mut rx) = app();
    type_text(&mut app, "draft");
    let start = Instant::now();
    app.handle_key_at(ctrl('c'), start);
    assert_eq!(app.composer_text(), "");
    assert!(!app.should_quit());
    assert!(sent(&mut rx).is_empty());
    app.handle_key_at(ctrl('c'), start + Duration::from_millis(400));
    assert!(app.should_quit());
    assert_eq!(sent(&mut rx), [Command::Quit]);
}

#[test]
fn ctrl_c_twice_slowly_does_not_quit() {
    let (mut app, mut rx) = app();
    let start = Instant::now();
    app.handle_key_at(ctrl('c'), start);
    app.handle_key_at(ctrl('c'), start + Duration::from_millis(1500));
    assert!(!app.should_quit());
    assert!(sent(&mut rx).is_empty());
}

#[test]
fn ctrl_d_quits_only_on_an_empty_composer() {
    let (mut app, mut rx) = app();
    type_text(&mut app, "x");
    app.handle_key(ctrl('d'));
    assert!(!app.should_quit());
    app.handle_key(ctrl('c'));
    app.handle_key(key(KeyCode::Char('a')));
    app.handle_key(key(KeyCode::Backspace));
    app.handle_key(ctrl('d'));
    assert!(app.should_quit());
    assert_eq!(sent(&mut rx), [Command::Quit]);
}

#[test]
fn ctrl_t_and_f2_open_the_inspector_and_esc_or_q_close_it() {
    let (mut app, _rx) = app_with(base_snapshot());
    app.handle_key(ctrl('t'));
    assert_eq!(app.overlay(), Some(OverlayKind::History));
    press(&mut app, KeyCode::Esc);
    assert_eq!(app.overlay(), None);
    press(&mut app, KeyCode::F(2));
    assert_eq!(app.overlay(), Some(OverlayKind::History));
    type_text(&mut app, "q");
    assert_eq!(app.overlay(), None);
    assert_eq!(app.composer_text(), "", "keys in the inspector do not type");
}

#[test]
fn slash_searches_the_inspector_and_n_moves_between_hits() {
    // "def greet(name)" in the tool result, "`greet` takes" and "greeting" in the answer.
    const HITS: usize = 3;
    let snapshot = Snapshot { history: sample_history(), ..base_snapshot() };
    let (mut app, _rx) = app_with(snapshot);
    app.handle_key(ctrl('t'));
    app.prepare(Rect::new(0, 0, 120, 40));
    type_text(&mut app, "/greet");
    assert_eq!(app.overlay(), Some(OverlayKind::History), "typing stays in the search line");
    press(&mut app, KeyCode::Enter);
    assert_eq!(app.search_hits(), Some((Some(0), HITS)));
    type_text(&mut app, "n");
    assert_eq!(app.search_hits().unwrap().0, Some(1));
    type_text(&mut app, "N");
    assert_eq!(app.search_hits().unwrap().0, Some(0));
    type_text(&mut app, "N");
    assert_eq!(app.search_hits().unwrap().0, Some(HITS - 1), "N wraps around");
    type_text(&mut app, "n");
    assert_eq!(app.search_hits().unwrap().0, Some(0), "n wraps around");
    press(&mut app, KeyCode::Esc);
    assert_eq!(app.overlay(), None);
}

#[test]
fn inspector_search_steps_through_hits_both_ways() {
    let mut overlay = sample_inspector();
    overlay.prepare(Rect::new(0, 0, 80, 10));
    overlay.act(inspector::Action::Top);
    overlay.act(inspector::Action::Search);
    assert!(overlay.is_typing());
    for c in "GREET".chars() {
        overlay.type_key(&KeyEvent::new(KeyCode::Char(c), KeyModifiers::SHIFT));
    }
    overlay.type_key(&key(KeyCode::Enter));
    assert!(!overlay.is_typing());
    assert_eq!(overlay.hit_count(), 3, "search ignores case");
    assert_eq!(overlay.current_hit(), Some(0));
    overlay.act(inspector::Action::NextHit);
    overlay.act(inspector::Action::NextHit);
    assert_eq!(overlay.current_hit(), Some(2));
    overlay.act(inspector::Action::NextHit);
    assert_eq!(overlay.current_hit(), Some(0), "n wraps around");
    overlay.act(inspector::Action::PreviousHit);
    assert_eq!(overlay.current_hit(), Some(2));
    overlay.act(inspector::Action::Close);
    assert!(overlay.is_closed());
}

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

/// An app whose approval box has been on screen longer than the type-ahead grace period, with no
/// typing before it: its keys answer it.
fn approval_app() -> (App, UnboundedReceiver<Command>) {
    let (mut app, rx) = app();
    let settled = Instant::now().checked_sub(GRACE_PERIOD).unwrap();
    app.apply_snapshot_at(approval_snapshot(), settled);
    (app, rx)
}

fn approval_snapshot() -> Snapshot {
    let mut snapshot = base_snapshot();
    snapshot.activity = Activity::AwaitingApproval;
    snapshot.pending_approval = Some(Arc::new(ApprovalRequest {
        id: "call_7".into(),
        tool: "bash".into(),
        detail: "rm -rf build".into(),
        diff: None,
        always: Some("`rm` commands".into()),
        sandbox: None,
    }));
    snapshot
}

#[test]
fn approval_keys_send_the_decision() {
    for (code, decision) in [
        (KeyCode::Char('y'), Decision::Once),
        (KeyCode::Char('a'), Decision::Always),
        (KeyCode::Char('n'), Decision::Deny),
        (KeyCode::Esc, Decision::DenyAndStop),
    ] {
        let (mut app, mut rx) = approval_app();
        press(&mut app, code);
        assert_eq!(sent(&mut rx), [Command::Approve { id: "call_7".into(), decision }]);
        assert!(app.visible_approval().is_none(), "an answered request is hidden");
        press(&mut app, code);
        // A second Esc may still interrupt the turn, but nothing answers the request again.
        let again = sent(&mut rx);
        assert!(
            !again.iter().any(|command| matches!(command, Command::Approve { .. })),
            "{code:?}: a second press is not a second answer: {again:?}"
        );
        assert!(again.iter().all(|command| *command == Command::Cancel), "{again:?}");
    }
}

#[test]
fn the_approval_modal_takes_every_other_key() {
    let (mut app, mut rx) = approval_app();
    type_text(&mut app, "hello");
    press(&mut app, KeyCode::Enter);
    assert!(sent(&mut rx).is_empty());
    assert_eq!(app.composer_text(), "");
}

#[test]
fn slash_commands_run_locally() {
    for (text, command) in [
        ("/clear", Command::Clear),
        ("/undo", Command::Undo),
        ("/demo", Command::StartDemo),
        ("/quit", Command::Quit),
    ] {
        let (mut app, mut rx) = app();
        type_text(&mut app, text);
        press(&mut app, KeyCode::Enter);
        assert_eq!(sent(&mut rx), [command], "{text}");
    }
    let (mut app, _rx) = app();
    type_text(&mut app, "/help");
    press(&mut app, KeyCode::Enter);
    assert_eq!(app.overlay(), Some(OverlayKind::Help));
    press(&mut app, KeyCode::Esc);
    assert_eq!(app.overlay(), None);
}

#[test]
fn an_unknown_slash_command_is_a_notice_not_a_prompt() {
    let (mut app, mut rx) = app();
    type_text(&mut app, "/frobnicate now");
    press(&mut app, KeyCode::Enter);
    assert!(sent(&mut rx).is_empty());
    assert!(screen_text(&draw(&mut app, WIDE)).contains("Unknown command /frobnicate"));
}

#[test]
fn todos_focuses_the_board_and_esc_returns() {
    let mut snapshot = base_snapshot();
    snapshot.board = long_board();
    let (mut app, mut rx) = app_with(snapshot);
    type_text(&mut app, "/todos");
    press(&mut app, KeyCode::Enter);
    assert!(app.board_focused());
    type_text(&mut app, "jjj");
    assert_eq!(app.composer_text(), "", "keys scroll the board, not the composer");
    press(&mut app, KeyCode::Esc);
    assert!(!app.board_focused());
    assert!(sent(&mut rx).is_empty(), "Esc on the board does not interrupt");
}

#[test]
fn question_mark_opens_help_only_on_an_empty_composer() {
    let (mut app, _rx) = app();
    type_text(&mut app, "why");
    type_text(&mut app, "?");
    assert_eq!(app.overlay(), None);
    assert_eq!(app.composer_text(), "why?");
}

#[test]
fn prompts_typed_while_busy_are_sent_and_shown_as_queued() {
    let mut snapshot = mid_task_snapshot();
    let (mut app, mut rx) = app_with(snapshot.clone());
    type_text(&mut app, "also update the README");
    press(&mut app, KeyCode::Enter);
    assert_eq!(sent(&mut rx), [Command::Submit("also update the README".into())]);
    snapshot.queued.push_back("also update the README".into());
    app.apply_snapshot(snapshot);
    let screen = screen_text(&draw(&mut app, WIDE));
    assert!(screen.contains("queued  also update the README"), "{screen}");
}

#[test]
fn a_huge_paste_goes_in_whole_without_freezing() {
    let (mut app, mut rx) = app();
    let line = "0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz\n";
    let paste = line.repeat(5 * 1024 * 1024 / line.len());
    app.handle_event(UiEvent::Paste(paste.clone()));
    // The editor holds a token, not megabytes it would re-measure on every frame.
    let screen = screen_text(&draw(&mut app, WIDE));
    assert!(screen.contains("[paste #1: 71,820 lines, 5.0 MB]"), "{screen}");
    assert_eq!(app.composer_text(), paste, "the paste is kept whole");
    assert!(sent(&mut rx).is_empty(), "newlines in a paste do not send");
    press(&mut app, KeyCode::Enter);
    assert_eq!(sent(&mut rx), [Command::Submit(paste.trim_end().to_owned())]);

    // The conversation shows the start of such a prompt, not all of it: two blocks are laid
    // out, the welcome and the prompt's first lines.
    app.apply_snapshot(Snapshot { transcript: transcript(vec![user(&paste)]), ..base_snapshot() });
    let screen = screen_text(&draw(&mut app, WIDE));
    assert!(screen.contains("more lines, 5.0 MB in all (all of it was sent)"), "{screen}");
    assert_eq!(app.conversation_laid_out(), 2);
}

#[test]
fn a_small_paste_is_edited_in_place() {
    let (mut app, _rx) = app();
    type_text(&mut app, "fix ");
    app.handle_event(UiEvent::Paste("this\r\nbug".into()));
    assert_eq!(app.composer_text(), "fix this\nbug");
}

#[test]
fn the_spinner_turns_only_while_the_agent_works() {
    let mut snapshot = mid_task_snapshot();
    let (mut app, _rx) = app_with(snapshot.clone());
    let frame = |app: &mut App| screen_text(&draw(app, WIDE));
    let first = frame(&mut app);
    assert!(app.on_tick(Instant::now()));
    assert_ne!(first, frame(&mut app));
    snapshot.activity = Activity::Idle;
    snapshot.tools = imbl::Vector::new();
    app.apply_snapshot(snapshot);
    assert!(!app.on_tick(Instant::now()), "nothing to animate when idle");
}

#[test]
fn the_status_bar_counts_down_a_retry() {
    let now = Instant::now();
    let snapshot = Snapshot {
        activity: Activity::Retrying {
            attempt: 2,
            until: now + Duration::from_millis(4_500),
            reason: "529 overloaded".into(),
        },
        ..base_snapshot()
    };
    let (mut app, _rx) = app_with(snapshot);
    app.on_tick(now);
    let screen = screen_text(&draw(&mut app, WIDE));
    assert!(screen.contains("waiting for retry in 5s (attempt 2)"), "{screen}");
    assert!(screen.contains("anthropic · claude-sonnet-4-5"));
    assert!(screen.contains("↑12.3k ↓2.0k"));
}

#[test]
fn the_demo_banner_says_the_demo_runs() {
    let place =
        keel::llm::scripted::DemoPlace { folder: "/tmp/keel-demo-x".into(), temporary: true };
    let (mut app, _rx) = new_app(TuiOptions { demo: Some(place), ..TuiOptions::default() });
    assert!(screen_text(&draw(&mut app, WIDE)).contains("The demo is running"));
}

#[test]
fn a_setup_notice_is_shown_above_the_welcome() {
    let notice = "ignored `base_url` in the workspace's .keel/config.toml: a project's file may not choose the provider.";
    let (mut app, _rx) =
        new_app(TuiOptions { notice: Some(notice.into()), ..TuiOptions::default() });
    let screen = screen_text(&draw(&mut app, WIDE));
    assert!(
        screen.contains("keel ignored `base_url` in the workspace's .keel/config.toml"),
        "{screen}"
    );
    assert!(screen.contains("Tell keel what to do"), "{screen}");
}

#[test]
fn a_closed_agent_is_reported() {
    let (tx, rx) = unbounded_channel();
    drop(rx);
    let mut app = App::new(tx, TuiOptions::default());
    type_text(&mut app, "hello");
    press(&mut app, KeyCode::Enter);
    let screen = screen_text(&draw(&mut app, WIDE));
    assert!(screen.contains("The agent stopped"), "{screen}");
    assert!(screen.contains("agent stopped"));
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
        detail: "a/very/long/path/".repeat(10),
        always: None,
        sandbox: None,
        diff: Some("+added line\n-removed line\n".repeat(50)),
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
