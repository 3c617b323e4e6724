//! Long sessions with `keel -p`, against a loopback server with a finite context window that
//! refuses what does not fit as a real server words it (docs/architecture.md, DESIGN §8): a task
//! whose tool output is many times the window finishes, every request within the window, the
//! original request and the current board in every request once keel has compacted, no step
//! done twice — with the window configured, and learned from the server's own refusal. And a
//! model that keeps no plan but the board keel renders back to it (`llm::follower`) finishes
//! twenty steps at three times the window without planning again.
//!
//! The model that reads only the board is in `following`; sessions resumed after a compaction, and
//! the strict server that checks what they send, in `resumed`.

mod following;
mod resumed;

use crate::support::{bin, llm};
use bin::{json_lines, keel, last_result, output_within, text};
use llm::window::{self, Switches, TooLong};
use llm::{FakeLlm, board};
use serde_json::Value;
use std::collections::HashSet;
use std::path::Path;

/// The window of the measure: 24,000 tokens.
const WINDOW: usize = 24_000;
const PROMPT: &str = "Work through the twenty steps on the board.";
/// The task: 20 steps, each printing 12 KB (240 KB of tool output in all).
const STEPS: usize = 20;
const OUTPUT_BYTES: usize = 12_000;

/// One run of `keel -p` over `protocol` (`anthropic` or `openai`).
struct Run {
    output: std::process::Output,
    events: Vec<Value>,
    bodies: Vec<Vec<u8>>,
}

fn command(
    home: &Path,
    work: &Path,
    protocol: &str,
    server: &FakeLlm,
    args: &[&str],
) -> std::process::Command {
    let mut command = keel(home);
    command.args(["--output-format", "json", "--workdir"]).arg(work).args(args);
    match protocol {
        "anthropic" => command
            .env("ANTHROPIC_API_KEY", "test-key")
            .env("ANTHROPIC_BASE_URL", server.anthropic_base()),
        _ => command.env("OPENAI_API_KEY", "test-key").env("OPENAI_BASE_URL", server.openai_base()),
    };
    command
}

/// A workspace with the task's `big.txt`.
fn workspace(output_bytes: usize) -> tempfile::TempDir {
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("big.txt"), window::big_file(output_bytes)).unwrap();
    work
}

async fn run(server: &FakeLlm, protocol: &str, (home, work): (&Path, &Path), args: &[&str]) -> Run {
    let seen = server.raw_bodies().await.len();
    let mut command = command(home, work, protocol, server, args);
    let output = output_within(&mut command, "the long task");
    let events = json_lines(&output);
    let bodies = server.raw_bodies().await.split_off(seen);
    Run { output, events, bodies }
}

fn parse(body: &[u8]) -> Value {
    serde_json::from_slice(body).unwrap()
}

/// The board the fake's `board(done, STEPS)` renders to, as keel's todo tool renders it.
fn rendered_board(done: usize) -> String {
    let mut board_state = keel::board::Board::default();
    board_state.update(&board(done, STEPS)).unwrap()
}

/// How many steps the board showed done when `body` was sent: the newest board update before it.
fn done_before(body: &[u8]) -> usize {
    // Step 2k is the board update that completes step k; the plan is step 0.
    let next = window::step_by_id(body);
    next.saturating_sub(1) / 2
}

/// Whether a request's history was compacted: a stub, or keel's summary note, is in it.
fn compacted(body: &[u8]) -> bool {
    let text = String::from_utf8_lossy(body);
    text.contains("elided") || text.contains("keel compacted the conversation")
}

/// The request's text as the model reads it (JSON strings unescaped).
fn words(body: &[u8]) -> String {
    let body = parse(body);
    let mut out = String::new();
    collect_strings(&body["messages"], &mut out);
    out
}

