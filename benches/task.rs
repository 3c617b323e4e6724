#![allow(clippy::unwrap_used, clippy::expect_used)]
//! keel's own time on a whole `keel -p` task, as a process: the wall time of a five-round task
//! less the server's time (from each request's arrival to its answer's last byte), and the time
//! from starting the process to its first request. The task's tools are the board and the file
//! tools, which take microseconds; `bash` is left out because a command's time is the command's.
//!
//! `KEEL_BENCH_BASELINE=/path/to/an/older/keel cargo bench --bench task` measures that binary in
//! the same run and prints the ratios.

mod support;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use support::fake_llm::{self, Step};
use support::loopback::Loopback;

/// The five rounds: a plan, a write, a read, the board ticked off, the answer.
fn five_rounds() -> Vec<Step> {
    let board = |done: bool| {
        let status = if done { "completed" } else { "in_progress" };
        json!({"items": [{"id": "1", "text": "Write and check notes.txt", "status": status}]})
    };
    vec![
        Step { tools: vec![("todo".into(), board(false))], ..fake_llm::text("Planning.") },
        fake_llm::tool("write_file", json!({"path": "notes.txt", "content": "one\ntwo\n"})),
        fake_llm::tool("read_file", json!({"path": "notes.txt"})),
        fake_llm::tool("todo", board(true)),
        fake_llm::text("Done: notes.txt holds two lines."),
    ]
}

/// One run's figures.
struct Figures {
    own: Duration,
    to_first_request: Duration,
}

/// Runs `keel -p` from `binary` on the five-round task against `server`.
fn run_once(runtime: &tokio::runtime::Runtime, server: &Loopback, binary: &Path) -> Figures {
    let (home, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    server.take();
    let mut command = Command::new(binary);
    command
        .args(["-p", "Write notes.txt, then check it.", "--workdir"])
        .arg(work.path())
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join("config"))
        .env("XDG_STATE_HOME", home.path().join("state"))
        .env("ANTHROPIC_API_KEY", "bench")
        .env("ANTHROPIC_BASE_URL", &server.base_url)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let started = Instant::now();
    let mut child = command.spawn().unwrap();
    let status = runtime
        .block_on(async { tokio::task::spawn_blocking(move || child.wait()).await })
        .unwrap()
        .unwrap();
    let wall = started.elapsed();
    assert!(status.success(), "the task failed");
    let exchanges = server.take_when(five_rounds().len());
    let server_time: Duration =
        exchanges.iter().map(|exchange| exchange.answer_sent - exchange.request_arrived).sum();
    Figures {
        own: wall.saturating_sub(server_time),
        to_first_request: exchanges[0].request_arrived - started,
    }
}

fn median(mut values: Vec<Duration>) -> Duration {
    values.sort();
    values[values.len() / 2]
}

/// Medians over `runs` runs: (own time, start to first request).
fn medians(
    runtime: &tokio::runtime::Runtime,
    server: &Loopback,
    binary: &Path,
    runs: usize,
) -> (Duration, Duration) {
    let figures: Vec<Figures> = (0..runs).map(|_| run_once(runtime, server, binary)).collect();
    (
        median(figures.iter().map(|figures| figures.own).collect()),
        median(figures.iter().map(|figures| figures.to_first_request).collect()),
    )
}

fn task(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(Loopback::start(five_rounds()));
    let keel = PathBuf::from(env!("CARGO_BIN_EXE_keel"));

    c.bench_function("keel_p_five_rounds_own_time", |b| {
        b.iter_custom(|runs| (0..runs).map(|_| run_once(&runtime, &server, &keel).own).sum());
    });
    c.bench_function("keel_p_start_to_first_request", |b| {
        b.iter_custom(|runs| {
            (0..runs).map(|_| run_once(&runtime, &server, &keel).to_first_request).sum()
        });
    });

    if let Ok(baseline) = std::env::var("KEEL_BENCH_BASELINE") {
        const RUNS: usize = 41;
        let baseline = PathBuf::from(baseline);
        let (own, start) = medians(&runtime, &server, &keel, RUNS);
        let (base_own, base_start) = medians(&runtime, &server, &baseline, RUNS);
        let ratio = |before: Duration, after: Duration| before.as_secs_f64() / after.as_secs_f64();
        println!(
            "five-round task, medians of {RUNS} runs each, measured together:\n  \
             own time: {own:.2?} (baseline {base_own:.2?}: {:.2}x)\n  \
             start to first request: {start:.2?} (baseline {base_start:.2?}: {:.2}x)",
            ratio(base_own, own),
            ratio(base_start, start),
        );
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).measurement_time(Duration::from_secs(10));
    targets = task
}
criterion_main!(benches);
