#![allow(clippy::unwrap_used, clippy::expect_used)]
//! What the board costs, priced as the provider prices it: a realistic ten-step task (each step
//! reads a 6 KB file, writes 2 KB, and runs a command printing 2 KB) sent by the real agent to a
//! loopback server three ways — no board (`--no-todo`), the board kept with whole lists, and the
//! board kept with partial updates, both updated in the same answer as each step's command — and
//! the bytes, tokens and dollars every request carried.
//!
//! Dollars are at list prices with the prompt cache as keel marks it (a breakpoint after the
//! tools and system prompt, one on the newest message): what a request shares with the one
//! before is a cache read (×0.1 of input), the rest a cache write (×1.25), and the model's
//! answer is output (×5). Tokens are estimated at four bytes each.
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
use std::path::Path;
use std::time::Duration;
use support::fake_llm::{self, Step};
use support::loopback::Loopback;

/// Steps of the task.
const STEPS: usize = 10;
/// What each step reads, writes and prints, in bytes.
const READ_BYTES: usize = 6 * 1024;
const WRITE_BYTES: usize = 2 * 1024;
/// The usual rough figure for English text and JSON.
const BYTES_PER_TOKEN: f64 = 4.0;
/// List prices, dollars per million tokens (Claude Sonnet): input, and the multipliers keel's
/// cache marks bring: writes ×1.25, reads ×0.1, output ×5.
const INPUT_PER_MTOK: f64 = 3.0;
const CACHE_WRITE: f64 = 1.25;
const CACHE_READ: f64 = 0.1;
const OUTPUT: f64 = 5.0;
/// The closing answer, the only output no later request carries.
const CLOSING: &str = "All 10 steps are done.";

/// How the run keeps its board.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Board {
    Off,
    WholeLists,
    Partial,
}

/// The board's items as a model writes them: a step worth naming. (`activeForm` is optional
/// and left out in every run alike.)
fn item(k: usize, status: &str) -> Value {
    json!({"id": k.to_string(), "text": format!("Update module_{k}.rs to the new API and check it"), "status": status})
}

/// The whole list once `done` steps are completed.
fn whole_list(done: usize) -> Value {
    let items: Vec<Value> = (1..=STEPS)
        .map(|k| {
            let status = match k {
                k if k <= done => "completed",
                k if k == done + 1 => "in_progress",
                _ => "pending",
            };
            item(k, status)
        })
        .collect();
    json!({ "items": items })
}

/// The changes once step `k` is done: it is completed, the next one starts.
fn partial(k: usize) -> Value {
    let mut entries = vec![json!({"id": k.to_string(), "status": "completed"})];
    if k < STEPS {
        entries.push(json!({"id": (k + 1).to_string(), "status": "in_progress"}));
    }
    json!({ "update": entries })
}

/// The task's script: per step a read (the first one with the plan beside it), a write, and the
/// command with the board's update beside it; then the closing answer.
fn task(board: Board) -> Vec<Step> {
    let mut steps = Vec::new();
    for k in 1..=STEPS {
        let mut read = fake_llm::tool("read_file", json!({"path": format!("module_{k}.rs")}));
        if k == 1 && board != Board::Off {
            // The plan goes with the first step's first call, as the system prompt asks.
            read.tools.insert(0, ("todo".into(), whole_list(0)));
        }
        steps.push(read);
        let content =
            format!("// step {k}\n{}", "let updated = call(new_api);\n".repeat(WRITE_BYTES / 30));
        steps.push(fake_llm::tool(
            "write_file",
            json!({"path": format!("out/step_{k}.rs"), "content": content}),
        ));
        let command = format!(
            "cat out/step_{k}.rs; grep -qx 'step {k}' progress.log 2>/dev/null || echo 'step {k}' >> progress.log"
        );
        let mut tools = vec![("bash".to_owned(), json!({ "command": command }))];
        match board {
            Board::Off => {}
            Board::WholeLists => tools.push(("todo".into(), whole_list(k))),
            Board::Partial => tools.push(("todo".into(), partial(k))),
        }
        steps.push(Step { tools, ..Step::default() });
    }
    steps.push(fake_llm::text(CLOSING));
    steps
}

