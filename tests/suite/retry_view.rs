//! What the person sees while a request is retried, end to end: a real agent talks to a loopback
//! server whose first answer is cut off mid-text. The partial answer must vanish when the retry
//! is announced (it is void: the retry starts the answer over), the status bar must count down to
//! the retry, and only the second answer may reach the history.

use crate::support::wire;
use keel::agent::{self, Activity, AgentConfig, AgentEvent, Command, Entry, Snapshot};
use keel::llm::Provider;
use keel::llm::anthropic::AnthropicClient;
use keel::runtime::Workspace;
use keel::tools::Tools;
use keel::tui::{App, TuiOptions, render};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::layout::Rect;
use std::time::Duration;
use wire::{RawServer, Reply, anthropic_text_stream};

const HANG_GUARD: Duration = Duration::from_secs(30);
const FIRST: &str = "FIRSTATTEMPT words that never finish";
const SECOND: &str = "The whole second answer.";
/// The second answer stops after its text for this long, so that the text is surely shown
/// while the answer is still open.
const SECOND_PAUSE: Duration = Duration::from_millis(200);

/// Every snapshot of one turn whose first answer is cut after its text.
async fn snapshots_of_a_cut_turn() -> (Vec<Snapshot>, Vec<AgentEvent>) {
    let first = anthropic_text_stream(FIRST);
    let cut = first.find("event: content_block_stop").unwrap();
    let second = anthropic_text_stream(SECOND);
    let pause_at = second.find("event: content_block_stop").unwrap();
    let server = RawServer::start(vec![
        Reply::cut(&first, cut),
        Reply::paused(&second, pause_at, SECOND_PAUSE),
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let client = AnthropicClient::new(wire::settings(&server.base_url, 2)).unwrap();
    let tools = Tools::new(Workspace::new(dir.path()).unwrap());
    let mut handle = agent::spawn(AgentConfig::default(), Some(Provider::Anthropic(client)), tools);
    handle.commands.send(Command::Submit("Say something.".into())).unwrap();
    let mut events = Vec::new();
    let until_result = async {
        while let Some(event) = handle.events.recv().await {
            let done = matches!(event, AgentEvent::Result { .. });
            events.push(event);
            if done {
                return;
            }
        }
        panic!("the agent stopped before the turn ended");
    };
    tokio::time::timeout(HANG_GUARD, until_result).await.expect("the turn never ended");
    handle.commands.send(Command::Quit).unwrap();
    tokio::time::timeout(HANG_GUARD, &mut handle.task).await.expect("no stop").unwrap();
    assert_eq!(server.connections(), 2);
    (std::iter::from_fn(|| handle.snapshots.try_recv().ok()).collect(), events)
}

fn shows_first(snapshot: &Snapshot) -> bool {
    snapshot.streaming.as_ref().is_some_and(|text| text.to_string().contains("FIRSTATTEMPT"))
}

fn is_retrying(snapshot: &Snapshot) -> bool {
    matches!(snapshot.activity, Activity::Retrying { .. })
}

#[tokio::test]
async fn a_retry_drops_the_partial_answer_and_only_the_second_reaches_the_history() {
    let (snapshots, events) = snapshots_of_a_cut_turn().await;
    let shown = snapshots.iter().position(shows_first).expect("the first text was never shown");
    let retrying = snapshots.iter().position(is_retrying).expect("no retry was shown");
    assert!(shown < retrying);
    let Activity::Retrying { attempt, reason, .. } = &snapshots[retrying].activity else {
        unreachable!()
    };
    assert_eq!((*attempt, reason.as_str()), (1, "stream cut off"));
    assert_eq!(snapshots[retrying].streaming, None, "the void text is gone at once");
    assert!(
        !snapshots[retrying..].iter().any(shows_first),
        "the first attempt's text came back after the retry"
    );
    let streamed: Vec<String> = snapshots[retrying..]
        .iter()
        .filter_map(|snapshot| snapshot.streaming.as_ref().map(ToString::to_string))
        .collect();
    assert!(
        streamed.iter().any(|text| text == SECOND),
        "the second answer streams in: {streamed:?}"
    );
    assert!(streamed.iter().all(|text| SECOND.starts_with(text)), "on its own: {streamed:?}");
    let last = snapshots.last().unwrap();
    assert_eq!(last.history.len(), 2);
    assert_eq!(last.history[1].text(), SECOND);
    assert!(!last.transcript.iter().any(|entry| matches!(entry,
        Entry::Assistant { text } if text.contains("FIRSTATTEMPT"))));
    assert!(events.iter().any(|event| matches!(event, AgentEvent::Retry { attempt: 1, .. })));
}

fn screen(app: &mut App) -> String {
    let (width, height) = (120, 40);
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    app.prepare(Rect::new(0, 0, width, height));
    terminal.draw(|frame| render(app, frame)).unwrap();
    let buffer = terminal.backend().buffer();
    (0..height)
        .map(|y| (0..width).map(|x| buffer[(x, y)].symbol()).collect::<String>())
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn the_screen_drops_the_partial_answer_and_counts_down_to_the_retry() {
    let (snapshots, _) = snapshots_of_a_cut_turn().await;
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    let mut app = App::new(tx, TuiOptions::default());
    let mut snapshots = snapshots.into_iter();

    for snapshot in snapshots.by_ref() {
        let partial = shows_first(&snapshot);
        app.apply_snapshot(snapshot);
        if partial {
            break;
        }
    }
    assert!(screen(&mut app).contains("FIRSTATTEMPT"), "the partial answer is on screen");

    let retrying = snapshots.find(is_retrying).expect("no retry");
    let Activity::Retrying { until, .. } = retrying.activity else { unreachable!() };
    app.apply_snapshot(retrying);
    // The countdown is drawn from the tick's clock: step it to moments before the retry.
    app.on_tick(until.checked_sub(Duration::from_millis(4_500)).unwrap());
    let waiting = screen(&mut app);
    assert!(!waiting.contains("FIRSTATTEMPT"), "the void text is still shown:\n{waiting}");
    assert!(waiting.contains("waiting for retry in 5s (attempt 1)"), "{waiting}");
    app.on_tick(until.checked_sub(Duration::from_millis(1_200)).unwrap());
    assert!(screen(&mut app).contains("waiting for retry in 2s (attempt 1)"));

    let last = snapshots.last().expect("snapshots after the retry");
    app.apply_snapshot(last);
    let done = screen(&mut app);
    assert!(done.contains(SECOND), "{done}");
    assert!(!done.contains("FIRSTATTEMPT"), "{done}");
    assert!(!done.contains("waiting for retry"), "{done}");
}
