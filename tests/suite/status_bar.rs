//! The status bar's facts as a new user reads them: the reminder's counter that cannot pass for
//! done/total (`↻ 1/3`), the turn's time, tokens with the cache's share, and the cost where the
//! model's price is known (keel's table, or the person's own) — and a real turn that sets the
//! turn's time.

use crate::support::{llm, wire};
use keel::agent::{
    self, Activity, AgentConfig, AgentEvent, Command, Reminder, Snapshot, TurnClock,
};
use keel::llm::Provider;
use keel::llm::anthropic::AnthropicClient;
use keel::message::Usage;
use keel::pricing::{Price, Prices};
use keel::runtime::Workspace;
use keel::tools::Tools;
use keel::tui::{App, TuiOptions, render};
use llm::{FakeLlm, text};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::layout::Rect;
use std::sync::Arc;
use std::time::{Duration, Instant};

const HANG_GUARD: Duration = Duration::from_secs(30);

/// The bottom row of the screen with `snapshot` applied, drawn at `now`.
fn status_line(options: TuiOptions, snapshot: Snapshot, now: Instant, width: u16) -> String {
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    let mut app = App::new(tx, options);
    app.apply_snapshot(snapshot);
    app.on_tick(now);
    let height = 24;
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    app.prepare(Rect::new(0, 0, width, height));
    terminal.draw(|frame| render(&app, frame)).unwrap();
    let buffer = terminal.backend().buffer();
    (0..width).map(|x| buffer[(x, height - 1)].symbol()).collect()
}

/// A turn 75 seconds along, after 40k prompt tokens of which 30k came from the cache.
fn busy(now: Instant) -> Snapshot {
    Snapshot {
        seq: 1,
        provider: Arc::from("anthropic"),
        model: Arc::from("claude-sonnet-4-5"),
        reminder: Reminder::at(3, 1, 0),
        activity: Activity::Thinking,
        turn_clock: TurnClock::Running { since: now - Duration::from_secs(75) },
        usage: Usage {
            input_tokens: 40_000,
            output_tokens: 1_500,
            cache_read_tokens: 30_000,
            cache_write_tokens: 0,
        },
        ..Snapshot::default()
    }
}

#[test]
fn snapshot_the_bar_with_turn_time_cache_and_cost() {
    let now = Instant::now();
    for width in [120, 80] {
        let line = status_line(TuiOptions::default(), busy(now), now, width);
        insta::assert_snapshot!(format!("status_bar_busy_{width}"), line);
    }
}

#[test]
fn the_reminder_counter_cannot_pass_for_done_over_total() {
    let now = Instant::now();
    let line = status_line(TuiOptions::default(), busy(now), now, 120);
    assert!(line.contains("↻ 1/3"), "{line}");
    assert!(!line.contains("todo 1/3"), "{line}");
}

#[test]
fn the_turn_time_counts_while_it_runs_and_stays_when_it_is_over() {
    let now = Instant::now();
    let line = status_line(TuiOptions::default(), busy(now), now, 120);
    assert!(line.contains("turn 1m 15s"), "{line}");
    let later = now + Duration::from_secs(10);
    let line = status_line(TuiOptions::default(), busy(now), later, 120);
    assert!(line.contains("turn 1m 25s"), "{line}");
    let over = Snapshot {
        activity: Activity::Idle,
        turn_clock: TurnClock::Took(Duration::from_secs(8)),
        ..busy(now)
    };
    let line = status_line(TuiOptions::default(), over, later, 120);
    assert!(line.contains("turn 8s"), "{line}");
    let fresh = Snapshot { turn_clock: TurnClock::None, ..busy(now) };
    let line = status_line(TuiOptions::default(), fresh, now, 120);
    assert!(!line.contains("turn "), "no turn yet, no time: {line}");
}

#[test]
fn the_cost_shows_only_where_the_price_is_known_and_follows_the_persons_prices() {
    let now = Instant::now();
    // claude-sonnet-4-5: 10k fresh at $3, 30k cached at $0.30, 1.5k out at $15 per million.
    let line = status_line(TuiOptions::default(), busy(now), now, 120);
    assert!(line.contains("│ $0.06 │"), "{line}");
    assert!(line.contains("cache 75%"), "{line}");

    let unknown = Snapshot { model: Arc::from("my-local-model"), ..busy(now) };
    let line = status_line(TuiOptions::default(), unknown, now, 120);
    assert!(!line.contains('$'), "no price, no cost: {line}");

    let mine = Price { input: 100.0, output: 0.0, cache_read: None, cache_write: None };
    let prices = Prices::new([("my-local-model".to_owned(), mine)].into()).unwrap();
    let options = TuiOptions { prices, ..TuiOptions::default() };
    let unknown = Snapshot { model: Arc::from("my-local-model"), ..busy(now) };
    let line = status_line(options, unknown, now, 120);
    assert!(line.contains("│ $4.00 │"), "40k prompt tokens at $100 per million: {line}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_turn_leaves_its_time_on_the_snapshot() {
    let server = FakeLlm::start(vec![text("Hello.")], Duration::ZERO).await;
    let dir = tempfile::tempdir().unwrap();
    let provider = Provider::Anthropic(
        AnthropicClient::new(wire::settings(&server.anthropic_base(), 0)).unwrap(),
    );
    let tools = Tools::new(Workspace::new(dir.path()).unwrap());
    let mut handle = agent::spawn(AgentConfig::default(), Some(provider), tools);
    handle.commands.send(Command::Submit("Say hello.".into())).unwrap();
    let until_result = async {
        while let Some(event) = handle.events.recv().await {
            if matches!(event, AgentEvent::Result { .. }) {
                return;
            }
        }
        panic!("the agent stopped before the turn ended");
    };
    tokio::time::timeout(HANG_GUARD, until_result).await.expect("the turn never ended");
    handle.commands.send(Command::Quit).unwrap();
    tokio::time::timeout(HANG_GUARD, &mut handle.task).await.expect("no stop").unwrap();
    let snapshots: Vec<Snapshot> =
        std::iter::from_fn(|| handle.snapshots.try_recv().ok()).collect();
    assert!(
        snapshots.iter().any(|s| matches!(s.turn_clock, TurnClock::Running { .. })),
        "the clock ran during the turn"
    );
    let last = snapshots.last().expect("no snapshot");
    assert!(matches!(last.turn_clock, TurnClock::Took(_)), "{:?}", last.turn_clock);
}