fn collect_strings(value: &Value, out: &mut String) {
    match value {
        Value::String(text) => {
            out.push_str(text);
            out.push('\n');
        }
        Value::Array(items) => items.iter().for_each(|item| collect_strings(item, out)),
        Value::Object(fields) => fields.values().for_each(|item| collect_strings(item, out)),
        _ => {}
    }
}

/// The checks every long run must pass: success, each step done once, and from the first
/// compaction on the original request and the current board in every request.
fn assert_finished_anchored(run: &Run, work: &Path, what: &str) {
    assert!(run.output.status.success(), "{what}: {}", text(&run.output.stderr));
    let result = last_result(&run.events);
    assert_eq!((result["done"].as_u64(), result["total"].as_u64()), (Some(20), Some(20)), "{what}");
    let log = std::fs::read_to_string(work.join("progress.log")).unwrap();
    let expected: String = (1..=STEPS).map(|k| format!("step {k}\n")).collect();
    assert_eq!(log, expected, "{what}: every step once, in order");
    let first = run.bodies.iter().position(|body| compacted(body)).expect("a compaction");
    for body in &run.bodies[first..] {
        if window::is_summary_request(&parse(body)) {
            continue;
        }
        let words = words(body);
        assert!(words.contains(PROMPT), "{what}: the request is in every request");
        let board = rendered_board(done_before(body));
        assert!(words.contains(&board), "{what}: the current board in every request:\n{board}");
    }
}

