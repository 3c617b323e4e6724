#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The TUI as a new user first meets it: the intro before and after `/clear`, colours that every
//! terminal theme can read, `NO_COLOR`, and the smallest screen.

use keel::agent::{Command, Entry, Snapshot};
use keel::llm::scripted::DemoPlace;
use keel::tui::{App, TuiOptions, render};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Color;
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};

fn new_app(options: TuiOptions) -> (App, UnboundedReceiver<Command>) {
    let (tx, rx) = unbounded_channel();
    (App::new(tx, options), rx)
}

fn draw(app: &mut App, (width, height): (u16, u16)) -> Buffer {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    app.prepare(Rect::new(0, 0, width, height));
    terminal.draw(|frame| render(app, frame)).unwrap();
    terminal.backend().buffer().clone()
}

fn text(buffer: &Buffer) -> String {
    let mut out = String::new();
    for y in 0..buffer.area.height {
        for x in 0..buffer.area.width {
            out.push_str(buffer[(x, y)].symbol());
        }
        out.push('\n');
    }
    out
}

fn demo() -> TuiOptions {
    let place = DemoPlace { folder: "/tmp/keel-demo-abc".into(), temporary: true };
    TuiOptions { demo: Some(place), ..TuiOptions::default() }
}

#[test]
fn the_demo_banner_says_where_and_goes_after_clear() {
    let (mut app, _rx) = new_app(demo());
    let screen = text(&draw(&mut app, (120, 40)));
    assert!(screen.contains("The demo is running"), "{screen}");
    assert!(screen.contains("/tmp/keel-demo-abc"), "the first --demo shows its folder: {screen}");

    let with = |entries: Vec<Entry>| Snapshot {
        transcript: entries.into_iter().collect(),
        ..Snapshot::default()
    };
    app.apply_snapshot(with(vec![Entry::User { text: "go".into() }]));
    // `/clear`: the agent's transcript starts again.
    app.apply_snapshot(with(vec![Entry::Notice { text: "New conversation.".into() }]));
    let screen = text(&draw(&mut app, (120, 40)));
    assert!(!screen.contains("The demo is running"), "{screen}");
    assert!(screen.contains("Welcome to keel"), "{screen}");
    assert!(screen.contains("New conversation."), "{screen}");
}

#[test]
fn the_no_key_intro_shows_no_raw_backticks() {
    let help = "No model is configured: set `OPENAI_API_KEY` (any placeholder works).";
    let (mut app, _rx) =
        new_app(TuiOptions { first_run_help: Some(help.into()), ..TuiOptions::default() });
    let screen = text(&draw(&mut app, (120, 40)));
    assert!(screen.contains("set OPENAI_API_KEY (any placeholder works)"), "{screen}");
    assert!(!screen.contains('`'), "{screen}");
}

/// Colours some themes draw in (or next to) their background: Solarized Dark's bright black is
/// its background, Solarized Light's grey nearly its background; black and white vanish on one
/// side or the other.
const UNREADABLE_ALONE: [Color; 4] = [Color::DarkGray, Color::Gray, Color::Black, Color::White];

fn busy_options() -> TuiOptions {
    TuiOptions {
        first_run_help: Some("No model is configured: set `ANTHROPIC_API_KEY`.".into()),
        instructions_note: Some("keel read AGENTS.md".into()),
        ..demo()
    }
}

fn busy_snapshot() -> Snapshot {
    let transcript = [
        Entry::User { text: "Add a table".into() },
        Entry::Thinking { text: "Let me think\nabout it".into(), redacted: false },
        Entry::Assistant { text: "| a | b |\n|---|---|\n| 1 | 2 |\n\n> quoted `code`".into() },
        Entry::ToolCall { id: "1".into(), name: "bash".into(), summary: "ls".into() },
        Entry::Reminder { text: "<reminder>Update your todos.</reminder>".into() },
        Entry::Notice { text: "Interrupted.".into() },
        Entry::Error { text: "It broke.".into() },
    ];
    Snapshot {
        transcript: transcript.into_iter().collect(),
        queued: ["later".to_owned()].into_iter().collect(),
        ..Snapshot::default()
    }
}

#[test]
fn secondary_text_is_readable_on_dark_and_light_themes() {
    let (mut app, _rx) = new_app(busy_options());
    app.apply_snapshot(busy_snapshot());
    let buffer = draw(&mut app, (120, 40));
    for (index, cell) in buffer.content.iter().enumerate() {
        if cell.symbol().trim().is_empty() || cell.bg != Color::Reset {
            continue;
        }
        assert!(
            !UNREADABLE_ALONE.contains(&cell.fg),
            "{:?} drawn in {:?} on the theme's own background, at cell {index}:\n{}",
            cell.symbol(),
            cell.fg,
            text(&buffer)
        );
    }
}

#[test]
fn no_color_draws_no_colour_but_keeps_the_text() {
    let (mut plain, _rx) = new_app(busy_options());
    plain.apply_snapshot(busy_snapshot());
    let coloured = draw(&mut plain, (120, 40));
    assert!(coloured.content.iter().any(|cell| cell.fg != Color::Reset), "colours by default");

    let (mut app, _rx) = new_app(TuiOptions { no_color: true, ..busy_options() });
    app.apply_snapshot(busy_snapshot());
    let buffer = draw(&mut app, (120, 40));
    for cell in &buffer.content {
        assert_eq!((cell.fg, cell.bg), (Color::Reset, Color::Reset), "{:?}", cell.symbol());
    }
    assert_eq!(text(&buffer), text(&coloured));
}

#[test]
fn no_color_is_any_non_empty_value() {
    use std::ffi::OsStr;
    assert!(keel::tui::no_color_requested(Some(OsStr::new("1"))));
    assert!(keel::tui::no_color_requested(Some(OsStr::new("false"))));
    assert!(!keel::tui::no_color_requested(Some(OsStr::new(""))));
    assert!(!keel::tui::no_color_requested(None));
}
