//! The TUI as a new user first meets it: the intro before and after `/clear`, colours that every
//! terminal theme can read, `NO_COLOR`, and the smallest screen.

use crate::support::tui::{buffer_text as text, new_app};
use keel::agent::{Entry, Snapshot};
use keel::llm::scripted::DemoPlace;
use keel::tui::{App, TuiOptions, render};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Color;

fn draw(app: &mut App, (width, height): (u16, u16)) -> Buffer {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    app.prepare(Rect::new(0, 0, width, height));
    terminal.draw(|frame| render(app, frame)).unwrap();
    terminal.backend().buffer().clone()
}

fn demo() -> TuiOptions {
    let place = DemoPlace { folder: "/tmp/keel-demo-abc".into(), temporary: true, headless: false };
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

fn with_transcript(entries: Vec<Entry>) -> Snapshot {
    Snapshot { transcript: entries.into_iter().collect(), ..Snapshot::default() }
}

#[test]
fn a_2000_line_paste_stays_folded_in_the_conversation() {
    let paste = "a line of a big paste, forty bytes long\n".repeat(2_000);
    let (mut app, _rx) = new_app(TuiOptions::default());
    app.apply_snapshot(with_transcript(vec![Entry::User { text: paste }]));
    let screen = text(&draw(&mut app, (80, 24)));
    assert!(screen.contains("… 1,994 more lines, 78.1 KB in all (all of it was sent)"), "{screen}");
    assert_eq!(screen.matches("a line of a big paste").count(), 6, "{screen}");
    insta::assert_snapshot!("big_paste_folded_80x24", screen);
}

#[test]
fn a_prompt_of_a_few_lines_is_shown_whole() {
    let prompt = (1..=20).map(|n| format!("line {n}")).collect::<Vec<_>>().join("\n");
    let (mut app, _rx) = new_app(TuiOptions::default());
    app.apply_snapshot(with_transcript(vec![Entry::User { text: prompt }]));
    let screen = text(&draw(&mut app, (120, 40)));
    assert!(screen.contains("line 20"), "{screen}");
    assert!(!screen.contains("more lines"), "{screen}");
}

#[test]
fn markdown_tables_are_drawn_as_tables() {
    let answer = "Three files changed:\n\n| file | lines | why |\n| :--- | ---: | :---: |\n\
                  | `src/lib.rs` | 12 | the fix |\n| README.md | 3 | docs |\n\nAll tests pass.";
    let (mut app, _rx) = new_app(TuiOptions::default());
    app.apply_snapshot(with_transcript(vec![
        Entry::User { text: "What changed?".into() },
        Entry::Assistant { text: answer.into() },
    ]));
    let screen = text(&draw(&mut app, (80, 24)));
    assert!(screen.contains("file       │ lines │   why"), "{screen}");
    assert!(screen.contains("src/lib.rs │    12 │ the fix"), "{screen}");
    assert!(!screen.contains("| file |"), "no raw pipes: {screen}");
    insta::assert_snapshot!("markdown_table_80x24", screen);
}

/// The rows where each pane's top border is (`╭ Conversation`, `╭ Tools`, …).
fn pane_tops(screen: &str) -> Vec<(usize, String)> {
    screen
        .lines()
        .enumerate()
        .filter_map(|(row, line)| {
            let title = line.strip_prefix('╭')?.trim_start_matches(['─', ' ']);
            let title: String = title.chars().take_while(|c| c.is_alphabetic()).collect();
            Some((row, title))
        })
        .collect()
}

#[test]
fn at_80x24_the_layout_does_not_jump_as_the_tool_pane_comes_and_goes() {
    let (mut app, _rx) = new_app(TuiOptions::default());
    let before = text(&draw(&mut app, (80, 24)));
    let run = keel::agent::ToolRun {
        id: "1".into(),
        name: "bash".into(),
        summary: "ls".into(),
        status: keel::agent::ToolStatus::Succeeded,
        exit_code: Some(0),
        started: std::time::Instant::now(),
        duration: Some(std::time::Duration::from_millis(20)),
        output: "notes.txt".into(),
    };
    app.apply_snapshot(Snapshot {
        tools: [std::sync::Arc::new(run)].into_iter().collect(),
        ..with_transcript(vec![Entry::ToolCall {
            id: "1".into(),
            name: "bash".into(),
            summary: "ls".into(),
        }])
    });
    let with_tool = text(&draw(&mut app, (80, 24)));
    // `/clear` empties the tool log again.
    app.apply_snapshot(with_transcript(vec![Entry::Notice { text: "New conversation.".into() }]));
    let cleared = text(&draw(&mut app, (80, 24)));
    assert!(with_tool.contains("notes.txt"), "{with_tool}");
    assert_eq!(pane_tops(&before), pane_tops(&with_tool), "{before}\n{with_tool}");
    assert_eq!(pane_tops(&cleared), pane_tops(&with_tool), "{cleared}\n{with_tool}");
    insta::assert_snapshot!("empty_80x24", before);
}

#[test]
fn at_40x12_the_inspector_says_how_to_close_it_and_cuts_no_word() {
    let history = [
        keel::message::Message::user_text("Read notes.txt and tell me what it says."),
        keel::message::Message::assistant(vec![keel::message::ContentBlock::Text {
            text: "It says hello.".into(),
        }]),
    ];
    let snapshot = Snapshot {
        history: history.into_iter().collect(),
        system_prompt: "You are keel.".into(),
        ..Snapshot::default()
    };
    let (mut app, _rx) = new_app(TuiOptions::default());
    app.apply_snapshot(snapshot);
    app.handle_key(ratatui::crossterm::event::KeyEvent::new(
        ratatui::crossterm::event::KeyCode::Char('t'),
        ratatui::crossterm::event::KeyModifiers::CONTROL,
    ));
    let screen = text(&draw(&mut app, (40, 12)));
    let lines: Vec<&str> = screen.lines().collect();
    assert!(lines[0].starts_with("╭ Request · "), "{screen}");
    assert!(lines[10].contains("Esc"), "the border says how to close it: {screen}");
    assert!(lines[11].contains("Esc"), "and so does the status bar: {screen}");
    // Every word of the title and the hints is whole: each is one known piece or nothing.
    for piece in ["preview, not sent yet", "Anthropic Messages", "2 messages"] {
        let start = piece.split(' ').next().unwrap();
        if lines[0].contains(start) {
            assert!(lines[0].contains(piece), "{piece:?} cut: {}", lines[0]);
        }
    }
    insta::assert_snapshot!("inspector_40x12", screen);
}

#[test]
fn at_40x12_no_title_or_placeholder_is_cut_mid_word() {
    let (mut app, _rx) = new_app(TuiOptions::default());
    app.apply_snapshot(Snapshot {
        activity: keel::agent::Activity::Thinking,
        queued: ["later".to_owned()].into_iter().collect(),
        ..busy_snapshot()
    });
    let screen = text(&draw(&mut app, (40, 12)));
    assert!(screen.contains("Ask keel to do something…  "), "{screen}");
    assert!(!screen.contains("(? for"), "the placeholder's hint left out whole: {screen}");
    assert!(screen.contains("╭ Prompt · queued until keel finishes ─╮"), "{screen}");
    insta::assert_snapshot!("busy_40x12", screen);
    let narrower = text(&draw(&mut app, (36, 12)));
    assert!(narrower.contains("╭ Prompt ───"), "{narrower}");
    assert!(!narrower.contains("· queued until"), "the note left out whole: {narrower}");
    let wide = text(&draw(&mut app, (60, 20)));
    assert!(wide.contains("Ask keel to do something…  (? for help)"), "{wide}");
}