/// The files each step reads.
fn workspace(dir: &Path) {
    for k in 1..=STEPS {
        let line = format!("pub fn old_api_{k}(value: u32) -> u32 {{ value + {k} }}\n");
        let body = line.repeat(READ_BYTES / line.len() + 1);
        std::fs::write(dir.join(format!("module_{k}.rs")), &body[..READ_BYTES]).unwrap();
    }
}

/// Runs the task through the real agent against the loopback server; returns the request
/// bodies and their sizes on the wire, and the board the run ended with.
async fn run(board: Board) -> (Vec<Value>, Vec<usize>, String) {
    let steps = task(board);
    let requests = steps.len();
    let server = Loopback::start(steps).await;
    let dir = tempfile::tempdir().unwrap();
    workspace(dir.path());
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
        system_prompt: keel::prompt::system_prompt(board != Board::Off),
        approval: ApprovalMode::Auto,
        board: board != Board::Off,
        ..AgentConfig::default()
    };
    keel::tools::supervisor::set_program(env!("CARGO_BIN_EXE_keel"));
    let tools = Tools::new(Workspace::new(dir.path()).unwrap());
    let mut handle = agent::spawn(config, Some(provider), tools);
    handle.commands.send(Command::Submit("Do the ten steps.".into())).unwrap();
    let mut last_board = String::new();
    while let Some(event) = handle.events.recv().await {
        match event {
            AgentEvent::Result { .. } => break,
            AgentEvent::Todo { items, .. } => {
                last_board = keel::board::Board::from_items(items).progress();
            }
            _ => {}
        }
    }
    let _ = handle.commands.send(Command::Quit);
    let _ = handle.task.await;
    let progress = std::fs::read_to_string(dir.path().join("progress.log")).unwrap_or_default();
    assert_eq!(progress.lines().count(), STEPS, "every step done once");
    // One request a step; waiting for the last one's record, which may land after keel is done.
    let sizes = server.take_when(requests).iter().map(|exchange| exchange.request_bytes).collect();
    let bodies = std::mem::take(&mut *server.bodies.lock().unwrap());
    (bodies, sizes, last_board)
}

/// What the board adds to a run, part by part.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    /// The `todo` tool's schema and description, in every request.
    Schema,
    /// The first plan: the model's call (its output) and the call and its answer carried after.
    PlanCall,
    PlanAnswer,
    /// Every later update: the calls and the answers.
    UpdateCalls,
    UpdateAnswers,
    Reminders,
}

const PARTS: [(Part, &str); 6] = [
    (Part::Schema, "schema"),
    (Part::PlanCall, "plan call"),
    (Part::PlanAnswer, "plan answer"),
    (Part::UpdateCalls, "update calls"),
    (Part::UpdateAnswers, "update answers"),
    (Part::Reminders, "reminders"),
];

/// Bytes as the cache prices them.
#[derive(Debug, Default, Clone, Copy)]
struct Priced {
    /// Input bytes the request shared with the one before (cache reads) and new (writes).
    read: usize,
    write: usize,
    /// What the model wrote.
    output: usize,
}

impl Priced {
    /// Dollars at list prices with the cache as keel marks it.
    fn dollars(&self) -> f64 {
        let tokens = |bytes: usize| bytes as f64 / BYTES_PER_TOKEN;
        let input = tokens(self.read) * CACHE_READ
            + tokens(self.write) * CACHE_WRITE
            + tokens(self.output) * OUTPUT;
        input * INPUT_PER_MTOK / 1e6
    }

    fn add(&mut self, cached: bool, bytes: usize) {
        if cached {
            self.read += bytes;
        } else {
            self.write += bytes;
        }
    }
}

/// Where one run's bytes went, and how the cache priced them.
#[derive(Debug, Default)]
struct Cost {
    requests: usize,
    total: usize,
    /// The system prompt's bytes in each request.
    system: usize,
    /// The whole run as the cache prices it.
    priced: Priced,
    /// What of it the board's parts took, in `PARTS` order.
    parts: [Priced; PARTS.len()],
}

