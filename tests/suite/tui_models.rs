//! What today's models add to the screen. Their reasoning in the conversation: dimmed and
//! folded to one line, whole (still dimmed) after Ctrl+O, folded again after a second Ctrl+O;
//! the share of the prompt read from the provider's cache in the status bar; and the note that
//! the project's AGENTS.md was read. Snapshots at a wide and a narrow size; the styles, which
//! snapshots do not show, are checked cell by cell.

use crate::support::tui::draw;
use keel::agent::{Command, Entry, Snapshot};
use keel::message::Usage;
use keel::tui::{App, TuiOptions};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::style::{Color, Modifier};
use std::sync::Arc;
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};

const WIDE: (u16, u16) = (120, 40);
const NARROW: (u16, u16) = (60, 20);

const THOUGHT: &str = "The user wants type hints. I should read hello.py first.\n\
greet takes a name and returns a string.\n\
So the signature becomes greet(name: str) -> str.";

fn app_with_thinking() -> (App, UnboundedReceiver<Command>) {
    let (tx, rx) = unbounded_channel();
    let mut app = App::new(tx, TuiOptions::default());
    let transcript = [
        Entry::User { text: "Add type hints to hello.py".into() },
        Entry::Thinking { text: THOUGHT.into(), redacted: false },
        Entry::Assistant { text: "I'll read the file first.".into() },
        Entry::Thinking { text: String::new(), redacted: true },
        Entry::Assistant { text: "Done: `greet` has its hints.".into() },
    ];
    app.apply_snapshot(Snapshot {
        seq: 1,
        provider: Arc::from("anthropic"),
        model: Arc::from("claude-sonnet-4-5"),
        transcript: transcript.into_iter().collect(),
        ..Snapshot::default()
    });
    (app, rx)
}

fn toggle(app: &mut App) {
    app.handle_key(KeyEvent::new(KeyCode::Char('o'), KeyModifiers::CONTROL));
}

/// The rows of the screen as text.
fn rows(terminal: &Terminal<TestBackend>) -> Vec<String> {
    let buffer = terminal.backend().buffer();
    (0..buffer.area.height)
        .map(|y| (0..buffer.area.width).map(|x| buffer[(x, y)].symbol()).collect())
        .collect()
}

/// Every cell of `needle` on screen is dimmed and italic (in the terminal's own foreground, which
/// every theme can read).
fn assert_dimmed(terminal: &Terminal<TestBackend>, needle: &str) {
    let buffer = terminal.backend().buffer();
    let rows = rows(terminal);
    let y = rows.iter().position(|row| row.contains(needle)).expect("the text is on screen");
    // Every character on screen here is one cell wide.
    let start = rows[y][..rows[y].find(needle).unwrap()].chars().count();
    for column in start..start + needle.chars().count() {
        let cell = &buffer[(u16::try_from(column).unwrap(), u16::try_from(y).unwrap())];
        assert!(cell.modifier.contains(Modifier::DIM), "{needle:?} is dimmed");
        assert_eq!(cell.fg, Color::Reset, "{needle:?} keeps the theme's foreground");
        assert!(cell.modifier.contains(Modifier::ITALIC), "{needle:?} is italic");
    }
}

#[test]
fn thinking_is_folded_to_one_dimmed_line() {
    for size in [WIDE, NARROW] {
        let (mut app, _rx) = app_with_thinking();
        let terminal = draw(&mut app, size);
        insta::assert_snapshot!(
            format!("thinking_folded_{}x{}", size.0, size.1),
            terminal.backend()
        );
        let screen = rows(&terminal).join("\n");
        assert!(screen.contains("∴ thinking: The user wants"), "{screen}");
        assert!(!screen.contains("So the signature"), "folded: only the first line shows");
        assert!(screen.contains("(redacted by the provider)"), "{screen}");
        assert_dimmed(&terminal, "∴ thinking: The user");
    }
}

#[test]
fn ctrl_o_unfolds_the_thinking_and_folds_it_again() {
    for size in [WIDE, NARROW] {
        let (mut app, _rx) = app_with_thinking();
        toggle(&mut app);
        let terminal = draw(&mut app, size);
        insta::assert_snapshot!(
            format!("thinking_unfolded_{}x{}", size.0, size.1),
            terminal.backend()
        );
        let screen = rows(&terminal).join("\n");
        assert!(screen.contains("So the signature becomes"), "{screen}");
        assert_dimmed(&terminal, "So the signature");
        toggle(&mut app);
        let screen = rows(&draw(&mut app, size)).join("\n");
        assert!(!screen.contains("So the signature"), "folded again: {screen}");
    }
}

#[test]
fn the_status_bar_shows_the_cache_share_where_the_provider_reports_it() {
    let bar = |usage: Usage| {
        let (tx, _rx) = unbounded_channel();
        let mut app = App::new(tx, TuiOptions::default());
        app.apply_snapshot(Snapshot { seq: 1, usage, ..Snapshot::default() });
        rows(&draw(&mut app, WIDE)).pop().unwrap()
    };
    let cached = Usage {
        input_tokens: 100_000,
        output_tokens: 2_000,
        cache_read_tokens: 93_400,
        cache_write_tokens: 5_000,
    };
    let line = bar(cached);
    assert!(line.contains("↑100.0k ↓2.0k cache 93%"), "{line}");
    let line = bar(Usage { input_tokens: 100_000, output_tokens: 2_000, ..Usage::default() });
    assert!(!line.contains("cache"), "no cache reported, none shown: {line}");
    let line = bar(Usage { input_tokens: 9_000, cache_write_tokens: 9_000, ..Usage::default() });
    assert!(line.contains("cache 0%"), "written, not read yet: {line}");
}

#[test]
fn the_tui_says_once_that_the_projects_instructions_were_read() {
    let (tx, _rx) = unbounded_channel();
    let note = "Read AGENTS.md (120 bytes) into the system prompt.";
    let options = TuiOptions { instructions_note: Some(note.into()), ..TuiOptions::default() };
    let mut app = App::new(tx, options);
    let screen = rows(&draw(&mut app, WIDE)).join("\n");
    assert_eq!(screen.matches(note).count(), 1, "{screen}");
}
