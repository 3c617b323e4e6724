#![allow(clippy::unwrap_used, clippy::expect_used)]
//! keel's own time on a whole `keel -p` task, as a process: the peers' five-round task (a plan,
//! `hello.py` written, run with `bash`, read back, the answer), undo on, as keel's users run it.
//! Own time is the wall time less the server's (from each request's arrival to its answer's last
//! byte) and less the tools' (as keel reports each call's time, to 0.1 ms: the command, and
//! `write_file`'s write and sync; a baseline from before that reports whole milliseconds, cut,
//! which counts up to a millisecond of each tool's time as its own); also the time from
//! starting the process to its first request, and the wall time itself. A second run streams
//! thinking before every answer, in 16-byte deltas.
//!
//! `KEEL_BENCH_BASELINE=/path/to/an/older/keel cargo bench --bench task` measures that binary in
//! the same run, the two taking turns, and prints the ratios, each one's peak RSS and the
//! connections each run opened. The sandbox's pair runs the task with the sandbox on beside
//! `--sandbox off`, for this build and the baseline ([`sandbox_pair`]). Peak RSS is read two ways: GNU time's, which counts every
//! process keel waited for (the command's `python3` among them), and keel's own (its `VmHWM`,
//! read from `/proc` while it runs).

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
/// How long the paced model of the sandbox's pair takes over each answer.
const MODEL_PACE: Duration = Duration::from_millis(100);
/// keel's arguments for the run without a sandbox.
const SANDBOX_OFF: [&str; 2] = ["--sandbox", "off"];
/// Runs of each binary that read keel's own peak memory, and how often it is read.
const OWN_PEAK_RUNS: usize = 5;
const HWM_POLL: Duration = Duration::from_micros(500);

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
    /// Own time with the tools' times cut to whole milliseconds, as older binaries report them.
    own_as_cut: Duration,
    wall: Duration,
    /// The tools' time as keel reports it.
    tools: Duration,
    to_first_request: Duration,
    peak_mib: Option<f64>,
    /// keel's own peak (`VmHWM`), as last read before it ended.
    own_peak_mib: Option<f64>,
    connections: usize,
}

/// Reads `pid`'s peak resident memory (`VmHWM`) until the process is gone; the last reading.
/// The peak only grows, so the last reading misses only what the last half millisecond added.
fn watch_own_peak(pid: u32) -> std::thread::JoinHandle<Option<f64>> {
    std::thread::spawn(move || {
        let mut last = None;
        while let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) {
            let Some(kib) = status
                .lines()
                .find_map(|line| line.strip_prefix("VmHWM:"))
                .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
            else {
                break;
            };
            last = Some(kib / 1024.0);
            std::thread::sleep(HWM_POLL);
        }
        last
    })
}

/// The tools' time as keel reports each call's on stderr: to 0.1 ms (`✓ exit 0 (101.4 ms)`,
/// `✓ done (1.9 ms)`); binaries before that report whole milliseconds, cut (`✓ done (1 ms)`).
/// Also the same cut to whole milliseconds, as those binaries report it.
fn tools_time(stderr: &str) -> (Duration, Duration) {
    let times: Vec<f64> = stderr
        .lines()
        .filter_map(|line| line.trim().strip_prefix("✓ "))
        .filter_map(|rest| rest.rsplit_once('(')?.1.strip_suffix(" ms)")?.parse::<f64>().ok())
        .collect();
    let millis = |total: f64| Duration::from_secs_f64(total / 1_000.0);
    (millis(times.iter().sum()), millis(times.iter().map(|time| time.trunc()).sum()))
}

/// How a run's memory is read; either way costs the run some time, so timed runs read none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Memory {
    Unread,
    /// Under GNU time.
    GnuTime,
    /// keel's own `VmHWM`, from `/proc`.
    Own,
}

/// Runs `keel -p` from `binary` on the task `server` plays, reading its memory as `memory` says.
fn run_once(
    runtime: &tokio::runtime::Runtime,
    server: &Loopback,
    binary: &Path,
    memory: Memory,
) -> Figures {
    run_with(runtime, server, binary, memory, &[])
}