impl Cost {
    fn part(&mut self, part: Part) -> &mut Priced {
        let index = PARTS.iter().position(|(p, _)| *p == part).unwrap_or_default();
        &mut self.parts[index]
    }

    /// The bytes of the board's parts in the requests sent.
    fn board(&self) -> usize {
        self.parts.iter().map(|part| part.read + part.write).sum()
    }

    fn dollars(&self) -> f64 {
        self.priced.dollars()
    }

    /// Dollars with no cache at all: every input byte at full price.
    fn dollars_uncached(&self) -> f64 {
        let tokens = |bytes: usize| bytes as f64 / BYTES_PER_TOKEN;
        (tokens(self.total) + tokens(self.priced.output) * OUTPUT) * INPUT_PER_MTOK / 1e6
    }
}

/// A message as the cache sees it: without the cache marks, which move every request.
fn unmarked(message: &Value) -> Value {
    let mut message = message.clone();
    for block in message["content"].as_array_mut().into_iter().flatten() {
        if let Some(block) = block.as_object_mut() {
            block.remove("cache_control");
        }
    }
    message
}

/// Counts what the board took of each request, and what the cache made of it.
fn cost(bodies: &[Value], sizes: &[usize]) -> Cost {
    let size = |value: &Value| value.to_string().len();
    let mut cost = Cost { requests: sizes.len(), total: sizes.iter().sum(), ..Cost::default() };
    let mut before: Vec<Value> = Vec::new();
    let mut plan: Option<String> = None;
    for (body, &bytes) in bodies.iter().zip(sizes) {
        let messages: Vec<Value> =
            body["messages"].as_array().into_iter().flatten().map(unmarked).collect();
        // The model's answer to the request before is the first message this one adds.
        if let Some(answer) = messages.get(before.len()).filter(|_| !before.is_empty()) {
            cost.priced.output += output(answer);
            for block in answer["content"].as_array().into_iter().flatten() {
                if block["type"] == "tool_use" && block["name"] == "todo" {
                    let id = block["id"].as_str().unwrap_or_default();
                    let part = if plan.get_or_insert_with(|| id.to_owned()) == id {
                        Part::PlanCall
                    } else {
                        Part::UpdateCalls
                    };
                    cost.part(part).output += "todo".len() + block["input"].to_string().len();
                }
            }
        }
        let shared = if before.is_empty() {
            0
        } else {
            messages.iter().zip(&before).take_while(|(a, b)| a == b).count()
        };
        let cached = if before.is_empty() {
            0
        } else {
            size(&body["tools"])
                + size(&body["system"])
                + messages[..shared].iter().map(size).sum::<usize>()
        };
        cost.system = size(&body["system"]);
        cost.priced.read += cached;
        cost.priced.write += bytes.saturating_sub(cached);
        let tools = body["tools"].as_array().cloned().unwrap_or_default();
        let schema = tools.iter().filter(|tool| tool["name"] == "todo").map(size).sum::<usize>();
        cost.part(Part::Schema).add(!before.is_empty(), schema);
        let mut todo_ids = HashSet::new();
        for (index, message) in messages.iter().enumerate() {
            let cached = index < shared;
            for block in message["content"].as_array().into_iter().flatten() {
                let is_plan = |id: &Value| plan.as_deref() == id.as_str();
                let part = match block["type"].as_str() {
                    Some("tool_use") if block["name"] == "todo" => {
                        todo_ids.insert(block["id"].as_str().unwrap_or_default().to_owned());
                        if is_plan(&block["id"]) { Part::PlanCall } else { Part::UpdateCalls }
                    }
                    Some("tool_result")
                        if todo_ids.contains(block["tool_use_id"].as_str().unwrap_or_default()) =>
                    {
                        if is_plan(&block["tool_use_id"]) {
                            Part::PlanAnswer
                        } else {
                            Part::UpdateAnswers
                        }
                    }
                    Some("text")
                        if block["text"].as_str().is_some_and(|t| t.starts_with("<reminder>")) =>
                    {
                        Part::Reminders
                    }
                    _ => continue,
                };
                cost.part(part).add(cached, size(block));
            }
        }
        before = messages;
    }
    cost.priced.output += CLOSING.len();
    cost
}

