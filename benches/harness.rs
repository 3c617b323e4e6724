#![allow(clippy::unwrap_used, clippy::expect_used)]
//! What keel itself costs around the model: startup, time per round, peak memory, request size.
//!
//! A loopback server answers a ten-step todo task (32 requests) instantly and notes when each
//! request arrived and each answer was sent; keel's time in a round is the gap between an answer
//! and the next request, less the time its tools ran.

mod support;

use criterion::{Criterion, criterion_group, criterion_main};
use keel::agent::{self, AgentConfig, AgentEvent, ApprovalMode, Command};
use keel::runtime::Workspace;
use keel::tools::Tools;
use std::process::{Command as Process, Stdio};
use std::time::{Duration, Instant};
use support::fake_llm;
use support::loopback::{Exchange, Loopback, provider};
use support::peak_rss;

/// Runs the ten-step task in-process; returns keel's time in each round.
async fn ten_step_rounds(server: &Loopback) -> Vec<Duration> {
    let dir = tempfile::tempdir().unwrap();
    let provider = provider(&server.base_url);
    let config = AgentConfig {
        system_prompt: keel::prompt::system_prompt(AgentConfig::default().board),
        approval: ApprovalMode::Auto,
        ..AgentConfig::default()
    };
    keel::runtime::supervisor::set_program(env!("CARGO_BIN_EXE_keel"));
    let tools = Tools::new(Workspace::new(dir.path()).unwrap());
    let mut handle = agent::spawn(config, Some(provider), tools);
    server.take();
    handle.commands.send(Command::Submit("Do the ten steps.".into())).unwrap();
    let mut tool_spans = Vec::new();
    let mut started = None;
    while let Some(event) = handle.events.recv().await {
        match event {
            AgentEvent::ToolStart { .. } => started = Some(Instant::now()),
            AgentEvent::ToolEnd { .. } => {
                if let Some(start) = started.take() {
                    tool_spans.push((start, Instant::now()));
                }
            }
            AgentEvent::Result { done, total, .. } => {
                assert_eq!((done, total), (10, 10));
                break;
            }
            _ => {}
        }
    }
    let _ = handle.commands.send(Command::Quit);
    let _ = handle.task.await;
    round_overheads(&server.take(), &tool_spans)
}

/// keel's time between each answer and the next request, tool time taken out.
fn round_overheads(exchanges: &[Exchange], tools: &[(Instant, Instant)]) -> Vec<Duration> {
    exchanges
        .windows(2)
        .map(|pair| {
            let (from, to) = (pair[0].answer_sent, pair[1].request_arrived);
            let in_tools: Duration = tools
                .iter()
                .filter(|(start, end)| *start >= from && *end <= to)
                .map(|(start, end)| *end - *start)
                .sum();
            (to - from).saturating_sub(in_tools)
        })
        .collect()
}

fn median(mut values: Vec<Duration>) -> Duration {
    values.sort();
    values.get(values.len() / 2).copied().unwrap_or_default()
}

fn harness(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(Loopback::start(fake_llm::ten_step_task()));

    // The median of one run's rounds is the figure; criterion repeats runs.
    c.bench_function("round_overhead_median_ten_step_task", |b| {
        b.iter_custom(|runs| {
            let mut total = Duration::ZERO;
            for _ in 0..runs {
                total += median(runtime.block_on(ten_step_rounds(&server)));
            }
            total
        });
    });

    c.bench_function("startup_keel_version", |b| {
        b.iter(|| {
            let status = Process::new(env!("CARGO_BIN_EXE_keel"))
                .arg("--version")
                .stdout(Stdio::null())
                .status()
                .unwrap();
            assert!(status.success());
        });
    });

    report_peak_rss_and_request_size(&runtime, &server);
}

/// Runs `keel -p` on the ten-step task as a process and prints its peak RSS, and what the
/// requests of that task weigh.
fn report_peak_rss_and_request_size(runtime: &tokio::runtime::Runtime, server: &Loopback) {
    let dir = tempfile::tempdir().unwrap();
    server.take();
    server.bodies.lock().unwrap().clear();
    let run =
        peak_rss::keel_headless(runtime, &server.base_url, dir.path(), "Do the ten steps.", &[]);
    assert!(run.status.success());
    println!("peak RSS of `keel -p` on the ten-step task: {}", peak_rss::describe(run.peak_mib));

    let exchanges = server.take();
    let sizes: Vec<usize> = exchanges.iter().map(|exchange| exchange.request_bytes).collect();
    let total: usize = sizes.iter().sum();
    let bodies = server.bodies.lock().unwrap();
    let tools_bytes = bodies.first().map_or(0, |body| body["tools"].to_string().len());
    let system_bytes = bodies.first().map_or(0, |body| body["system"].to_string().len());
    println!(
        "requests: {} — {} bytes in all; first {} bytes, last {} bytes; per request the tool schemas \
         cost {} bytes and the system prompt {} bytes; the reminder costs {} bytes when it is sent",
        sizes.len(),
        total,
        sizes.first().copied().unwrap_or_default(),
        sizes.last().copied().unwrap_or_default(),
        tools_bytes,
        system_bytes,
        serde_json::json!({"type": "text", "text": keel::agent::DEFAULT_NAG_MESSAGE})
            .to_string()
            .len()
            + 1,
    );
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10).measurement_time(Duration::from_secs(10));
    targets = harness
}
criterion_main!(benches);
