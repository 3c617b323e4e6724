//! Child agents on screen: the board row of an item a child does shows it live (what it runs,
//! its rounds and tokens), the status bar counts the children running and adds their cost, the
//! approval box names the child above the call, `/agents` (or `o` on the board) opens a child's
//! conversation drawn like the main one, and Ctrl+T there shows the child's last request.

use crate::support::screens::*;
use crate::support::tui::{app_with, ctrl, draw, key, press, screen_text, type_text};
use keel::agent::{Activity, ApprovalRequest, ChildAgent, ChildStatus, Snapshot};
use keel::message::Usage;
use keel::tools::task::Kind;
use keel::tui::OverlayKind;
use ratatui::crossterm::event::KeyCode;
use std::sync::Arc;

/// The child doing item 2 of the mid-task board: its own conversation as it last showed it.
fn child_at_work(status: ChildStatus) -> ChildAgent {
    let view = Snapshot {
        transcript: transcript(vec![
            user(
                "<parent-request>…</parent-request>\n\nAdd type hints to greet() in hello.py; report the signature.",
            ),
            tool_call("c1", "read_file", "hello.py"),
            assistant("`greet` takes a name. Checking the tests next."),
            tool_call("c2", "bash", "python -m pytest -q"),
        ]),
        system_prompt: Arc::from("You are a child agent of keel (the child's own system prompt)."),
        ..Snapshot::default()
    };
    ChildAgent {
        id: Arc::from("a1"),
        call_id: Arc::from("toolu_9"),
        label: Arc::from("Type hints"),
        item: Some(Arc::from("2")),
        kind: Kind::General,
        status,
        tool: (status == ChildStatus::Running).then(|| "bash python -m pytest -q".to_owned()),
        rounds: 3,
        usage: Usage { input_tokens: 48_200, output_tokens: 1_100, ..Usage::default() },
        view: Some(Box::new(view)),
    }
}

fn explorer() -> ChildAgent {
    ChildAgent {
        id: Arc::from("a2"),
        label: Arc::from("Find the config loader"),
        item: None,
        kind: Kind::Explore,
        view: None,
        ..child_at_work(ChildStatus::Done)
    }
}

/// The mid-task screen while a child does item 2.
fn delegating() -> Snapshot {
    let mut snapshot = mid_task_snapshot();
    snapshot.children =
        [Arc::new(explorer()), Arc::new(child_at_work(ChildStatus::Running))].into_iter().collect();
    snapshot.activity = Activity::RunningTool { name: "task".into() };
    snapshot
}

#[test]
fn snapshot_a_child_at_work_on_the_board_and_in_the_status_bar() {
    for size in [WIDE, NARROW] {
        let (mut app, _rx) = app_with(delegating());
        let terminal = draw(&mut app, size);
        insta::assert_snapshot!(format!("child_at_work_{}x{}", size.0, size.1), terminal.backend());
    }
    let (mut app, _rx) = app_with(delegating());
    let text = screen_text(&draw(&mut app, WIDE));
    assert!(text.contains("#2 Add type hints to greet()"), "{text}");
    for part in ["⠋ a1 · bash", "python -m pytest -q · 3 rounds ·", "48.2k tok"] {
        assert!(text.contains(part), "{part}: {text}");
    }
    assert!(text.contains("1 agent"), "{text}");
    // The session's cost is the parent's and its two children's: $0.037 + $0.031 + ($0.145 +
    // $0.017) × 2, at $3 in and $15 out a million.
    assert!(text.contains("$0.39"), "{text}");
}

#[test]
fn snapshot_the_approval_box_names_the_child_above_the_call() {
    let mut snapshot = delegating();
    snapshot.activity = Activity::AwaitingApproval;
    snapshot.pending_approval = Some(Arc::new(ApprovalRequest {
        id: "a1:toolu_3".into(),
        tool: "bash".into(),
        asking: keel::agent::Asking::Command,
        detail: "python -m pytest -q".into(),
        diff: None,
        always: Some("`python -m` commands that only read".into()),
        sandbox: Some("sandbox: workspace · no network".into()),
        agent: Some("child a1 · Type hints · item #2".into()),
        check: None,
    }));
    for size in [WIDE, NARROW] {
        let (mut app, _rx) = app_with(snapshot.clone());
        let terminal = draw(&mut app, size);
        insta::assert_snapshot!(format!("child_asks_{}x{}", size.0, size.1), terminal.backend());
    }
}

#[test]
fn snapshot_agents_shows_a_childs_conversation() {
    for size in [WIDE, NARROW] {
        let (mut app, _rx) = app_with(delegating());
        type_text(&mut app, "/agents");
        press(&mut app, KeyCode::Enter);
        assert_eq!(app.overlay(), Some(OverlayKind::Agents));
        assert_eq!(app.shown_child(), Some("a1"), "the child running");
        let terminal = draw(&mut app, size);
        insta::assert_snapshot!(format!("agents_{}x{}", size.0, size.1), terminal.backend());
    }
}

#[test]
fn o_on_a_board_item_opens_its_childs_conversation_and_tab_steps_through_them() {
    let (mut app, _rx) = app_with(delegating());
    type_text(&mut app, "/todos");
    press(&mut app, KeyCode::Enter);
    assert!(app.board_focused());
    press(&mut app, KeyCode::Char('o'));
    assert_eq!(app.overlay(), Some(OverlayKind::Agents));
    assert_eq!(app.shown_child(), Some("a1"), "item 2's child");
    let text = screen_text(&draw(&mut app, WIDE));
    assert!(text.contains("Checking the tests next."), "drawn like the conversation: {text}");
    assert!(text.contains("child a1 · Type hints · item #2 — running"), "{text}");
    press(&mut app, KeyCode::Tab);
    assert_eq!(app.shown_child(), Some("a2"));
    let text = screen_text(&draw(&mut app, WIDE));
    assert!(text.contains("child a2 · Find the config loader — done"), "{text}");
    press(&mut app, KeyCode::Esc);
    assert_eq!(app.overlay(), None);
}

#[test]
fn the_inspector_shows_a_childs_last_request() {
    let (mut app, _rx) = app_with(delegating());
    type_text(&mut app, "/agents");
    press(&mut app, KeyCode::Enter);
    app.handle_key(ctrl('t'));
    assert_eq!(app.overlay(), Some(OverlayKind::History));
    let text = screen_text(&draw(&mut app, WIDE));
    assert!(text.contains("the child's own system prompt"), "{text}");
    // A newer snapshot keeps the inspector on the child.
    app.apply_snapshot(delegating());
    let text = screen_text(&draw(&mut app, WIDE));
    assert!(text.contains("the child's own system prompt"), "{text}");
    app.handle_key(key(KeyCode::Esc));
    assert_eq!(app.overlay(), Some(OverlayKind::Agents), "back to the child");
}

#[test]
fn agents_with_no_child_says_so() {
    let (mut app, _rx) = app_with(mid_task_snapshot());
    type_text(&mut app, "/agents");
    press(&mut app, KeyCode::Enter);
    let text = screen_text(&draw(&mut app, WIDE));
    assert!(text.contains("No child agents yet"), "{text}");
}