/// What the model wrote of an answer: its text, and each call's name and input (the call's id
/// and the blocks' framing come from the API, not the model).
fn output(answer: &Value) -> usize {
    answer["content"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|block| match block["type"].as_str() {
            Some("text") => block["text"].as_str().map_or(0, str::len),
            Some("tool_use") => {
                block["name"].as_str().map_or(0, str::len) + block["input"].to_string().len()
            }
            _ => block.to_string().len(),
        })
        .sum()
}

fn tokens(bytes: usize) -> usize {
    (bytes as f64 / BYTES_PER_TOKEN) as usize
}

fn report(name: &str, cost: &Cost, baseline: Option<&Cost>) {
    let versus = baseline.map_or(String::new(), |base| {
        format!(
            "; {:+.1} % bytes, {:+.2} % dollars with the cache, {:+.1} % without",
            percent(cost.total as f64, base.total as f64),
            percent(cost.dollars(), base.dollars()),
            percent(cost.dollars_uncached(), base.dollars_uncached()),
        )
    });
    println!(
        "{name}: {} requests, {} bytes (~{} tokens), cache reads ~{} / writes ~{} / output ~{} tokens, ${:.4} (${:.4} uncached){versus}",
        cost.requests,
        cost.total,
        tokens(cost.total),
        tokens(cost.priced.read),
        tokens(cost.priced.write),
        tokens(cost.priced.output),
        cost.dollars(),
        cost.dollars_uncached(),
    );
    println!("  system prompt: {} bytes a request", cost.system);
    let Some(base) = baseline.filter(|_| cost.board() > 0) else { return };
    println!("  of which the board: {} bytes sent", cost.board());
    let extra = cost.dollars() - base.dollars();
    // The board's paragraph of the system prompt: written once, then read with every request.
    let system = Priced {
        read: (cost.system - base.system) * (cost.requests - 1),
        write: cost.system - base.system,
        output: 0,
    };
    let mut named = system.dollars();
    println!(
        "    {:<15} {} B a request: ${:.4} ({:+.2} % of no board)",
        "system prompt",
        cost.system - base.system,
        system.dollars(),
        100.0 * system.dollars() / base.dollars()
    );
    for ((_, label), part) in PARTS.iter().zip(&cost.parts) {
        named += part.dollars();
        println!(
            "    {label:<15} read {:>7} B, written {:>6} B, output {:>5} B: ${:.4} ({:+.2} % of no board)",
            part.read,
            part.write,
            part.output,
            part.dollars(),
            100.0 * part.dollars() / base.dollars()
        );
    }
    println!(
        "    {:<15} ${:.4} ({:+.2} %): tool-call framing, the cache's split",
        "the rest",
        extra - named,
        100.0 * (extra - named) / base.dollars()
    );
}

fn percent(value: f64, base: f64) -> f64 {
    100.0 * (value - base) / base.max(f64::MIN_POSITIVE)
}

fn main() {
    // `cargo test --benches` runs this once too; the figures are counted, not timed.
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (bodies, sizes, _) = runtime.block_on(run(Board::Off));
    let off = cost(&bodies, &sizes);
    assert!(bodies.iter().all(|body| !body.to_string().contains("\"todo\"")));
    let (bodies, sizes, whole_end) = runtime.block_on(run(Board::WholeLists));
    let whole = cost(&bodies, &sizes);
    let (bodies, sizes, partial_end) = runtime.block_on(run(Board::Partial));
    let partial = cost(&bodies, &sizes);
    assert_eq!(whole_end, "(10/10 completed)", "the whole-list form still ends 10/10");
    assert_eq!(partial_end, "(10/10 completed)");
    report("board off (--no-todo)", &off, None);
    report("board on, whole lists alongside each step", &whole, Some(&off));
    report("board on, partial updates alongside each step", &partial, Some(&off));
}
