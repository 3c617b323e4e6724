#![allow(clippy::unwrap_used, clippy::expect_used)]
//! What compaction saves: `keel -p` through a long task against a loopback server that counts
//! a prompt's tokens as a quarter of its bytes, once with a window the task never fills (no
//! compaction) and once with a small one, and the bytes and estimated tokens each round's
//! request carried (summary requests counted apart).
//!
//! Two tasks: a 200-round session (each round reads a 2 KB file, the board updated every fifth),
//! and the measure — 20 steps, each printing 12 KB (240 KB of tool output), on a
//! 24,000-token window. Counted, not timed: the figures are the same on any machine.
//! `cargo bench --bench compaction` prints them; benches/README.md reports them.

mod support;

use serde_json::json;
use support::fake_llm::{self, Step, window};
use support::loopback::{Bodies, Exchange, Loopback, Play};
use support::peak_rss;

/// A window no task here fills: nothing is compacted.
const UNBOUNDED: &str = "10000000";
/// Rounds of the long session, and the bytes of the file each round reads.
const SESSION_ROUNDS: usize = 200;
const SESSION_READ_BYTES: usize = 2_000;
/// Every this many rounds the model updates its board.
const TODO_EVERY: usize = 5;
const BOARD_ITEMS: usize = 10;
/// The session's window when it compacts.
const SESSION_WINDOW: &str = "32000";
/// The measure: 20 steps of 12 KB on a 24k-token window.
const STEPS: usize = 20;
const STEP_OUTPUT_BYTES: usize = 12_000;
const STEP_WINDOW: &str = "24000";
/// The rounds whose request sizes are printed.
const SHOWN_ROUNDS: [usize; 6] = [1, 10, 50, 100, 150, 200];

/// `rounds` rounds, each reading `big.txt` but every `TODO_EVERY`th, which updates the board.
fn session_script(rounds: usize) -> Vec<Step> {
    let mut steps: Vec<Step> = (0..rounds)
        .map(|round| {
            let tool = if round % TODO_EVERY == 0 {
                let done = (round * BOARD_ITEMS / rounds).min(BOARD_ITEMS - 1);
                ("todo".to_owned(), fake_llm::board(done, BOARD_ITEMS))
            } else {
                ("read_file".to_owned(), json!({"path": "big.txt"}))
            };
            Step {
                text: format!("Round {round}: reading the file again."),
                tools: vec![tool],
                ..Step::default()
            }
        })
        .collect();
    steps.push(fake_llm::text("All rounds are done."));
    steps
}

/// One run's requests.
struct Figures {
    /// The task's requests, in order.
    rounds: Vec<usize>,
    /// Summary requests: how many, and their bytes.
    summaries: (usize, usize),
}

impl Figures {
    fn of(exchanges: &[Exchange]) -> Self {
        let rounds = exchanges.iter().filter(|e| !e.summary).map(|e| e.request_bytes).collect();
        let summaries = exchanges.iter().filter(|e| e.summary).map(|e| e.request_bytes);
        Self { rounds, summaries: (summaries.clone().count(), summaries.sum()) }
    }

    fn total(&self) -> usize {
        self.rounds.iter().sum::<usize>() + self.summaries.1
    }

    fn largest(&self) -> usize {
        self.rounds.iter().copied().max().unwrap_or_default()
    }
}

fn tokens(bytes: usize) -> usize {
    bytes / window::BYTES_PER_TOKEN
}

/// Runs `steps` through `keel -p` with `--context-window window` in a workspace whose
/// `big.txt` has `file_bytes` bytes.
fn run(steps: Vec<Step>, file_bytes: usize, window: &str, max_rounds: usize) -> Figures {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(Loopback::start_playing(steps, Bodies::Drop, Play::ByNewestCall));
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("big.txt"), window::big_file(file_bytes)).unwrap();
    let args = [
        "--context-window".to_owned(),
        window.to_owned(),
        "--max-rounds".to_owned(),
        max_rounds.to_string(),
    ];
    let run = peak_rss::keel_headless(
        &runtime,
        &server.base_url,
        dir.path(),
        "Work through the task.",
        &args,
    );
    assert!(run.status.success(), "keel -p failed: {}", run.status);
    Figures::of(&server.take())
}

fn report(what: &str, off: &Figures, on: &Figures) {
    println!("{what}");
    for (name, figures) in [("without compaction", off), ("with compaction", on)] {
        println!(
            "  {name}: {} requests, {} B sent (≈ {} tokens), the largest {} B (≈ {} tokens); {} summary requests, {} B",
            figures.rounds.len(),
            figures.total(),
            tokens(figures.total()),
            figures.largest(),
            tokens(figures.largest()),
            figures.summaries.0,
            figures.summaries.1
        );
    }
    println!(
        "  compaction sends {:.1}% of the bytes",
        100.0 * on.total() as f64 / off.total().max(1) as f64
    );
}

fn main() {
    let rounds = SESSION_ROUNDS + 10;
    let off = run(session_script(SESSION_ROUNDS), SESSION_READ_BYTES, UNBOUNDED, rounds);
    let on = run(session_script(SESSION_ROUNDS), SESSION_READ_BYTES, SESSION_WINDOW, rounds);
    assert_eq!(off.rounds.len(), SESSION_ROUNDS + 1, "one request a round and one for the answer");
    assert_eq!(on.rounds.len(), off.rounds.len(), "compaction repeats no round");
    report(&format!("{SESSION_ROUNDS}-round session, {SESSION_WINDOW}-token window"), &off, &on);
    println!("  round: bytes (≈ tokens) without compaction | with");
    for round in SHOWN_ROUNDS {
        let at = |figures: &Figures| figures.rounds[(round - 1).min(figures.rounds.len() - 1)];
        let (without, with) = (at(&off), at(&on));
        println!("  {round:>5}: {without} ({}) | {with} ({})", tokens(without), tokens(with));
    }
    let task = || window::long_task(STEPS, 1500);
    let rounds = 2 * STEPS + 10;
    let off = run(task(), STEP_OUTPUT_BYTES, UNBOUNDED, rounds);
    let on = run(task(), STEP_OUTPUT_BYTES, STEP_WINDOW, rounds);
    assert_eq!(on.rounds.len(), off.rounds.len(), "compaction repeats no step");
    assert!(on.largest() <= 24_000 * window::BYTES_PER_TOKEN, "every request within the window");
    report(
        &format!("{STEPS} steps of {STEP_OUTPUT_BYTES} B output, {STEP_WINDOW}-token window"),
        &off,
        &on,
    );
}
