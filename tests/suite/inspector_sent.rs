//! The inspector holds the last request as it was sent: while an approval is open (the history
//! then ends in a tool call no request can carry) it still shows the request before, byte for
//! byte, in the wire's key order, titled with when it went; before anything is sent it shows a
//! preview of the next request and says so.

use crate::support::{llm, wire};
use keel::agent::{self, AgentConfig, ApprovalMode, Command, Snapshot};
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

fn provider(server: &FakeLlm, format: WireFormat) -> Provider {
    match format {
        WireFormat::Anthropic => Provider::Anthropic(
            AnthropicClient::new(wire::settings(&server.anthropic_base(), 0)).unwrap(),
        ),
        WireFormat::OpenAi => {
            Provider::OpenAi(OpenAiClient::new(wire::settings(&server.openai_base(), 0)).unwrap())
        }
    }
}

/// The screen (less its last row, the status bar) with the inspector open on `snapshot`.
fn inspector_screen(snapshot: Snapshot, (width, height): (u16, u16)) -> String {
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    let mut app = App::new(tx, TuiOptions::default());
    app.apply_snapshot(snapshot);
    app.handle_key(KeyEvent::new(KeyCode::Char('t'), KeyModifiers::CONTROL));
    assert_eq!(app.overlay(), Some(OverlayKind::History));
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    app.prepare(Rect::new(0, 0, width, height));
    terminal.draw(|frame| render(&app, frame)).unwrap();
    let buffer = terminal.backend().buffer();
    (0..buffer.area.height - 1)
        .map(|y| (0..buffer.area.width).map(|x| buffer[(x, y)].symbol()).collect::<String>())
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn during_an_approval_the_inspector_shows_the_request_sent_byte_for_byte() {
    for format in [WireFormat::Anthropic, WireFormat::OpenAi] {
        let steps = vec![
            llm::tool("read_file", json!({"path": "notes.txt"})),
            llm::tool("bash", json!({"command": "touch made.txt"})),
            llm::text("Done."),
        ];
        let server = FakeLlm::start(steps, Duration::ZERO).await;
        let dir = tempfile::tempdir().unwrap();
        let config = AgentConfig {
            system_prompt: SYSTEM.into(),
            approval: ApprovalMode::Ask,
            ..AgentConfig::default()
        };
        let tools = Tools::new(Workspace::new(dir.path()).unwrap());
        let mut handle = agent::spawn(config, Some(provider(&server, format)), tools);
        handle.commands.send(Command::Submit("Read notes.txt, then make a file.".into())).unwrap();
        let waiting = async {
            loop {
                let snapshot = handle.snapshots.recv().await.expect("the agent stopped");
                if snapshot.pending_approval.is_some() {
                    return snapshot;
                }
            }
        };
        let snapshot = tokio::time::timeout(HANG_GUARD, waiting).await.expect("no approval");
        let bodies = server.server.received_requests().await.unwrap();
        assert_eq!(bodies.len(), 2, "{format:?}: the box opened after the second answer");
        let sent = &bodies[1].body;

        let inspector = Inspector::open(&snapshot);
        assert!(inspector.shows_sent(), "{format:?}");
        assert_eq!(inspector.body_bytes(), &sent[..], "{format:?}: the bytes the server received");
        assert_eq!(inspector.shown_body().as_bytes(), &sent[..], "{format:?}: as shown");
        assert!(
            !String::from_utf8_lossy(sent).contains("touch made.txt"),
            "{format:?}: the call waiting for its answer was never sent"
        );

        let screen = inspector_screen(snapshot, (120, 200));
        assert!(screen.contains("· sent ") && screen.contains(" UTC ·"), "{screen}");
        assert!(!screen.contains("touch made.txt"), "{format:?}: {screen}");
        // The wire's key order, not the alphabet's: "model" comes before "max_tokens".
        let model = screen.find("\"model\"").unwrap();
        assert!(model < screen.find("\"max_tokens\"").unwrap(), "{screen}");
        if format == WireFormat::Anthropic {
            // `cache_control` follows the text it marks, as on the wire.
            let text = screen.find("\"text\": \"You are keel").unwrap();
            assert!(text < screen[text..].find("\"cache_control\"").unwrap() + text, "{screen}");
        }
        handle.commands.send(Command::Cancel).unwrap();
        handle.commands.send(Command::Quit).unwrap();
        tokio::time::timeout(HANG_GUARD, &mut handle.task).await.expect("no stop").unwrap();
    }
}

#[test]
fn before_anything_is_sent_the_inspector_is_a_labelled_preview() {
    let snapshot = Snapshot { system_prompt: SYSTEM.into(), ..Snapshot::default() };
    let inspector = Inspector::open(&snapshot);
    assert!(!inspector.shows_sent());
    let screen = inspector_screen(snapshot, (80, 20));
    insta::assert_snapshot!("inspector_preview_80x20", screen);
    let small = inspector_screen(Snapshot::default(), (40, 12));
    assert!(small.contains("preview"), "a narrow screen still says it is a preview:\n{small}");
}

#[test]
fn ctrl_t_opens_the_inspector_over_an_approval_and_esc_closes_it_without_answering() {
    let request = keel::agent::ApprovalRequest {
        id: "call_1".into(),
        tool: "bash".into(),
        asking: keel::agent::Asking::Command,
        detail: "rm -rf build | wc -l".into(),
        diff: None,
        always: None,
        sandbox: None,
        agent: None,
        check: None,
    };
    let snapshot = Snapshot {
        pending_approval: Some(std::sync::Arc::new(request)),
        activity: keel::agent::Activity::AwaitingApproval,
        ..Snapshot::default()
    };
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let mut app = App::new(tx, TuiOptions::default());
    app.apply_snapshot(snapshot);
    let labels = |app: &App| app.hints().into_iter().map(|(key, hint)| format!("{key} {hint}"));
    let hints: Vec<String> = labels(&app).collect();
    assert!(hints.contains(&"y yes".to_owned()) && hints.contains(&"Ctrl+T request".to_owned()));
    assert!(
        !hints.iter().any(|hint| hint.contains("always")),
        "the box offers no \"always\" for a pipeline, so neither does the status line: {hints:?}"
    );

    app.handle_key(KeyEvent::new(KeyCode::Char('t'), KeyModifiers::CONTROL));
    assert_eq!(app.overlay(), Some(OverlayKind::History));
    let hints: Vec<String> = labels(&app).collect();
    assert!(hints.iter().any(|hint| hint.ends_with("close")), "{hints:?}");
    let mut terminal = Terminal::new(TestBackend::new(80, 24)).unwrap();
    app.prepare(Rect::new(0, 0, 80, 24));
    terminal.draw(|frame| render(&app, frame)).unwrap();
    insta::assert_snapshot!("inspector_over_approval_80x24", terminal.backend());

    // `n` scrolls nothing and answers nothing while the inspector is on top; Esc closes it.
    app.handle_key(KeyEvent::new(KeyCode::Char('n'), KeyModifiers::NONE));
    app.handle_key(KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE));
    assert_eq!(app.overlay(), None);
    assert!(rx.try_recv().is_err(), "no answer was sent");
    assert!(app.visible_approval().is_some(), "the box is back");
}
