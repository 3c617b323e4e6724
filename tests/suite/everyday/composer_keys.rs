//! The composer's everyday keys: Home and End move within a prompt being written (and scroll
//! the conversation only while it is empty); the slash menu lists the commands with their help
//! and filters as one types, Tab or Enter completes; `@` offers the workspace's files; and with
//! a plan waiting, a short "go ahead" is taken as /approve once one more key confirms it.

use crate::support::screens::{base_snapshot, finished_board};
use crate::support::tui::{ctrl, draw, key, new_app, screen_text, sent, type_text};
use keel::agent::{Command, Snapshot};
use keel::tui::TuiOptions;
use ratatui::crossterm::event::KeyCode;

#[test]
fn home_and_end_move_within_the_prompt_when_it_holds_text() {
    let (mut app, _rx) = new_app(TuiOptions::default());
    app.apply_snapshot(base_snapshot());
    type_text(&mut app, "world");
    app.handle_key(key(KeyCode::Home));
    type_text(&mut app, "hello ");
    app.handle_key(key(KeyCode::End));
    type_text(&mut app, "!");
    assert_eq!(app.composer_text(), "hello world!");
    app.handle_key(ctrl('a'));
    type_text(&mut app, "> ");
    app.handle_key(ctrl('e'));
    type_text(&mut app, "?");
    assert_eq!(app.composer_text(), "> hello world!?");
    assert!(app.is_following(), "the conversation did not move");
}

#[test]
fn home_on_an_empty_prompt_still_scrolls_the_conversation() {
    let (mut app, _rx) = new_app(TuiOptions::default());
    let long: imbl::Vector<keel::agent::Entry> =
        (0..80).map(|n| keel::agent::Entry::Assistant { text: format!("line {n}") }).collect();
    app.apply_snapshot(Snapshot { transcript: long, ..base_snapshot() });
    draw(&mut app, (80, 24));
    app.handle_key(key(KeyCode::Home));
    draw(&mut app, (80, 24));
    assert!(!app.is_following(), "Home jumped to the top");
    app.handle_key(key(KeyCode::End));
    assert!(app.is_following());
}

#[test]
fn a_slash_opens_the_menu_that_typing_filters_and_tab_completes() {
    let (mut app, mut rx) = new_app(TuiOptions::default());
    app.apply_snapshot(base_snapshot());
    type_text(&mut app, "/");
    let menu = screen_text(&draw(&mut app, (100, 30)));
    insta::assert_snapshot!("slash_menu_100x30", menu);
    for line in ["/clear", "/diff", "/model", "/approval", "approve the plan on the board"] {
        assert!(menu.contains(line), "{line}:\n{menu}");
    }
    type_text(&mut app, "mo");
    let filtered = screen_text(&draw(&mut app, (100, 30)));
    assert!(filtered.contains("/model") && !filtered.contains("/clear"), "{filtered}");
    app.handle_key(key(KeyCode::Tab));
    assert_eq!(app.composer_text(), "/model ");
    type_text(&mut app, "gpt-4o");
    app.handle_key(key(KeyCode::Enter));
    assert_eq!(sent(&mut rx), [Command::SwitchModel("gpt-4o".into())]);

    // ↓ chooses, Enter completes a name typed in part, and runs one typed whole.
    type_text(&mut app, "/c");
    app.handle_key(key(KeyCode::Down));
    app.handle_key(key(KeyCode::Enter));
    assert_eq!(app.composer_text(), "/compact ", "the second of /clear and /compact");
    assert!(sent(&mut rx).is_empty(), "completing sends nothing");
    app.handle_key(key(KeyCode::Enter));
    assert_eq!(sent(&mut rx), [Command::Compact]);
    type_text(&mut app, "/undo");
    app.handle_key(key(KeyCode::Enter));
    assert_eq!(sent(&mut rx), [Command::Undo]);

    // Esc closes it without interrupting anything.
    type_text(&mut app, "/");
    app.handle_key(key(KeyCode::Esc));
    let closed = screen_text(&draw(&mut app, (100, 30)));
    assert!(!closed.contains("Commands ·"), "{closed}");
    assert!(sent(&mut rx).is_empty());
}