fn compactions(run: &Run) -> Vec<&Value> {
    run.events.iter().filter(|event| event["type"] == "compaction").collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_task_many_times_a_configured_window_finishes_within_it() {
    let window_arg = WINDOW.to_string();
    for protocol in ["anthropic", "openai"] {
        let words = if protocol == "anthropic" { TooLong::Anthropic } else { TooLong::OpenAi };
        let server =
            FakeLlm::start_with(window::long_task(STEPS, 1500), Switches::window(WINDOW, words))
                .await;
        let (home, work) = (tempfile::tempdir().unwrap(), workspace(OUTPUT_BYTES));
        let args = ["-p", PROMPT, "--context-window", window_arg.as_str()];
        let run = run(&server, protocol, (home.path(), work.path()), &args).await;
        assert_finished_anchored(&run, work.path(), protocol);
        let limit = WINDOW * window::BYTES_PER_TOKEN;
        let sizes: Vec<usize> = run.bodies.iter().map(Vec::len).collect();
        assert!(
            sizes.iter().all(|size| *size <= limit),
            "{protocol}: every request within the window: {sizes:?}"
        );
        let events = compactions(&run);
        assert!(
            events.iter().any(|event| event["summarised"].as_u64() > Some(0)),
            "{protocol}: {events:?}"
        );
        let summaries =
            run.bodies.iter().filter(|body| window::is_summary_request(&parse(body))).count();
        assert_eq!(summaries, events.iter().filter(|e| e["summarised"].as_u64() > Some(0)).count());
        eprintln!(
            "{protocol}: {} requests ({summaries} summaries), {} bytes in all, the largest {}",
            sizes.len(),
            sizes.iter().sum::<usize>(),
            sizes.iter().max().unwrap()
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn with_no_window_configured_keel_learns_it_from_each_servers_refusal() {
    let cases = std::iter::once(("anthropic", TooLong::Anthropic))
        .chain(TooLong::OPENAI_COMPATIBLE.into_iter().map(|words| ("openai", words)));
    for (protocol, words) in cases {
        let what = format!("{protocol} refusing as {words:?}");
        let server =
            FakeLlm::start_with(window::long_task(STEPS, 600), Switches::window(WINDOW, words))
                .await;
        let (home, work) = (tempfile::tempdir().unwrap(), workspace(OUTPUT_BYTES));
        let run = run(&server, protocol, (home.path(), work.path()), &["-p", PROMPT]).await;
        assert_finished_anchored(&run, work.path(), &what);
        let limit = WINDOW * window::BYTES_PER_TOKEN;
        let refused: Vec<&Vec<u8>> = run.bodies.iter().filter(|body| body.len() > limit).collect();
        assert!(!refused.is_empty(), "{what}: the server had to say so");
        assert!(refused.len() <= 3, "{what}: {} refusals", refused.len());
        eprintln!(
            "{what}: {} refusals, {} requests, {} compactions",
            refused.len(),
            run.bodies.len(),
            compactions(&run).len()
        );
        let last_refused = run.bodies.iter().rposition(|body| body.len() > limit).unwrap();
        assert!(run.bodies[last_refused + 1..].iter().all(|body| body.len() <= limit), "{what}");
        let distinct: HashSet<&Vec<u8>> = run.bodies.iter().collect();
        assert_eq!(distinct.len(), run.bodies.len(), "{what}: no request sent twice unchanged");
        let events = compactions(&run);
        assert!(events.iter().any(|event| event["trigger"] == "refused"), "{what}: {events:?}");
        if !matches!(words, TooLong::Ollama) {
            // The limit it stated is the window keel works with from then on.
            assert!(events.iter().any(|event| event["window"] == WINDOW), "{what}: {events:?}");
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn masking_alone_suffices_for_a_moderately_long_task() {
    let window_arg = WINDOW.to_string();
    for protocol in ["anthropic", "openai"] {
        let words = if protocol == "anthropic" { TooLong::Anthropic } else { TooLong::OpenAi };
        let server =
            FakeLlm::start_with(window::long_task(STEPS, 0), Switches::window(WINDOW, words)).await;
        let (home, work) = (tempfile::tempdir().unwrap(), workspace(8_000));
        let args = ["-p", PROMPT, "--context-window", window_arg.as_str()];
        let run = run(&server, protocol, (home.path(), work.path()), &args).await;
        assert_finished_anchored(&run, work.path(), protocol);
        assert!(
            run.bodies.iter().all(|body| !window::is_summary_request(&parse(body))),
            "{protocol}: no summary"
        );
        let events = compactions(&run);
        assert!(!events.is_empty(), "{protocol}: it had to compact");
        assert!(
            events
                .iter()
                .all(|event| event["summarised"] == 0 && event["masked"].as_u64() > Some(0))
        );
        assert!(run.bodies.iter().all(|body| body.len() <= WINDOW * window::BYTES_PER_TOKEN));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn when_nothing_fits_keel_says_what_to_raise_and_sends_nothing_twice() {
    for protocol in ["anthropic", "openai"] {
        let words = if protocol == "anthropic" { TooLong::Anthropic } else { TooLong::OpenAi };
        // The server's window holds less than the system prompt and the tools.
        let server =
            FakeLlm::start_with(window::long_task(2, 0), Switches::window(500, words)).await;
        let (home, work) = (tempfile::tempdir().unwrap(), workspace(100));
        let refused = run(&server, protocol, (home.path(), work.path()), &["-p", PROMPT]).await;
        // The window set leaves no room beside --max-tokens' 8192: nothing is sent at all.
        let small = ["-p", PROMPT, "--context-window", "9000"];
        let unsent = run(&server, protocol, (home.path(), work.path()), &small).await;
        assert!(unsent.bodies.is_empty(), "{protocol}: nothing can fit, nothing is sent");
        for (run, source) in [(&refused, "as the server stated it"), (&unsent, "--context-window")]
        {
            assert!(!run.output.status.success(), "{protocol}");
            let result = last_result(&run.events);
            assert_eq!(result["outcome"], "error", "{protocol}");
            let error = result["error"].as_str().unwrap();
            assert!(error.contains("does not fit in the model's context window"), "{error}");
            assert!(error.contains(source) && error.contains("Raise the window"), "{error}");
            assert!(error.contains("--max-tokens"), "{error}");
        }
        assert_eq!(refused.bodies.len(), 1, "{protocol}: the refused request is not sent again");
    }
}