/// [`run_once`] with `extra` arguments after keel's own.
fn run_with(
    runtime: &tokio::runtime::Runtime,
    server: &Loopback,
    binary: &Path,
    memory: Memory,
    extra: &[&str],
) -> Figures {
    let (home, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    server.take();
    server.take_connections();
    let mut measured = match memory {
        Memory::GnuTime => Measured::new(binary),
        Memory::Unread | Memory::Own => Measured::unmeasured(binary),
    };
    measured
        .command
        .args(["-p", "Write hello.py, run it, then check it.", "--workdir"])
        .arg(work.path())
        .args(extra)
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join("config"))
        .env("XDG_STATE_HOME", home.path().join("state"))
        .env("ANTHROPIC_API_KEY", "bench")
        .env("ANTHROPIC_BASE_URL", &server.base_url)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let started = Instant::now();
    let child = measured.spawn().unwrap();
    let own_peak = (memory == Memory::Own).then(|| watch_own_peak(child.id()));
    let output = runtime
        .block_on(async { tokio::task::spawn_blocking(move || child.wait_with_output()).await })
        .unwrap()
        .unwrap();
    let wall = started.elapsed();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "the task failed: {stderr}");
    assert!(stderr.contains("✓ exit 0"), "the command did not run: {stderr}");
    let exchanges = server.take_when(five_rounds(None).len());
    let tools = tools_time(&stderr);
    let server_time: Duration =
        exchanges.iter().map(|exchange| exchange.answer_sent - exchange.request_arrived).sum();
    Figures {
        own: wall.saturating_sub(server_time).saturating_sub(tools.0),
        own_as_cut: wall.saturating_sub(server_time).saturating_sub(tools.1),
        wall,
        tools: tools.0,
        to_first_request: exchanges[0].request_arrived - started,
        peak_mib: measured.peak_mib(),
        own_peak_mib: own_peak.and_then(|watch| watch.join().ok().flatten()),
        connections: server.take_connections(),
    }
}

fn median(mut values: Vec<Duration>) -> Duration {
    values.sort();
    values[values.len() / 2]
}

/// Medians of own time, of start to first request and of wall time.
fn medians(figures: &[Figures]) -> (Duration, Duration, Duration) {
    (
        median(figures.iter().map(|figures| figures.own).collect()),
        median(figures.iter().map(|figures| figures.to_first_request).collect()),
        median(figures.iter().map(|figures| figures.wall).collect()),
    )
}

/// Runs the new binary and the baseline in turn and prints the figures side by side.
fn compare(runtime: &tokio::runtime::Runtime, server: &Loopback, name: &str, keel: &Path) {
    let Ok(baseline) = std::env::var("KEEL_BENCH_BASELINE") else { return };
    let baseline = PathBuf::from(baseline);
    let (mut new, mut old) = (Vec::new(), Vec::new());
    for _ in 0..COMPARED_RUNS {
        new.push(run_once(runtime, server, keel, Memory::Unread));
        old.push(run_once(runtime, server, &baseline, Memory::Unread));
    }
    let (own, start, wall) = medians(&new);
    let own_as_cut = median(new.iter().map(|figures| figures.own_as_cut).collect());
    let (base_own, base_start, base_wall) = medians(&old);
    let new_rss = run_once(runtime, server, keel, Memory::GnuTime).peak_mib;
    let old_rss = run_once(runtime, server, &baseline, Memory::GnuTime).peak_mib;
    let (mut new_own, mut old_own) = (Vec::new(), Vec::new());
    for _ in 0..OWN_PEAK_RUNS {
        new_own.push(run_once(runtime, server, keel, Memory::Own));
        old_own.push(run_once(runtime, server, &baseline, Memory::Own));
    }
    let connections = new.iter().map(|figures| figures.connections).max().unwrap_or(0);
    let own_peak = |figures: &[Figures]| {
        let peak = figures.iter().filter_map(|figures| figures.own_peak_mib).reduce(f64::max);
        peak.map_or_else(|| "unread".to_owned(), |mib| format!("{mib:.1} MiB"))
    };
    let ratio = |before: Duration, after: Duration| before.as_secs_f64() / after.as_secs_f64();
    println!(
        "{name}, medians of {COMPARED_RUNS} runs each, taking turns:\n  \
         own time: {own:.2?} (baseline {base_own:.2?}: {:.2}x)\n  \
         own time, tool times cut to whole ms as older binaries report them: {own_as_cut:.2?} \
         ({:.2}x)\n  \
         start to first request: {start:.2?} (baseline {base_start:.2?}: {:.2}x)\n  \
         wall time, the command included: {wall:.2?} (baseline {base_wall:.2?}: {:.2}x)\n  \
         peak RSS, keel and the processes it waited for (GNU time): {} (baseline {})\n  \
         keel's own peak RSS, the highest of the runs: {} (baseline {})\n  \
         connections per run: at most {connections}",
        ratio(base_own, own),
        ratio(base_own, own_as_cut),
        ratio(base_start, start),
        ratio(base_wall, wall),
        describe(new_rss),
        describe(old_rss),
        own_peak(&new_own),
        own_peak(&old_own),
    );
}

