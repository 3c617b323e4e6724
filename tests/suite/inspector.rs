//! The inspector (Ctrl+T) on both protocols, end to end: a real agent talks to a loopback server
//! over Anthropic or OpenAI-compatible HTTP, and what the inspector shows must be exactly the body
//! the server received — parameters, system prompt, tools and messages — in that protocol's own
//! shape.

use crate::support::{llm, wire};
use keel::agent::{self, AgentConfig, AgentEvent, AgentHandle, Command, Snapshot};
use keel::llm::anthropic::AnthropicClient;
use keel::llm::openai::OpenAiClient;
use keel::llm::{Provider, WireFormat};
use keel::runtime::Workspace;
use keel::tools::Tools;
use keel::tui::view::inspector::Inspector;
use keel::tui::{App, OverlayKind, TuiOptions, render};
use llm::FakeLlm;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;
use serde_json::json;
use std::time::Duration;

const HANG_GUARD: Duration = Duration::from_secs(30);
const SYSTEM: &str = "You are keel, under test.";
/// Tall enough for the whole short history on one screen.
const SCREEN: (u16, u16) = (120, 90);

/// Runs one turn against `server` over `format`: a read of a missing file, then an answer.
/// Returns the last snapshot.
async fn one_turn(server: &FakeLlm, format: WireFormat) -> Snapshot {
    let dir = tempfile::tempdir().unwrap();
    let provider = match format {
        WireFormat::Anthropic => Provider::Anthropic(
            AnthropicClient::new(wire::settings(&server.anthropic_base(), 0)).unwrap(),
        ),
        WireFormat::OpenAi => {
            Provider::OpenAi(OpenAiClient::new(wire::settings(&server.openai_base(), 0)).unwrap())
        }
    };
    let config = AgentConfig { system_prompt: SYSTEM.into(), ..AgentConfig::default() };
    let tools = Tools::new(Workspace::new(dir.path()).unwrap());
    let mut handle = agent::spawn(config, Some(provider), tools);
    handle.commands.send(Command::Submit("Read notes.txt.".into())).unwrap();
    finish(&mut handle).await
}

/// Waits for the turn's result, stops the agent and returns its last snapshot.
async fn finish(handle: &mut AgentHandle) -> Snapshot {
    let until_result = async {
        while let Some(event) = handle.events.recv().await {
            if let AgentEvent::Result { error, .. } = event {
                assert_eq!(error, None);
                return;
            }
        }
        panic!("the agent stopped before the turn ended");
    };
    tokio::time::timeout(HANG_GUARD, until_result).await.expect("the turn never ended");
    handle.commands.send(Command::Quit).unwrap();
    tokio::time::timeout(HANG_GUARD, &mut handle.task).await.expect("no stop").unwrap();
    std::iter::from_fn(|| handle.snapshots.try_recv().ok()).last().expect("no snapshot")
}

/// The screen with the inspector open on `snapshot`.
fn inspector_screen(snapshot: Snapshot) -> String {
    inspector_screen_at(snapshot, SCREEN)
}

