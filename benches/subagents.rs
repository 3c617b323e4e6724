#![allow(clippy::unwrap_used, clippy::expect_used)]
//! What child agents save: a ten-step task whose every step prints 32 KB, sent by the real agent
//! to a loopback server twice — in one context (each step's command and board update in the
//! conversation itself), and with one child per board item (`task {item, prompt}`: the child
//! runs the command and reports in a line) — and the bytes and dollars every request carried,
//! the parent's and the children's together; then three explorers whose model takes 2 s each,
//! run in one response, against one alone; then a runaway child against its budget.
//!
//! Dollars are at list prices with the prompt cache as the `cache_control` marks in each body set
//! it (`support::cache_cost`), each conversation priced on its own: a child reads nothing from
//! another's cache, though their tools and system prompt are the same (so the children's figure
//! is an upper bound). The figures are counted, not timed, but for the explorers' wall time.
//! `cargo bench --bench subagents` prints them; benches/README.md reports them.

mod support;

use keel::agent::{self, AgentConfig, AgentEvent, ApprovalMode, Command, Sessions};
use keel::runtime::Workspace;
use keel::tools::Tools;
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use support::cache_cost::{Cost, cost, tokens};
use support::fake_llm::family::{ChildScript, FamilyLlm, child};
use support::fake_llm::{self, Step};
use support::loopback::provider;

/// Steps of the task.
const STEPS: usize = 10;
/// What each step's command prints.
const PRINTED: usize = 32 * 1024;
/// The closing answer, the only output no later request carries.
const CLOSING: &str = "All 10 steps are done.";
/// What the explorers' model takes to answer.
const EXPLORER_WAIT: Duration = Duration::from_secs(2);
/// The goals: all bytes with children at most this share of one context's; the parent's
/// largest request at most this big; three explorers at most this many times one.
const BYTES_SHARE_GOAL: f64 = 0.35;
const PARENT_REQUEST_GOAL: usize = 64 * 1024;
const EXPLORERS_GOAL: f64 = 1.6;

/// The board's items as a model writes them.
fn plan() -> Value {
    let items: Vec<Value> = (1..=STEPS)
        .map(|k| json!({"id": k.to_string(), "text": format!("Regenerate fixture {k} and check its output"), "status": "pending"}))
        .collect();
    json!({ "items": items })
}

/// Step `k`'s command: its 32 KB of output, each line naming the step.
fn command(k: usize) -> Value {
    json!({"command": format!("yes 'step {k}: fixture row regenerated and checked' | head -c {PRINTED}")})
}

/// The marker of step `k`'s child in its prompt (never the start of another's).
fn marker(k: usize) -> String {
    format!("[step {k}]")
}

/// The task in one context: the plan, then per step its command with the board's update beside
/// it (the next item started), then the closing answer.
fn one_context() -> Vec<Step> {
    let mut steps = vec![Step { text: "Planning.".into(), ..fake_llm::tool("todo", plan()) }];
    for k in 1..=STEPS {
        let mut update = vec![json!({"id": k.to_string(), "status": "in_progress"})];
        if k > 1 {
            update.insert(0, json!({"id": (k - 1).to_string(), "status": "completed"}));
        }
        steps.push(Step {
            tools: vec![("bash".into(), command(k)), ("todo".into(), json!({ "update": update }))],
            ..Step::default()
        });
    }
    steps.push(fake_llm::tool(
        "todo",
        json!({"update": [{"id": STEPS.to_string(), "status": "completed"}]}),
    ));
    steps.push(fake_llm::text(CLOSING));
    steps
}

/// The task with one child per item: the plan, then each item handed to its child, then the
/// closing answer; each child runs the command and reports in a line.
fn with_children() -> (Vec<Step>, Vec<ChildScript>) {
    let mut parent = vec![Step { text: "Planning.".into(), ..fake_llm::tool("todo", plan()) }];
    let mut children = Vec::new();
    for k in 1..=STEPS {
        let prompt =
            format!("{} Regenerate fixture {k}, check its output, report in a line.", marker(k));
        parent.push(fake_llm::tool("task", json!({"prompt": prompt, "item": k.to_string()})));
        children.push(child(
            &marker(k),
            vec![
                fake_llm::tool("bash", command(k)),
                fake_llm::text(&format!(
                    "Fixture {k} regenerated; its {PRINTED} bytes of rows check out."
                )),
            ],
        ));
    }
    parent.push(fake_llm::text(CLOSING));
    (parent, children)
}

/// Runs a prompt through the real agent against `server`; returns the board it ended with and
/// the turn's wall time.
async fn run(server: &FamilyLlm, config: AgentConfig) -> (String, Duration) {
    let dir = tempfile::tempdir().unwrap();
    keel::runtime::supervisor::set_program(env!("CARGO_BIN_EXE_keel"));
    let tools = Tools::new(Workspace::new(dir.path()).unwrap());
    let mut handle = agent::spawn_with_session(
        config,
        Some(provider(&server.anthropic_base())),
        tools,
        Sessions::Off,
    );
    let started = Instant::now();
    handle.commands.send(Command::Submit("Regenerate the ten fixtures.".into())).unwrap();
    let mut board = String::new();
    while let Some(event) = handle.events.recv().await {
        match event {
            AgentEvent::Result { done, total, .. } => {
                board = format!("{done}/{total}");
                break;
            }
            _ => continue,
        }
    }
    let took = started.elapsed();
    let _ = handle.commands.send(Command::Quit);
    let _ = handle.task.await;
    (board, took)
}

fn config() -> AgentConfig {
    AgentConfig {
        system_prompt: keel::prompt::system_prompt(true),
        approval: ApprovalMode::Auto,
        ..AgentConfig::default()
    }
}

