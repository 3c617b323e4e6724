//! The TUI's keys, driven through `App` without a terminal: the composer, the overlays, the
//! approval box, slash commands, pastes, and the commands `App` sends, read from its channel.

use crate::support::screens::*;
use crate::support::tui::{
    app, app_with, ctrl, draw, key, new_app, press, screen_text, sent, type_text,
};
use keel::agent::{Activity, ApprovalRequest, Command, Decision, Snapshot};
use keel::tui::type_ahead::GRACE_PERIOD;
use keel::tui::view::{Motion, inspector};
use keel::tui::{App, OverlayKind, TuiOptions, UiEvent};
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};

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
    overlay.act(inspector::Action::Scroll(Motion::Top));
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
        asking: keel::agent::Asking::Command,
        detail: "rm -rf build".into(),
        diff: None,
        always: Some("`rm` commands".into()),
        sandbox: None,
        agent: None,
        check: None,
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
    let place = keel::llm::scripted::DemoPlace {
        folder: "/tmp/keel-demo-x".into(),
        temporary: true,
        headless: false,
    };
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
