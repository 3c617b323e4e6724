//! The realistic ten-step task the board's benchmarks send through the real agent (each step
//! reads a 6 KB file, writes 2 KB, and runs a command printing 2 KB), with the board off, kept
//! with whole lists or with partial updates, its items with or without checks, and a model that
//! claims each step honestly or first claims it before the work (`board_cost`, `board_checks`).
//! The script is Anthropic's; the loopback server keeps every request body.

use super::fake_llm::{self, Step};
use super::loopback::{Loopback, provider};
use keel::agent::{self, AgentConfig, AgentEvent, ApprovalMode, Command};
use keel::runtime::Workspace;
use keel::tools::Tools;
use serde_json::{Value, json};
use std::path::Path;

/// Steps of the task.
pub const STEPS: usize = 10;
/// What each step reads and writes, in bytes.
const READ_BYTES: usize = 6 * 1024;
const WRITE_BYTES: usize = 2 * 1024;
/// The closing answer, the only output no later request carries.
pub const CLOSING: &str = "All 10 steps are done.";

/// How the run keeps its board.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Board {
    Off,
    WholeLists,
    Partial,
}

/// Whether the board's items carry checks, and when the model claims each step done.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Checks {
    /// No item has a check.
    None,
    /// Every item has one; the model claims a step beside its command, once it is written.
    Honest,
    /// Every item has one; the model claims a step beside its first read, before writing it
    /// (refused), and again beside its command, as the honest model does.
    Lazy,
}

/// The check that shows step `k` was written.
pub fn check(k: usize) -> String {
    format!("grep -qx '// step {k}' out/step_{k}.rs")
}

/// The board's items as a model writes them: a step worth naming. (`activeForm` is optional
/// and left out in every run alike.)
fn item(k: usize, status: &str, checks: Checks) -> Value {
    let mut item = json!({"id": k.to_string(), "text": format!("Update module_{k}.rs to the new API and check it"), "status": status});
    if checks != Checks::None {
        item["check"] = json!(check(k));
    }
    item
}

/// The whole list once `done` steps are completed.
fn whole_list(done: usize, checks: Checks) -> Value {
    let items: Vec<Value> = (1..=STEPS)
        .map(|k| {
            let status = match k {
                k if k <= done => "completed",
                k if k == done + 1 => "in_progress",
                _ => "pending",
            };
            item(k, status, checks)
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

/// The board's update once step `k` is done, in the run's form.
fn update(board: Board, k: usize, checks: Checks) -> Option<(String, Value)> {
    match board {
        Board::Off => None,
        Board::WholeLists => Some(("todo".into(), whole_list(k, checks))),
        Board::Partial => Some(("todo".into(), partial(k))),
    }
}

/// The task's script: per step a read (the first one with the plan beside it, and the lazy
/// model's early claim), a write, and the command with the board's update beside it; then the
/// closing answer.
pub fn task(board: Board, checks: Checks) -> Vec<Step> {
    let mut steps = Vec::new();
    for k in 1..=STEPS {
        let mut read = fake_llm::tool("read_file", json!({"path": format!("module_{k}.rs")}));
        if k == 1 && board != Board::Off {
            // The plan goes with the first step's first call, as the system prompt asks.
            read.tools.insert(0, ("todo".into(), whole_list(0, checks)));
        }
        if checks == Checks::Lazy {
            read.tools.extend(update(board, k, checks));
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
        tools.extend(update(board, k, checks));
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

/// What one run sent and ended with.
pub struct Run {
    /// Every request body, and its size on the wire.
    pub bodies: Vec<Value>,
    pub sizes: Vec<usize>,
    /// The board's progress line at the end (`(10/10 completed)`).
    pub board: String,
    /// Each check that ran, in order: its item and whether it passed.
    pub checks: Vec<(String, bool)>,
}

/// Runs the task through the real agent against the loopback server.
pub async fn run(board: Board, checks: Checks) -> Run {
    let steps = task(board, checks);
    let requests = steps.len();
    let server = Loopback::start(steps).await;
    let dir = tempfile::tempdir().unwrap();
    workspace(dir.path());
    let provider = provider(&server.base_url);
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
    let mut ran = Vec::new();
    while let Some(event) = handle.events.recv().await {
        match event {
            AgentEvent::Result { .. } => break,
            AgentEvent::Todo { items, .. } => {
                last_board = keel::board::Board::from_items(items).progress();
            }
            AgentEvent::CheckEnd { item, passed, .. } => ran.push((item, passed)),
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
    Run { bodies, sizes, board: last_board, checks: ran }
}