/// One conversation's requests, priced.
fn priced(requests: &[(Value, usize)], closing: usize) -> Cost {
    let bodies: Vec<Value> = requests.iter().map(|(body, _)| body.clone()).collect();
    let sizes: Vec<usize> = requests.iter().map(|(_, size)| *size).collect();
    cost(&bodies, &sizes, closing)
}

/// The requests of conversation `whose` (`None`: the parent's), in order.
fn of(server: &FamilyLlm, whose: Option<&str>) -> Vec<(Value, usize)> {
    server
        .sized()
        .into_iter()
        .filter(|(seen, _, _)| seen.as_deref() == whose)
        .map(|(_, body, size)| (body, size))
        .collect()
}

async fn ten_steps() {
    let server = FamilyLlm::start(one_context(), Vec::new()).await;
    let (board, _) = run(&server, config()).await;
    assert_eq!(board, "10/10");
    let alone = of(&server, None);
    let one = priced(&alone, CLOSING.len());
    let one_largest = alone.iter().map(|(_, size)| *size).max().unwrap_or(0);

    let (parent, children) = with_children();
    let server = FamilyLlm::start(parent, children).await;
    let (board, _) = run(&server, config()).await;
    assert_eq!(board, "10/10", "one child per item completes the board");
    let parent = of(&server, None);
    let parent_cost = priced(&parent, CLOSING.len());
    let largest = parent.iter().map(|(_, size)| *size).max().unwrap_or(0);
    for (body, _) in &parent {
        assert!(
            !body.to_string().contains("fixture row regenerated"),
            "a child's output reached the parent"
        );
    }
    let mut kids = Cost::default();
    let mut child_requests = 0;
    for k in 1..=STEPS {
        let requests = of(&server, Some(&marker(k)));
        child_requests += requests.len();
        let report = format!("Fixture {k} regenerated; its {PRINTED} bytes of rows check out.");
        let priced = priced(&requests, report.len());
        kids.total += priced.total;
        kids.requests += priced.requests;
        kids.priced.read += priced.priced.read;
        kids.priced.write += priced.priced.write;
        kids.priced.input += priced.priced.input;
        kids.priced.output += priced.priced.output;
    }
    let total = parent_cost.total + kids.total;
    let dollars = parent_cost.dollars() + kids.dollars();
    let uncached = parent_cost.dollars_uncached() + kids.dollars_uncached();
    let share = total as f64 / one.total as f64;
    println!(
        "one context: {} requests, {} bytes (~{} tokens), largest request {} bytes, ${:.4} with the cache (${:.4} without)",
        one.requests,
        one.total,
        tokens(one.total),
        one_largest,
        one.dollars(),
        one.dollars_uncached()
    );
    println!(
        "one child per item: parent {} requests, {} bytes, largest {} bytes; children {} requests, {} bytes; \
         all {} bytes (~{} tokens) = {:.1} % of one context, ${:.4} with the cache ({:.1} %), ${:.4} without ({:.1} %)",
        parent_cost.requests,
        parent_cost.total,
        largest,
        child_requests,
        kids.total,
        total,
        tokens(total),
        100.0 * share,
        dollars,
        100.0 * dollars / one.dollars(),
        uncached,
        100.0 * uncached / one.dollars_uncached()
    );
    assert!(largest <= PARENT_REQUEST_GOAL, "the parent's largest request is {largest} bytes");
    assert!(
        share <= BYTES_SHARE_GOAL,
        "children sent {:.1} % of one context's bytes",
        100.0 * share
    );
}

/// A parent that sends `count` explorers in one response, each of whose model takes 2 s.
async fn explorers(count: usize) -> Duration {
    let calls: Vec<(String, Value)> = (1..=count)
        .map(|k| {
            ("task".to_owned(), json!({"prompt": format!("[look {k}] Find fixture {k}'s loader.")}))
        })
        .collect();
    let parent = vec![Step { tools: calls, ..Step::default() }, fake_llm::text("Found them.")];
    let children = (1..=count)
        .map(|k| {
            child(&format!("[look {k}]"), vec![fake_llm::text("It is in src/fixtures.rs.")])
                .slow(EXPLORER_WAIT)
        })
        .collect();
    let server = FamilyLlm::start(parent, children).await;
    run(&server, config()).await.1
}

/// A child that never stops on its own, against the default budget.
async fn runaway() {
    let steps =
        (1..=60).map(|k| fake_llm::tool("bash", json!({"command": format!("echo round {k}")})));
    let parent = vec![
        fake_llm::tool("task", json!({"prompt": "[runaway] Look around."})),
        fake_llm::text("Stopped."),
    ];
    let server = FamilyLlm::start(parent, vec![child("[runaway]", steps.collect())]).await;
    run(&server, config()).await;
    let requests = of(&server, Some("[runaway]")).len();
    let budget = keel::agent::Budget::default();
    println!(
        "runaway child: stopped after {requests} model responses (budget {} responses, {} input tokens)",
        budget.rounds, budget.input_tokens
    );
    assert!(requests <= budget.rounds as usize);
}

fn main() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(ten_steps());
    let one = runtime.block_on(explorers(1));
    let three = runtime.block_on(explorers(3));
    let ratio = three.as_secs_f64() / one.as_secs_f64();
    println!(
        "explorers whose model takes {} s: one {:.2} s, three in one response {:.2} s ({ratio:.2}×)",
        EXPLORER_WAIT.as_secs(),
        one.as_secs_f64(),
        three.as_secs_f64()
    );
    assert!(ratio <= EXPLORERS_GOAL, "three explorers took {ratio:.2}× one");
    runtime.block_on(runaway());
}
