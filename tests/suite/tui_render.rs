//! The TUI drawn into a `TestBackend`, compared with committed snapshots at a wide (120×40) and
//! a narrow (60×20) size, for every visible state. The keys are in `tui_keys`, scrolling and
//! robustness in `tui_scrolling`.

use crate::support::screens::*;
use crate::support::tui::{app_with, ctrl, draw, key, new_app, press, type_text};
use keel::agent::{Activity, ApprovalRequest, Entry, Snapshot, StreamingText, ToolStatus};
use keel::tui::view::inspector::{self};
use keel::tui::{App, OverlayKind, TuiOptions};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::KeyCode;
use ratatui::layout::Rect;
use std::sync::Arc;
use std::time::{Duration, Instant};

// ---------------------------------------------------------------- helpers

/// Draws at both sizes and compares with the committed snapshots.
fn snap_both(name: &str, mut make: impl FnMut() -> App) {
    for size in [WIDE, NARROW] {
        let mut app = make();
        let terminal = draw(&mut app, size);
        insta::assert_snapshot!(format!("{name}_{}x{}", size.0, size.1), terminal.backend());
    }
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
        snapshot.reminder.counts.since_todo = 0;
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
            asking: keel::agent::Asking::Change,
            detail: "hello.py".into(),
            always: Some("every edit_file call for the rest of the session".into()),
            sandbox: None,
            diff: Some(
                "--- a/hello.py\n+++ b/hello.py\n@@ -1,2 +1,3 @@\n-def greet(name):\n+def greet(name: str) -> str:\n+    \"\"\"Return a greeting for name.\"\"\"\n     return f\"Hello, {name}!\"\n"
                    .into(),
            ),
            agent: None,
            check: None,
        }));
        app_with(snapshot).0
    });
}
