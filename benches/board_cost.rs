#![allow(clippy::unwrap_used, clippy::expect_used)]
//! What the board costs, priced as the provider prices it: a realistic ten-step task (each step
//! reads a 6 KB file, writes 2 KB, and runs a command printing 2 KB) sent by the real agent to a
//! loopback server three ways — no board (`--no-todo`: no `todo` tool and no board paragraph in
//! the system prompt), the board kept with whole lists, and the board kept with partial updates,
//! both updated in the same answer as each step's command — and the bytes, tokens and dollars
//! every request carried, with what each part of the board took (`support::cache_cost`).
//!
//! Dollars are at list prices with the prompt cache as the `cache_control` marks in each
//! request body set it (keel marks the system prompt, the newest message and the newest of the
//! request before): what an earlier request wrote and a breakpoint reaches is a cache read (×0.1
//! of input), the rest up to the last breakpoint a cache write (×1.25), what follows it input at
//! full price, and the model's answer is output (×5). Tokens are estimated at four bytes each.
//!
//! A scripted benchmark, not a timing one: the figures are counted, so they are the same on any
//! machine. `cargo bench --bench board_cost` prints them; benches/README.md reports them.

mod support;

use keel::agent::{self, AgentConfig, AgentEvent, ApprovalMode, Command};
use keel::llm::anthropic::AnthropicClient;
use keel::llm::retry::RetryPolicy;
use keel::llm::{HttpSettings, Provider};
use keel::runtime::Workspace;
use keel::tools::Tools;
use serde_json::{Value, json};
use std::path::Path;
use std::time::Duration;
use support::cache_cost::{Breakpoints, Cost, LABELS, Priced, cost, tokens, with_breakpoints};
use support::fake_llm::{self, Step};
use support::loopback::Loopback;

/// Steps of the task.
const STEPS: usize = 10;
/// What each step reads, writes and prints, in bytes.
const READ_BYTES: usize = 6 * 1024;
const WRITE_BYTES: usize = 2 * 1024;
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
    keel::runtime::supervisor::set_program(env!("CARGO_BIN_EXE_keel"));
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
        "{name}: {} requests, {} bytes (~{} tokens), cache reads ~{} / writes ~{} / full-price input ~{} / output ~{} tokens, ${:.4} (${:.4} uncached){versus}",
        cost.requests,
        cost.total,
        tokens(cost.total),
        tokens(cost.priced.read),
        tokens(cost.priced.write),
        tokens(cost.priced.input),
        tokens(cost.priced.output),
        cost.dollars(),
        cost.dollars_uncached(),
    );
    println!("  system prompt: {} bytes a request", cost.system);
    let Some(base) = baseline.filter(|_| cost.board() > 0) else { return };
    let paragraph = cost.system.saturating_sub(base.system);
    println!("  of which the board: {} bytes sent", cost.board() + paragraph * cost.requests);
    let extra = cost.dollars() - base.dollars();
    // The board's paragraph of the system prompt: written once, then read with every request.
    let system =
        Priced { read: paragraph * (cost.requests - 1), write: paragraph, input: 0, output: 0 };
    let mut named = system.dollars();
    println!(
        "    {:<15} {} B a request: ${:.4} ({:+.2} % of no board)",
        "system prompt",
        paragraph,
        system.dollars(),
        100.0 * system.dollars() / base.dollars()
    );
    for (label, part) in LABELS.iter().zip(&cost.parts) {
        named += part.dollars();
        println!(
            "    {label:<15} read {:>7} B, written {:>6} B, full price {:>4} B, output {:>5} B: ${:.4} ({:+.2} % of no board)",
            part.read,
            part.write,
            part.input,
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

/// keel's breakpoints, and other places they could sit: the run priced with each.
const PLACEMENTS: [(&str, Breakpoints); 4] = [
    (
        "keel's: the system prompt, the newest message, the newest of the request before",
        Breakpoints { system: true, from_end: &[1, 3] },
    ),
    ("the system prompt and the newest message", Breakpoints { system: true, from_end: &[1] }),
    ("the newest message only", Breakpoints { system: false, from_end: &[1] }),
    ("the system prompt only", Breakpoints { system: true, from_end: &[] }),
];

/// The no-board and partial-update runs priced with each placement of the breakpoints.
fn placements(off: (&[Value], &[usize]), partial: (&[Value], &[usize])) {
    println!("where the cache breakpoints sit (no board / partial updates):");
    for (name, at) in PLACEMENTS {
        let price = |(bodies, sizes): (&[Value], &[usize])| {
            let moved = with_breakpoints(bodies, at);
            // The wire's bytes, give or take the marks moved.
            let sizes: Vec<usize> = (bodies.iter().zip(&moved).zip(sizes))
                .map(|((sent, moved), size)| {
                    size + moved.to_string().len() - sent.to_string().len()
                })
                .collect();
            cost(&moved, &sizes, CLOSING.len())
        };
        let (off, partial) = (price(off), price(partial));
        println!(
            "  {name}: ${:.4} / ${:.4} ({:+.2} %)",
            off.dollars(),
            partial.dollars(),
            percent(partial.dollars(), off.dollars())
        );
    }
}

fn percent(value: f64, base: f64) -> f64 {
    100.0 * (value - base) / base.max(f64::MIN_POSITIVE)
}

fn main() {
    // `cargo test --benches` runs this once too; the figures are counted, not timed.
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (off_bodies, off_sizes, _) = runtime.block_on(run(Board::Off));
    let off = cost(&off_bodies, &off_sizes, CLOSING.len());
    assert!(off_bodies.iter().all(|body| !body.to_string().contains("\"todo\"")));
    let (bodies, sizes, whole_end) = runtime.block_on(run(Board::WholeLists));
    let whole = cost(&bodies, &sizes, CLOSING.len());
    let (bodies, sizes, partial_end) = runtime.block_on(run(Board::Partial));
    let partial = cost(&bodies, &sizes, CLOSING.len());
    // The bodies as sent carry keel's own marks: priced with them again, the same figure.
    let keel = cost(&with_breakpoints(&bodies, PLACEMENTS[0].1), &sizes, CLOSING.len());
    assert!((keel.dollars() - partial.dollars()).abs() < 1e-9, "the bench moves keel's marks");
    assert_eq!(whole_end, "(10/10 completed)", "the whole-list form still ends 10/10");
    assert_eq!(partial_end, "(10/10 completed)");
    report("board off (--no-todo)", &off, None);
    report("board on, whole lists alongside each step", &whole, Some(&off));
    report("board on, partial updates alongside each step", &partial, Some(&off));
    placements((&off_bodies, &off_sizes), (&bodies, &sizes));
}
