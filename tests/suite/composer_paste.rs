//! The composer's big-paste tokens are edited only whole, and its editing keys are readline's
//! (Ctrl+U kills to the start of the line, Ctrl+Z undoes), driven through `App` as keys arrive.

use keel::agent::Command;
use keel::tui::{App, TuiOptions, UiEvent};
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};

fn app() -> (App, UnboundedReceiver<Command>) {
    let (tx, rx) = unbounded_channel();
    (App::new(tx, TuiOptions::default()), rx)
}

fn press(app: &mut App, code: KeyCode) {
    app.handle_key(KeyEvent::new(code, KeyModifiers::NONE));
}

fn ctrl(app: &mut App, c: char) {
    app.handle_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL));
}

fn type_text(app: &mut App, text: &str) {
    for c in text.chars() {
        press(app, KeyCode::Char(c));
    }
}

/// 2,000 lines, 79 KB: held aside as a token.
fn big_paste() -> String {
    "a line of a big paste, forty bytes long\n".repeat(2_000)
}

#[test]
fn backspace_after_the_token_removes_it_and_the_paste_whole() {
    let (mut app, mut rx) = app();
    type_text(&mut app, "fix ");
    app.handle_event(UiEvent::Paste(big_paste()));
    type_text(&mut app, " now");
    for _ in 0..4 {
        press(&mut app, KeyCode::Left);
    }
    press(&mut app, KeyCode::Backspace);
    assert_eq!(app.composer_text(), "fix  now");
    press(&mut app, KeyCode::Enter);
    assert_eq!(rx.try_recv().unwrap(), Command::Submit("fix  now".into()));
}

#[test]
fn delete_before_the_token_removes_it_whole() {
    let (mut app, _rx) = app();
    app.handle_event(UiEvent::Paste(big_paste()));
    ctrl(&mut app, 'a');
    press(&mut app, KeyCode::Delete);
    assert!(app.composer_text().is_empty(), "the token went whole");
}

#[test]
fn word_and_line_deletes_across_a_token_take_it_whole_and_undo_brings_it_back() {
    let (mut app, _rx) = app();
    let paste = big_paste();
    type_text(&mut app, "see ");
    app.handle_event(UiEvent::Paste(paste.clone()));
    ctrl(&mut app, 'w');
    assert_eq!(app.composer_text(), "see ");
    ctrl(&mut app, 'z');
    assert!(app.composer_text() == format!("see {paste}"), "undo brings the whole paste back");
    // Inside the token, Ctrl+U (kill to the line's start) takes the token with it.
    for _ in 0..5 {
        press(&mut app, KeyCode::Left);
    }
    ctrl(&mut app, 'u');
    assert_eq!(app.composer_text(), "");
}

#[test]
fn text_typed_inside_a_token_lands_after_it_and_the_paste_is_sent_whole() {
    let (mut app, mut rx) = app();
    let paste = big_paste();
    app.handle_event(UiEvent::Paste(paste.clone()));
    for _ in 0..6 {
        press(&mut app, KeyCode::Left);
    }
    type_text(&mut app, "!");
    assert!(app.composer_text() == format!("{paste}!"), "the paste stays whole");
    press(&mut app, KeyCode::Enter);
    let Command::Submit(sent) = rx.try_recv().unwrap() else { panic!("not a prompt") };
    assert!(sent == format!("{paste}!"), "the model gets the paste whole");
}

#[test]
fn ctrl_u_kills_to_the_start_of_the_line_and_ctrl_z_undoes() {
    let (mut app, _rx) = app();
    type_text(&mut app, "first line");
    app.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::SHIFT));
    type_text(&mut app, "second line");
    for _ in 0.."line".len() {
        press(&mut app, KeyCode::Left);
    }
    ctrl(&mut app, 'u');
    assert_eq!(app.composer_text(), "first line\nline");
    ctrl(&mut app, 'z');
    assert_eq!(app.composer_text(), "first line\nsecond line");
}
