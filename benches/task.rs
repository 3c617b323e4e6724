#![allow(clippy::unwrap_used, clippy::expect_used)]
//! keel's own time on a whole `keel -p` task, as a process: the peers' five-round task (a plan,
//! `hello.py` written, run with `bash`, read back, the answer), undo on, as keel's users run it.
//! Own time is the wall time less the server's (from each request's arrival to its answer's last
//! byte) and less the command's (as keel reports it, in whole milliseconds); also the time from
//! starting the process to its first request. A second run streams thinking before every
//! answer, in 16-byte deltas.
//!
//! `KEEL_BENCH_BASELINE=/path/to/an/older/keel cargo bench --bench task` measures that binary in
//! the same run, the two taking turns, and prints the ratios, each one's peak RSS (with GNU
//! time) and the connections each run opened.

mod support;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};
use support::fake_llm::{self, Step};
use support::loopback::Loopback;
use support::peak_rss::{Measured, describe};

/// The program the task writes and runs.
const HELLO: &str = "print('hello, world')\n";
/// One delta of thinking: 16 bytes (the fake server streams thinking a word at a time).
const THOUGHT: &str = "weighing-it-up, ";
/// Thinking before each answer of the second run.
const THINKING_BYTES: usize = 16 * 1024;
/// Runs of each binary when a baseline is compared.
const COMPARED_RUNS: usize = 21;

/// The five rounds, each answer after `thinking` when given.
fn five_rounds(thinking: Option<&str>) -> Vec<Step> {
    let board = |done: bool| {
        let status = if done { "completed" } else { "in_progress" };
        json!({"items": [{"id": "1", "text": "Write and run hello.py", "status": status}]})
    };
    let steps = vec![
        Step { tools: vec![("todo".into(), board(false))], ..fake_llm::text("Planning.") },
        fake_llm::tool("write_file", json!({"path": "hello.py", "content": HELLO})),
        fake_llm::tool("bash", json!({"command": "python3 hello.py"})),
        fake_llm::tool("read_file", json!({"path": "hello.py"})),
        fake_llm::text("Done: hello.py prints hello, world."),
    ];
    match thinking {
        Some(thinking) => steps.into_iter().map(|step| step.thinking(thinking)).collect(),
        None => steps,
    }
}

/// One run's figures.
struct Figures {
    own: Duration,
    to_first_request: Duration,
    peak_mib: Option<f64>,
    connections: usize,
}

/// The command's time as keel reports it on stderr (`✓ exit 0 (12 ms)`).
fn command_time(stderr: &str) -> Duration {
    let millis: u64 = stderr
        .lines()
        .filter_map(|line| line.trim().strip_prefix("✓ exit "))
        .filter_map(|rest| rest.split_once('(')?.1.strip_suffix(" ms)")?.parse::<u64>().ok())
        .sum();
    Duration::from_millis(millis)
}

/// Runs `keel -p` from `binary` on the task `server` plays; under GNU time when `measure_rss`.
fn run_once(
    runtime: &tokio::runtime::Runtime,
    server: &Loopback,
    binary: &Path,
    measure_rss: bool,
) -> Figures {
    let (home, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    server.take();
    server.take_connections();
    let mut measured =
        if measure_rss { Measured::new(binary) } else { Measured::unmeasured(binary) };
    measured
        .command
        .args(["-p", "Write hello.py, run it, then check it.", "--workdir"])
        .arg(work.path())
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join("config"))
        .env("XDG_STATE_HOME", home.path().join("state"))
        .env("ANTHROPIC_API_KEY", "bench")
        .env("ANTHROPIC_BASE_URL", &server.base_url)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let started = Instant::now();
    let child = measured.spawn().unwrap();
    let output = runtime
        .block_on(async { tokio::task::spawn_blocking(move || child.wait_with_output()).await })
        .unwrap()
        .unwrap();
    let wall = started.elapsed();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "the task failed: {stderr}");
    assert!(stderr.contains("✓ exit 0"), "the command did not run: {stderr}");
    let exchanges = server.take_when(five_rounds(None).len());
    let server_time: Duration =
        exchanges.iter().map(|exchange| exchange.answer_sent - exchange.request_arrived).sum();
    Figures {
        own: wall.saturating_sub(server_time).saturating_sub(command_time(&stderr)),
        to_first_request: exchanges[0].request_arrived - started,
        peak_mib: measured.peak_mib(),
        connections: server.take_connections(),
    }
}

fn median(mut values: Vec<Duration>) -> Duration {
    values.sort();
    values[values.len() / 2]
}

/// Medians of own time and of start to first request.
fn medians(figures: &[Figures]) -> (Duration, Duration) {
    (
        median(figures.iter().map(|figures| figures.own).collect()),
        median(figures.iter().map(|figures| figures.to_first_request).collect()),
    )
}

/// Runs the new binary and the baseline in turn and prints the figures side by side.
fn compare(runtime: &tokio::runtime::Runtime, server: &Loopback, name: &str, keel: &Path) {
    let Ok(baseline) = std::env::var("KEEL_BENCH_BASELINE") else { return };
    let baseline = PathBuf::from(baseline);
    let (mut new, mut old) = (Vec::new(), Vec::new());
    for _ in 0..COMPARED_RUNS {
        new.push(run_once(runtime, server, keel, false));
        old.push(run_once(runtime, server, &baseline, false));
    }
    let (own, start) = medians(&new);
    let (base_own, base_start) = medians(&old);
    let new_rss = run_once(runtime, server, keel, true).peak_mib;
    let old_rss = run_once(runtime, server, &baseline, true).peak_mib;
    let connections = new.iter().map(|figures| figures.connections).max().unwrap_or(0);
    let ratio = |before: Duration, after: Duration| before.as_secs_f64() / after.as_secs_f64();
    println!(
        "{name}, medians of {COMPARED_RUNS} runs each, taking turns:\n  \
         own time: {own:.2?} (baseline {base_own:.2?}: {:.2}x)\n  \
         start to first request: {start:.2?} (baseline {base_start:.2?}: {:.2}x)\n  \
         peak RSS: {} (baseline {})\n  \
         connections per run: at most {connections}",
        ratio(base_own, own),
        ratio(base_start, start),
        describe(new_rss),
        describe(old_rss),
    );
}

fn task(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let keel = PathBuf::from(env!("CARGO_BIN_EXE_keel"));
    let thinking = THOUGHT.repeat(THINKING_BYTES / THOUGHT.len());
    for (name, thinking) in [("five_rounds", None), ("five_rounds_thinking", Some(&*thinking))] {
        let server = runtime.block_on(Loopback::start(five_rounds(thinking)));
        c.bench_function(&format!("keel_p_{name}_own_time"), |b| {
            b.iter_custom(|runs| {
                (0..runs).map(|_| run_once(&runtime, &server, &keel, false).own).sum()
            });
        });
        compare(&runtime, &server, name, &keel);
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10).measurement_time(Duration::from_secs(5));
    targets = task
}
criterion_main!(benches);
