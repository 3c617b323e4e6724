//! Child agents (`task`) end to end against the loopback server, over both wire protocols: what
//! a child's first request holds and does not, the board moving on a child's success and staying
//! on its failure, item children one at a time, explorers side by side, depth 1, budgets.

use crate::support::agent::{WAIT, Wire, start, until_result};
use crate::support::llm::family::{FamilyLlm, child, first_user_text, is_child, tool_names};
use crate::support::llm::{Step, board, text, tool};
use keel::agent::{AgentConfig, AgentEvent, ApprovalMode, Budget, ChildSettings, Sessions};
use serde_json::{Value, json};
use std::time::Duration;

/// What the parent's first command prints: its output must never reach a child.
const PARENT_NOISE: &str = "PARENT-ONLY-OUTPUT";
/// What a child's command prints: its output must never reach the parent.
const CHILD_NOISE: &str = "CHILD-ONLY-OUTPUT";

fn auto() -> AgentConfig {
    AgentConfig { approval: ApprovalMode::Auto, ..AgentConfig::default() }
}

fn task(item: Option<&str>, prompt: &str) -> Value {
    match item {
        Some(item) => {
            json!({"prompt": prompt, "item": item, "description": format!("Step {item}")})
        }
        None => json!({"prompt": prompt}),
    }
}

/// A child that makes noise, writes `file`, and reports.
fn worker(marker: &str, file: &str) -> crate::support::llm::family::ChildScript {
    child(
        marker,
        vec![
            tool(
                "bash",
                json!({"command": format!("for i in $(seq 300); do echo {CHILD_NOISE}; done")}),
            ),
            tool("write_file", json!({"path": file, "content": "done\n"})),
            text(&format!("Report: wrote {file}.")),
        ],
    )
}

/// The text of every tool result a request carries, in either protocol.
fn results(body: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for message in body["messages"].as_array().into_iter().flatten() {
        if message["role"] == "tool" {
            out.push(message["content"].as_str().unwrap_or_default().to_owned());
        }
        for block in message["content"].as_array().into_iter().flatten() {
            if block["type"] == "tool_result" {
                out.push(block["content"].as_str().unwrap_or_default().to_owned());
            }
        }
    }
    out
}

async fn run(
    wire: Wire,
    parent: Vec<Step>,
    children: Vec<crate::support::llm::family::ChildScript>,
    config: AgentConfig,
) -> (FamilyLlm, tempfile::TempDir, Vec<AgentEvent>) {
    let server = FamilyLlm::start(parent, children).await;
    let work = tempfile::tempdir().unwrap();
    let mut handle = start(&server, wire, work.path(), config, Sessions::Off);
    handle.commands.send(keel::agent::Command::Submit("Do the two steps.".into())).unwrap();
    let events = until_result(&mut handle).await;
    (server, work, events)
}

async fn clean_context_and_the_board(wire: Wire) {
    let parent = vec![
        tool("bash", json!({"command": format!("echo {PARENT_NOISE}")})),
        tool("todo", board(0, 2)),
        tool("task", task(Some("2"), "CHILD-ONE: write a.txt")),
        text("Both steps are done."),
    ];
    let (server, work, events) =
        run(wire, parent, vec![worker("CHILD-ONE", "a.txt")], auto()).await;
    // Item 1 is in progress on the plan: item 2 cannot start beside it.
    let refused = results(server.parent().last().unwrap()).pop().unwrap();
    assert!(refused.contains("Only one task can be in_progress at a time"), "{refused}");
    assert!(server.child("CHILD-ONE").is_empty(), "nothing was handed over");
    assert!(matches!(events.last(), Some(AgentEvent::Result { .. })));
    drop(work);

    let parent = vec![
        tool("bash", json!({"command": format!("echo {PARENT_NOISE}")})),
        tool(
            "todo",
            json!({"items": [
                {"id": "1", "text": "Write a", "status": "pending"},
                {"id": "2", "text": "Write b", "status": "pending", "blocked_by": ["1"]},
            ]}),
        ),
        tool("task", task(Some("1"), "CHILD-ONE: write a.txt")),
        text("Both steps are done."),
    ];
    let (server, work, events) =
        run(wire, parent, vec![worker("CHILD-ONE", "a.txt")], auto()).await;
    let requests = server.child("CHILD-ONE");
    assert_eq!(requests.len(), 3, "the child's three answers");
    let first = &requests[0];
    assert!(is_child(first));
    let messages = first["messages"].as_array().unwrap();
    let user: Vec<&Value> = messages.iter().filter(|m| m["role"] != "system").collect();
    assert_eq!(user.len(), 1, "one message: {first}");
    let brief = first_user_text(first);
    assert!(brief.contains("Do the two steps."), "the person's request: {brief}");
    assert!(brief.contains("[>] #1: Write a   <- your item"), "its item named: {brief}");
    assert!(brief.contains("[ ] #2: Write b  (blocked by #1)"), "the whole board: {brief}");
    assert!(brief.ends_with("CHILD-ONE: write a.txt"), "the prompt last: {brief}");
    let whole = first.to_string();
    assert!(!whole.contains(PARENT_NOISE), "none of the parent's tool output");
    assert!(!whole.contains("Planning"), "none of the parent's history");
    assert_eq!(tool_names(first), ["bash", "read_file", "write_file", "edit_file"]);
    // The parent grows by the report and the board only.
    for body in server.parent() {
        assert!(!body.to_string().contains(CHILD_NOISE), "a child's output reached the parent");
    }
    let answer = results(server.parent().last().unwrap()).pop().unwrap();
    assert_eq!(
        answer,
        "Report: wrote a.txt.\n\n[x] #1: Write a\n[ ] #2: Write b\n\n(1/2 completed)"
    );
    assert_eq!(std::fs::read_to_string(work.path().join("a.txt")).unwrap(), "done\n");
    let starts: Vec<&AgentEvent> =
        events.iter().filter(|e| matches!(e, AgentEvent::AgentStart { .. })).collect();
    assert_eq!(starts.len(), 1);
    assert!(events.iter().any(|e| matches!(e, AgentEvent::Child { agent, event } if agent == "a1" && matches!(**event, AgentEvent::ToolStart { .. }))));
}

#[tokio::test]
async fn a_childs_first_request_is_clean_and_its_success_completes_its_item_anthropic() {
    clean_context_and_the_board(Wire::Anthropic).await;
}

#[tokio::test]
async fn a_childs_first_request_is_clean_and_its_success_completes_its_item_openai() {
    clean_context_and_the_board(Wire::OpenAi).await;
}