/// The sandbox's cost on the task: the runs with the sandbox on (its default) beside the same
/// runs with `--sandbox off`, taking turns, for each binary measured; with a model that answers
/// at once, and with one that takes [`MODEL_PACE`] over each answer, as a real one takes longer,
/// so that the command runs in a session already started. Printed: the wall times' ratio, and
/// what the sandbox adds to the command's own time as keel reports it (its clock starts before
/// the supervisor does).
fn sandbox_pair(runtime: &tokio::runtime::Runtime, server: &Loopback, keel: &Path) {
    let mut binaries = vec![("this build", keel.to_path_buf())];
    if let Ok(baseline) = std::env::var("KEEL_BENCH_BASELINE") {
        binaries.push(("baseline", PathBuf::from(baseline)));
    }
    for pace in [Duration::ZERO, MODEL_PACE] {
        *server.pace.lock().unwrap() = pace;
        for (name, binary) in &binaries {
            let (mut on, mut off) = (Vec::new(), Vec::new());
            for _ in 0..COMPARED_RUNS {
                on.push(run_with(runtime, server, binary, Memory::Unread, &[]));
                off.push(run_with(runtime, server, binary, Memory::Unread, &SANDBOX_OFF));
            }
            let wall = |runs: &[Figures]| median(runs.iter().map(|run| run.wall).collect());
            let tools = |runs: &[Figures]| median(runs.iter().map(|run| run.tools).collect());
            let (wall_on, wall_off) = (wall(&on), wall(&off));
            println!(
                "sandbox on/off, {name}, the model taking {pace:?} an answer, medians of \
                 {COMPARED_RUNS} runs each, taking turns: wall {wall_on:.2?} on, {wall_off:.2?} \
                 off: {:.2}x; the tools' time {:.2?} on, {:.2?} off",
                wall_on.as_secs_f64() / wall_off.as_secs_f64(),
                tools(&on),
                tools(&off),
            );
        }
    }
    *server.pace.lock().unwrap() = Duration::ZERO;
}

fn task(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let keel = PathBuf::from(env!("CARGO_BIN_EXE_keel"));
    let thinking = THOUGHT.repeat(THINKING_BYTES / THOUGHT.len());
    for (name, thinking) in [("five_rounds", None), ("five_rounds_thinking", Some(&*thinking))] {
        let server = runtime.block_on(Loopback::start(five_rounds(thinking)));
        c.bench_function(&format!("keel_p_{name}_own_time"), |b| {
            b.iter_custom(|runs| {
                (0..runs).map(|_| run_once(&runtime, &server, &keel, Memory::Unread).own).sum()
            });
        });
        compare(&runtime, &server, name, &keel);
        if thinking.is_none() {
            sandbox_pair(&runtime, &server, &keel);
        }
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10).measurement_time(Duration::from_secs(5));
    targets = task
}
criterion_main!(benches);
