//! The MCP servers on screen: the status bar's `mcp READY/ENABLED`, and `/mcp` listing each
//! server with its state and tools in the conversation.

use keel::agent::Snapshot;
use keel::tools::mcp::{RemoteTool, ServerView, Status};
use keel::tui::{App, TuiOptions, render};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;
use serde_json::json;
use std::time::Instant;

const WIDTH: u16 = 100;
const HEIGHT: u16 = 24;

fn server(name: &str, status: Status, tools: &[&str]) -> ServerView {
    ServerView {
        name: name.into(),
        reached_by: format!("{name}-server --stdio"),
        status,
        tools: tools
            .iter()
            .map(|tool| RemoteTool {
                exposed: format!("mcp__{name}__{tool}"),
                name: (*tool).into(),
                description: format!("Does {tool}."),
                input_schema: json!({"type": "object"}),
                read_only: *tool == "read",
            })
            .collect(),
        log: None,
        capped: None,
    }
}

fn servers() -> Snapshot {
    Snapshot {
        seq: 1,
        mcp: vec![
            server("files", Status::Ready, &["read", "write"]),
            server("broken", Status::Failed("did not start within 10000 ms".into()), &[]),
            server("off", Status::Disabled, &[]),
        ]
        .into(),
        ..Snapshot::default()
    }
}

/// The screen's rows with `snapshot` applied, after typing `typed` and Enter when it is given.
fn screen(snapshot: Snapshot, typed: Option<&str>) -> Vec<String> {
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    let mut app = App::new(tx, TuiOptions::default());
    app.apply_snapshot(snapshot);
    app.on_tick(Instant::now());
    if let Some(text) = typed {
        for c in text.chars() {
            app.handle_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
        }
        app.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    }
    let mut terminal = Terminal::new(TestBackend::new(WIDTH, HEIGHT)).unwrap();
    app.prepare(Rect::new(0, 0, WIDTH, HEIGHT));
    terminal.draw(|frame| render(&app, frame)).unwrap();
    let buffer = terminal.backend().buffer();
    (0..HEIGHT).map(|y| (0..WIDTH).map(|x| buffer[(x, y)].symbol()).collect()).collect()
}

#[test]
fn the_status_bar_counts_the_servers_up_of_those_enabled() {
    let rows = screen(servers(), None);
    let bar = rows.last().unwrap();
    assert!(bar.contains("mcp 1/2"), "{bar}");
    let none = screen(Snapshot { seq: 1, ..Snapshot::default() }, None);
    assert!(!none.last().unwrap().contains("mcp"), "no servers, no mcp: {}", none.last().unwrap());
}

#[test]
fn slash_mcp_lists_servers_state_and_tools() {
    let rows = screen(servers(), Some("/mcp")).join("\n");
    for line in [
        "files (ready, 2 tools) — files-server --stdio",
        "mcp__files__read [read-only]  Does read.",
        "mcp__files__write  Does write.",
        "broken (failed: did not start within 10000 ms) —",
        "off (disabled) — off-server --stdio",
    ] {
        assert!(rows.contains(line), "{line:?} missing from\n{rows}");
    }
}
