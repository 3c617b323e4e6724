#![allow(clippy::unwrap_used, clippy::expect_used)]
//! What the board costs: the same scripted ten-step task sent by the real agent to a loopback
//! server with the board on and with `--no-todo`, and the bytes (and tokens, estimated at four
//! bytes each) every request carried — in all, and how much of it is the board: the tool's schema,
//! the model's `todo` calls carried again in every later request, keel's board answers, the
//! reminders.
//!
//! A scripted benchmark, not a timing one: the figures are counted, so they are the same on any
//! machine. `cargo bench --bench board_cost` prints them; benches/README.md reports them.

mod support;

use keel::agent::{self, AgentConfig, AgentEvent, ApprovalMode, Command};
use keel::llm::anthropic::AnthropicClient;
use keel::llm::retry::RetryPolicy;
use keel::llm::{HttpSettings, Provider};
use keel::tools::{Tools, Workspace};
use serde_json::{Value, json};
use std::collections::HashSet;
use std::time::Duration;
use support::fake_llm::{self, Step};
use support::loopback::Loopback;

const SYSTEM_PROMPT: &str = include_str!("../assets/system_prompt.md");
/// Steps of the task.
const STEPS: usize = 10;
/// The usual rough figure for English text and JSON.
const BYTES_PER_TOKEN: usize = 4;

/// The ten steps without a board: for each, a file write and a command, then a closing answer.
fn ten_steps_without_board() -> Vec<Step> {
    fake_llm::ten_step_task()
        .into_iter()
        .filter(|step| !step.tools.iter().any(|(name, _)| name == "todo"))
        .collect()
}

/// The ten steps with the board updated in the same answer as each step's command, as models
/// that call tools in parallel do.
fn ten_steps_board_alongside() -> Vec<Step> {
    let mut steps = vec![Step {
        text: "Planning.".into(),
        tools: vec![("todo".into(), fake_llm::board(0, STEPS))],
        ..Step::default()
    }];
    for k in 1..=STEPS {
        steps.push(fake_llm::tool(
            "write_file",
            json!({"path": format!("step_{k}.txt"), "content": format!("step {k}\n")}),
        ));
        let command = format!(
            "grep -qx 'step {k}' progress.log 2>/dev/null || cat step_{k}.txt >> progress.log"
        );
        steps.push(Step {
            text: String::new(),
            tools: vec![
                ("bash".into(), json!({ "command": command })),
                ("todo".into(), fake_llm::board(k, STEPS)),
            ],
            ..Step::default()
        });
    }
    steps.push(fake_llm::text("All 10 steps are done."));
    steps
}

/// Where one run's bytes went.
#[derive(Debug, Default)]
struct Cost {
    requests: usize,
    total: usize,
    schema: usize,
    calls: usize,
    answers: usize,
    reminders: usize,
}

impl Cost {
    fn board(&self) -> usize {
        self.schema + self.calls + self.answers + self.reminders
    }
}

/// Runs `steps` through the real agent against the loopback server; returns the request bodies.
async fn run(steps: Vec<Step>, board: bool) -> (Vec<Value>, Vec<usize>) {
    let server = Loopback::start(steps).await;
    let dir = tempfile::tempdir().unwrap();
    let settings = HttpSettings {
        base_url: server.base_url.clone(),
        api_key: "bench".into(),
        model: "bench".into(),
        connect_timeout: Duration::from_secs(5),
        idle_timeout: Duration::from_secs(30),
        stall_timeout: Duration::from_secs(30),
        retry: RetryPolicy::default(),
    };
    let provider = Provider::Anthropic(AnthropicClient::new(settings).unwrap());
    let config = AgentConfig {
        system_prompt: SYSTEM_PROMPT.to_owned(),
        approval: ApprovalMode::Auto,
        board,
        ..AgentConfig::default()
    };
    keel::tools::supervisor::set_program(env!("CARGO_BIN_EXE_keel"));
    let tools = Tools::new(Workspace::new(dir.path()).unwrap());
    let mut handle = agent::spawn(config, Some(provider), tools);
    handle.commands.send(Command::Submit("Do the ten steps.".into())).unwrap();
    while let Some(event) = handle.events.recv().await {
        if matches!(event, AgentEvent::Result { .. }) {
            break;
        }
    }
    let _ = handle.commands.send(Command::Quit);
    let _ = handle.task.await;
    let progress = std::fs::read_to_string(dir.path().join("progress.log")).unwrap_or_default();
    assert_eq!(progress.lines().count(), STEPS, "every step done once");
    let sizes = server.take().iter().map(|exchange| exchange.request_bytes).collect();
    let bodies = std::mem::take(&mut *server.bodies.lock().unwrap());
    (bodies, sizes)
}

/// Counts what the board took of each request.
fn cost(bodies: &[Value], sizes: &[usize]) -> Cost {
    let size = |value: &Value| value.to_string().len();
    let mut cost = Cost { requests: sizes.len(), total: sizes.iter().sum(), ..Cost::default() };
    for body in bodies {
        let tools = body["tools"].as_array().cloned().unwrap_or_default();
        cost.schema += tools.iter().filter(|tool| tool["name"] == "todo").map(size).sum::<usize>();
        let mut todo_ids = HashSet::new();
        for message in body["messages"].as_array().into_iter().flatten() {
            for block in message["content"].as_array().into_iter().flatten() {
                match block["type"].as_str() {
                    Some("tool_use") if block["name"] == "todo" => {
                        todo_ids.insert(block["id"].as_str().unwrap_or_default().to_owned());
                        cost.calls += size(block);
                    }
                    Some("tool_result")
                        if todo_ids.contains(block["tool_use_id"].as_str().unwrap_or_default()) =>
                    {
                        cost.answers += size(block);
                    }
                    Some("text")
                        if block["text"].as_str().is_some_and(|t| t.starts_with("<reminder>")) =>
                    {
                        cost.reminders += size(block);
                    }
                    _ => {}
                }
            }
        }
    }
    cost
}

fn tokens(bytes: usize) -> usize {
    bytes / BYTES_PER_TOKEN
}

fn report(name: &str, cost: &Cost, baseline: Option<&Cost>) {
    let versus = baseline.map_or(String::new(), |base| {
        let extra = cost.total.saturating_sub(base.total);
        format!(
            " — {extra} bytes (~{} tokens) more than without the board, +{:.0} %",
            tokens(extra),
            100.0 * extra as f64 / base.total.max(1) as f64
        )
    });
    println!(
        "{name}: {} requests, {} bytes (~{} tokens){versus}",
        cost.requests,
        cost.total,
        tokens(cost.total)
    );
    if cost.board() > 0 {
        println!(
            "  of which the board: {} bytes — schema {}, the model's todo calls {}, board answers {}, reminders {}",
            cost.board(),
            cost.schema,
            cost.calls,
            cost.answers,
            cost.reminders
        );
    }
}

fn main() {
    // `cargo test --benches` runs this once too; the figures are counted, not timed.
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (bodies, sizes) = runtime.block_on(run(ten_steps_without_board(), false));
    let off = cost(&bodies, &sizes);
    assert!(bodies.iter().all(|body| !body.to_string().contains("\"todo\"")));
    let (bodies, sizes) = runtime.block_on(run(fake_llm::ten_step_task(), true));
    let on = cost(&bodies, &sizes);
    let (bodies, sizes) = runtime.block_on(run(ten_steps_board_alongside(), true));
    let alongside = cost(&bodies, &sizes);
    report("board off (--no-todo)", &off, None);
    report("board on, updated in its own round", &on, Some(&off));
    report("board on, updated alongside each step", &alongside, Some(&off));
}
