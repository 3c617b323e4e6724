//! The output pager (Ctrl+G): the whole output keel kept of a tool call — here `seq 1 50000`,
//! which the tool pane shows only the tail of — laid out only where it is looked at, with search,
//! and `[` / `]` to the other calls. The tool pane counts a running call's seconds.

use crate::support::tui;
use keel::agent::{Command, Snapshot, ToolRun, ToolStatus};
use keel::tui::{App, OverlayKind, TuiOptions};
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc::UnboundedReceiver;

const LINES: usize = 50_000;
const SCREEN: (u16, u16) = (80, 24);

fn run(id: &str, summary: &str, status: ToolStatus, output: String) -> Arc<ToolRun> {
    let finished = status != ToolStatus::Running;
    Arc::new(ToolRun {
        id: id.into(),
        name: "bash".into(),
        summary: summary.into(),
        status,
        exit_code: finished.then_some(0),
        started: Instant::now(),
        duration: finished.then_some(Duration::from_millis(310)),
        output: output.into(),
    })
}

fn seq(last: usize) -> String {
    (1..=last).map(|n| format!("{n}\n")).collect()
}

fn app_with(tools: Vec<Arc<ToolRun>>) -> (App, UnboundedReceiver<Command>) {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let mut app = App::new(tx, TuiOptions::default());
    app.apply_snapshot(Snapshot { tools: tools.into_iter().collect(), ..Snapshot::default() });
    (app, rx)
}

fn press(app: &mut App, code: KeyCode) {
    app.handle_key(KeyEvent::new(code, KeyModifiers::NONE));
}

fn type_text(app: &mut App, text: &str) {
    text.chars().for_each(|c| press(app, KeyCode::Char(c)));
}

fn draw(app: &mut App) -> String {
    draw_at(app, SCREEN)
}

fn draw_at(app: &mut App, size: (u16, u16)) -> String {
    tui::screen_text(&tui::draw(app, size))
}

#[test]
fn the_pager_shows_all_of_a_50000_line_output_and_searches_it() {
    let (mut app, _rx) = app_with(vec![
        run("call_1", "ls", ToolStatus::Succeeded, "README.md\nsrc\n".into()),
        run("call_2", "seq 1 50000", ToolStatus::Succeeded, seq(LINES)),
    ]);
    let pane = draw(&mut app);
    assert!(!pane.contains("│1 "), "the pane shows only the tail:\n{pane}");

    app.handle_key(KeyEvent::new(KeyCode::Char('g'), KeyModifiers::CONTROL));
    assert_eq!(app.overlay(), Some(OverlayKind::Output));
    let top = draw(&mut app);
    insta::assert_snapshot!("pager_seq_top_80x24", top);
    let pager = app.pager().unwrap();
    assert_eq!(pager.line_count(), LINES);
    assert!(pager.laid_out() < 100, "only the screen is laid out: {}", pager.laid_out());

    // The end, then a search that finds one line among 50,000.
    press(&mut app, KeyCode::Char('G'));
    let bottom = draw(&mut app);
    assert!(bottom.contains("│ 50000 "), "{bottom}");
    press(&mut app, KeyCode::Char('g'));
    press(&mut app, KeyCode::Char('/'));
    type_text(&mut app, "31415");
    press(&mut app, KeyCode::Enter);
    assert_eq!(app.pager().unwrap().hit_count(), 1);
    let found = draw(&mut app);
    insta::assert_snapshot!("pager_seq_search_80x24", found);
    assert!(app.pager().unwrap().laid_out() < 200, "the jump lays out what it shows");

    // `[` goes to the call before; Esc closes and nothing was sent to the agent.
    press(&mut app, KeyCode::Char('['));
    let before = draw(&mut app);
    assert!(before.contains("README.md") && before.contains(" bash ls · 2 lines"), "{before}");
    press(&mut app, KeyCode::Esc);
    assert_eq!(app.overlay(), None);
}

#[test]
fn without_a_tool_call_ctrl_g_opens_nothing_and_the_pane_counts_a_running_calls_seconds() {
    let (mut app, _rx) = app_with(Vec::new());
    app.handle_key(KeyEvent::new(KeyCode::Char('g'), KeyModifiers::CONTROL));
    assert_eq!(app.overlay(), None);

    let running = run("call_1", "cargo build", ToolStatus::Running, "Compiling keel\n".into());
    let started = running.started;
    let (mut app, _rx) = app_with(vec![running]);
    app.on_tick(started + Duration::from_secs(3));
    let screen = draw(&mut app);
    assert!(screen.contains("cargo build  running 3.0s"), "{screen}");
    // A running call's output grows in the open pager.
    app.handle_key(KeyEvent::new(KeyCode::F(3), KeyModifiers::NONE));
    let more =
        run("call_1", "cargo build", ToolStatus::Running, "Compiling keel\nLinking\n".into());
    app.apply_snapshot(Snapshot { tools: [more].into_iter().collect(), ..Snapshot::default() });
    let screen = draw(&mut app);
    assert!(screen.contains("Linking"), "{screen}");
}

#[test]
fn the_tool_pane_marks_control_characters_in_output_instead_of_dropping_them() {
    // A `\r` that would hide the start of a line, an escape sequence, a bell, a bidi override;
    // the `\r` of a `\r\n` line end is only a line end.
    let output = "total 3\r\nrm -rf ~/x\rdone\n\u{1b}[2Jcleared\u{7}\nname\u{202e}txt.exe\n";
    let (mut app, _rx) =
        app_with(vec![run("call_1", "sh script", ToolStatus::Succeeded, output.into())]);
    let screen = draw_at(&mut app, (120, 40));
    insta::assert_snapshot!("tool_pane_marks_controls_120x40", screen);
    for shown in ["total 3 ", "rm -rf ~/x␍done", "^[[2Jcleared^G", "name⟨U+202E⟩txt.exe"] {
        assert!(screen.contains(shown), "{shown:?} is not on screen:\n{screen}");
    }
    // The pager shows the same lines the same way.
    app.handle_key(KeyEvent::new(KeyCode::Char('g'), KeyModifiers::CONTROL));
    let pager = draw_at(&mut app, (120, 40));
    assert!(pager.contains("rm -rf ~/x␍done") && pager.contains("^[[2Jcleared^G"), "{pager}");
}