fn inspector_screen_at(snapshot: Snapshot, screen: (u16, u16)) -> String {
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    let mut app = App::new(tx, TuiOptions::default());
    app.apply_snapshot(snapshot);
    app.handle_key(KeyEvent::new(KeyCode::Char('t'), KeyModifiers::CONTROL));
    assert_eq!(app.overlay(), Some(OverlayKind::History));
    let mut terminal = Terminal::new(TestBackend::new(screen.0, screen.1)).unwrap();
    app.handle_key(KeyEvent::new(KeyCode::Char('g'), KeyModifiers::NONE));
    app.prepare(Rect::new(0, 0, screen.0, screen.1));
    terminal.draw(|frame| render(&app, frame)).unwrap();
    let buffer = terminal.backend().buffer();
    (0..buffer.area.height)
        .map(|y| (0..buffer.area.width).map(|x| buffer[(x, y)].symbol()).collect::<String>())
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn the_snapshot_and_the_inspector_speak_the_sessions_protocol() {
    let steps = vec![
        llm::tool("read_file", json!({"path": "notes.txt"})),
        llm::text("There is no notes.txt."),
    ];
    for format in [WireFormat::Anthropic, WireFormat::OpenAi] {
        let server = FakeLlm::start(steps.clone(), Duration::ZERO).await;
        let snapshot = one_turn(&server, format).await;
        assert_eq!(snapshot.wire_format, format);

        // What the inspector shows for the history of the last request is that request's
        // `messages`, byte for byte as JSON.
        let bodies = server.server.received_requests().await.unwrap();
        assert_eq!(bodies.len(), 2, "{format:?}");
        let mut sent = snapshot.history.clone();
        sent.pop_back();
        let count = wire::assert_inspector_matches_body(
            snapshot.wire_format,
            &snapshot.system_prompt,
            &sent,
            &bodies[1].body,
        );

        // The inspector shows the whole body that request sent: parameters, system, tools and
        // messages, the very bytes the server received, in their order.
        let inspector = Inspector::open(&snapshot);
        assert!(inspector.shows_sent(), "{format:?}");
        assert_eq!(inspector.body_bytes(), &bodies[1].body[..], "{format:?}");
        assert_eq!(inspector.shown_body().as_bytes(), &bodies[1].body[..], "{format:?}");
        let received: serde_json::Value = serde_json::from_slice(&bodies[1].body).unwrap();
        assert!(received["tools"].as_array().is_some_and(|tools| !tools.is_empty()));

        let small = inspector_screen_at(snapshot.clone(), (40, 12));
        assert!(small.contains("Esc"), "a small screen says how to close it:\n{small}");
        let screen = inspector_screen(snapshot);
        assert!(screen.contains("── tools ("), "{screen}");
        assert!(screen.contains("\"max_tokens\""), "{screen}");
        match format {
            WireFormat::Anthropic => {
                assert_eq!(count, 3, "user, assistant, user with the result");
                assert!(screen.contains("Anthropic Messages"), "{screen}");
                assert!(screen.contains("\"type\": \"tool_result\""), "{screen}");
                assert!(!screen.contains("\"role\": \"tool\""), "{screen}");
                assert!(!screen.contains("\"role\": \"system\""), "{screen}");
            }
            WireFormat::OpenAi => {
                assert_eq!(count, 4, "system, user, assistant, tool");
                assert!(screen.contains("OpenAI Chat Completions"), "{screen}");
                assert!(screen.contains("\"role\": \"system\""), "{screen}");
                assert!(screen.contains("\"role\": \"tool\""), "{screen}");
                assert!(screen.contains("\"tool_call_id\": \"call_0_0\""), "{screen}");
                assert!(!screen.contains("\"type\": \"tool_result\""), "{screen}");
            }
        }
    }
}

/// The inspector's screen as drawn now.
fn drawn(app: &mut App, screen: (u16, u16)) -> String {
    let mut terminal = Terminal::new(TestBackend::new(screen.0, screen.1)).unwrap();
    app.prepare(Rect::new(0, 0, screen.0, screen.1));
    terminal.draw(|frame| render(app, frame)).unwrap();
    let buffer = terminal.backend().buffer();
    (0..buffer.area.height)
        .map(|y| (0..buffer.area.width).map(|x| buffer[(x, y)].symbol()).collect::<String>())
        .collect::<Vec<_>>()
        .join("\n")
}

fn press(app: &mut App, code: KeyCode) {
    app.handle_key(KeyEvent::new(code, KeyModifiers::NONE));
}

#[tokio::test]
async fn long_parts_are_folded_and_search_finds_and_unfolds_what_they_hide() {
    let steps = vec![
        llm::tool("read_file", json!({"path": "notes.txt"})),
        llm::text("There is no notes.txt."),
    ];
    let server = FakeLlm::start(steps, Duration::ZERO).await;
    let mut snapshot = one_turn(&server, WireFormat::Anthropic).await;
    // A fixed time for the title: 2026-01-02 14:03:27 UTC.
    snapshot.last_sent.as_mut().unwrap().at =
        std::time::UNIX_EPOCH + Duration::from_secs(1_767_362_607);
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    let mut app = App::new(tx, TuiOptions::default());
    app.apply_snapshot(snapshot);
    app.handle_key(KeyEvent::new(KeyCode::Char('t'), KeyModifiers::CONTROL));
    press(&mut app, KeyCode::Char('g'));
    let top = drawn(&mut app, SCREEN);
    assert!(top.contains("── tools ("), "{top}");
    assert!(top.contains("more lines (o unfolds)"), "the tools are folded: {top}");
    assert!(!top.contains("\"old_text\""), "edit_file's schema is folded away: {top}");
    // Without the status bar, which shows how long the turn took.
    let small = drawn(&mut app, (100, 40));
    let inspector = small.rsplit_once('\n').unwrap().0;
    insta::assert_snapshot!("inspector_request_top_100x40", inspector);

    // `/old_text` finds it in the folded part and unfolds it to show the hit.
    press(&mut app, KeyCode::Char('/'));
    for c in "old_text".chars() {
        press(&mut app, KeyCode::Char(c));
    }
    press(&mut app, KeyCode::Enter);
    let found = drawn(&mut app, SCREEN);
    assert!(found.contains("\"old_text\""), "{found}");
    assert!(!found.contains("more lines (o unfolds)"), "{found}");

    // `o` folds the long parts again.
    press(&mut app, KeyCode::Char('o'));
    press(&mut app, KeyCode::Char('g'));
    let folded = drawn(&mut app, SCREEN);
    assert!(folded.contains("more lines (o unfolds)"), "{folded}");
}