#[test]
fn help_is_written_from_the_same_table_as_the_menu() {
    let (mut app, _rx) = new_app(TuiOptions::default());
    app.apply_snapshot(base_snapshot());
    type_text(&mut app, "/help");
    app.handle_key(key(KeyCode::Enter));
    let help = screen_text(&draw(&mut app, (120, 200)));
    for line in ["/diff", "/model", "switch model for the next request on"] {
        assert!(help.contains(line), "{line}:\n{help}");
    }
}

#[test]
fn an_at_sign_completes_the_workspaces_files() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/app.py"), "").unwrap();
    std::fs::write(dir.path().join("README.md"), "").unwrap();
    std::fs::write(dir.path().join(".gitignore"), "secret.txt\n").unwrap();
    std::fs::write(dir.path().join("secret.txt"), "").unwrap();
    let options = TuiOptions { workspace: Some(dir.path().to_owned()), ..TuiOptions::default() };
    let (mut app, mut rx) = new_app(options);
    app.apply_snapshot(base_snapshot());
    type_text(&mut app, "fix @");
    let menu = screen_text(&draw(&mut app, (80, 24)));
    assert!(menu.contains("@src/app.py") && menu.contains("@README.md"), "{menu}");
    assert!(!menu.contains("secret.txt"), "what .gitignore ignores is not offered: {menu}");
    type_text(&mut app, "sapp");
    app.handle_key(key(KeyCode::Enter));
    assert_eq!(app.composer_text(), "fix @src/app.py ", "Enter completes, sends nothing");
    assert!(sent(&mut rx).is_empty());
    type_text(&mut app, "please");
    app.handle_key(key(KeyCode::Enter));
    assert_eq!(sent(&mut rx), [Command::Submit("fix @src/app.py please".into())]);
}

fn plan_waiting() -> Snapshot {
    Snapshot { plan_mode: true, plan_ready: true, board: finished_board(), ..base_snapshot() }
}

#[test]
fn with_a_plan_waiting_go_ahead_approves_it_after_one_key() {
    let (mut app, mut rx) = new_app(TuiOptions::default());
    app.apply_snapshot(plan_waiting());
    type_text(&mut app, "Go ahead!");
    app.handle_key(key(KeyCode::Enter));
    assert!(sent(&mut rx).is_empty(), "not yet: the border asks first");
    let asking = screen_text(&draw(&mut app, (100, 30)));
    assert!(asking.contains("approve the plan and start? y yes · n send as a message"), "{asking}");
    type_text(&mut app, "y");
    assert_eq!(sent(&mut rx), [Command::ApprovePlan]);
    assert_eq!(app.composer_text(), "");
}

#[test]
fn n_sends_the_words_as_a_message_and_esc_keeps_them() {
    let (mut app, mut rx) = new_app(TuiOptions::default());
    app.apply_snapshot(plan_waiting());
    type_text(&mut app, "yes");
    app.handle_key(key(KeyCode::Enter));
    app.handle_key(key(KeyCode::Esc));
    assert!(sent(&mut rx).is_empty(), "Esc neither approves nor interrupts");
    assert_eq!(app.composer_text(), "yes", "the words stay to be edited");
    app.handle_key(key(KeyCode::Enter));
    type_text(&mut app, "n");
    assert_eq!(sent(&mut rx), [Command::Submit("yes".into())]);

    // Without a plan waiting, the same words are a prompt like any other.
    let (mut app, mut rx) = new_app(TuiOptions::default());
    app.apply_snapshot(Snapshot { plan_mode: true, ..base_snapshot() });
    type_text(&mut app, "go ahead");
    app.handle_key(key(KeyCode::Enter));
    assert_eq!(sent(&mut rx), [Command::Submit("go ahead".into())]);
}
