#![allow(clippy::unwrap_used, clippy::expect_used)]
//! A long session: `keel -p` runs 10,000 rounds against a loopback server that answers at once
//! and counts each prompt's tokens as a real one would, and this reports its peak RSS and its
//! time per round early and late in the session. keel's own work per round must not grow with
//! the history; the request, which carries the whole history every time the API is stateless,
//! is bounded by compaction (a 32,000-token window here), so it must not grow without end
//! either. Encoding a request of 20, 2,000 and 20,000 messages — what a round would cost without
//! compaction — is measured on its own (`request_body`), in bytes per second.
//!
//! `KEEL_BENCH_ROUNDS` sets the number of rounds (default 10,000).

mod support;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use keel::llm::anthropic::AnthropicClient;
use keel::llm::retry::RetryPolicy;
use keel::llm::{ChatRequest, HttpSettings};
use keel::message::{ContentBlock, History, Message, Role};
use serde_json::json;
use std::time::{Duration, Instant};
use support::fake_llm::{self, Step};
use support::loopback::{Bodies, Exchange, Loopback, Play};
use support::peak_rss;

const DEFAULT_ROUNDS: usize = 10_000;
/// Rounds on each side of the round a figure is taken at, for a steady median.
const WINDOW: usize = 5;
/// The context window the session compacts within, in tokens.
const CONTEXT_WINDOW: &str = "32000";
/// Items on the session's board.
const BOARD_ITEMS: usize = 10;
/// Every this many rounds the model updates its board; the rest read a file.
const TODO_EVERY: usize = 4;

fn rounds() -> usize {
    std::env::var("KEEL_BENCH_ROUNDS")
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(DEFAULT_ROUNDS)
}

/// `rounds` tool rounds — mostly `read_file`, a board update every few — then a closing answer.
fn long_script(rounds: usize) -> Vec<Step> {
    let mut steps: Vec<Step> = (0..rounds)
        .map(|round| {
            let tool = if round % TODO_EVERY == 0 {
                let done = (round * BOARD_ITEMS / rounds).min(BOARD_ITEMS - 1);
                ("todo".to_owned(), fake_llm::board(done, BOARD_ITEMS))
            } else {
                ("read_file".to_owned(), json!({"path": "notes.txt"}))
            };
            Step {
                text: format!("Round {round}: checking the notes again."),
                tools: vec![tool],
                ..Step::default()
            }
        })
        .collect();
    steps.push(fake_llm::text("All rounds are done."));
    steps
}

/// keel's time between an answer and its next request (tool time included: it is tiny here).
fn gaps(exchanges: &[Exchange]) -> Vec<Duration> {
    exchanges.windows(2).map(|pair| pair[1].request_arrived - pair[0].answer_sent).collect()
}

fn median_around(gaps: &[Duration], round: usize) -> Duration {
    let from = round.saturating_sub(WINDOW).min(gaps.len().saturating_sub(1));
    let to = (round + WINDOW).min(gaps.len());
    let mut window = gaps[from..to].to_vec();
    window.sort();
    window.get(window.len() / 2).copied().unwrap_or_default()
}

/// Runs the long session as a process and prints what it cost.
fn report_long_session(rounds: usize) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(Loopback::start_playing(
        long_script(rounds),
        Bodies::Drop,
        Play::ByNewestCall,
    ));
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "remember the plan\n").unwrap();
    let started = Instant::now();
    let args = [
        "--max-rounds".to_owned(),
        (rounds + 10).to_string(),
        "--context-window".to_owned(),
        CONTEXT_WINDOW.to_owned(),
    ];
    let run = peak_rss::keel_headless(
        &runtime,
        &server.base_url,
        dir.path(),
        "Work through the long task.",
        &args,
    );
    let elapsed = started.elapsed();
    assert!(run.status.success(), "keel -p failed: {}", run.status);
    let all = server.take();
    let summaries = all.iter().filter(|exchange| exchange.summary).count();
    let exchanges: Vec<Exchange> = all.into_iter().filter(|exchange| !exchange.summary).collect();
    assert_eq!(exchanges.len(), rounds + 1, "one request per round and one for the answer");
    let gaps = gaps(&exchanges);
    let (early_round, late_round) = (10.min(rounds), rounds);
    let early = median_around(&gaps, early_round);
    let late = median_around(&gaps, late_round);
    let bytes = |round: usize| exchanges[round.min(exchanges.len() - 1)].request_bytes;
    let largest = exchanges.iter().map(|exchange| exchange.request_bytes).max().unwrap_or(0);
    println!(
        "long session: {rounds} rounds in {:.1} s; peak RSS {}; {summaries} compactions by summary \
         on a {CONTEXT_WINDOW}-token window, the largest request {largest} B",
        elapsed.as_secs_f64(),
        peak_rss::describe(run.peak_mib)
    );
    println!(
        "  time per round (answer to next request): round {early_round} {early:?} ({} B request), \
         round {late_round} {late:?} ({} B request): {:.2}x",
        bytes(early_round),
        bytes(late_round),
        ratio(late, early)
    );
}

fn ratio(late: Duration, early: Duration) -> f64 {
    late.as_secs_f64() / early.as_secs_f64().max(f64::MIN_POSITIVE)
}

fn client() -> AnthropicClient {
    AnthropicClient::new(HttpSettings {
        base_url: "http://127.0.0.1:9".into(),
        api_key: "bench".into(),
        model: "bench".into(),
        connect_timeout: Duration::from_secs(1),
        idle_timeout: Duration::from_secs(1),
        stall_timeout: Duration::from_secs(1),
        retry: RetryPolicy::default(),
    })
    .unwrap()
}

fn specs() -> Vec<keel::llm::ToolSpec> {
    keel::tools::ToolSet::new(true, keel::tools::mcp::Hub::default()).specs()
}

/// A history of `messages` messages shaped like the long session's.
fn history(messages: usize) -> History {
    (0..messages)
        .map(|index| {
            if index % 2 == 0 {
                Message::assistant(vec![
                    ContentBlock::Text {
                        text: format!("Round {index}: checking the notes again."),
                    },
                    ContentBlock::ToolUse {
                        id: format!("toolu_{index}"),
                        name: "read_file".into(),
                        input: json!({"path": "notes.txt"}),
                    },
                ])
            } else {
                Message {
                    role: Role::User,
                    content: vec![ContentBlock::ToolResult {
                        tool_use_id: format!("toolu_{}", index - 1),
                        content: "1\tremember the plan".into(),
                        is_error: false,
                    }],
                }
            }
        })
        .collect()
}

/// Building and serialising one request body: the part of a round that grows with the history.
fn request_body(c: &mut Criterion) {
    let client = client();
    let specs = specs();
    let mut group = c.benchmark_group("request_body");
    for messages in [20, 2_000, 20_000] {
        let history = history(messages);
        let request = ChatRequest {
            system: "system",
            messages: &history,
            tools: &specs,
            max_tokens: 8192,
            thinking_budget: None,
        };
        let size = client.request_bytes(&request).unwrap().len();
        group.throughput(Throughput::Bytes(size as u64));
        group.bench_with_input(BenchmarkId::from_parameter(messages), &request, |b, request| {
            b.iter(|| client.request_bytes(request).unwrap().len());
        });
    }
    group.finish();
}

fn long_session(c: &mut Criterion) {
    request_body(c);
    report_long_session(rounds());
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(5));
    targets = long_session
}
criterion_main!(benches);
