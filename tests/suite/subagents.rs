//! Child agents (`task`) end to end against the loopback server, over both wire protocols: what
//! a child's first request holds and does not, the board moving on a child's success and staying
//! on its failure, item children one at a time, explorers side by side, depth 1, budgets.

use crate::support::agent::{Wire, start, until_result};
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
    // OpenAI-compatible servers read an error by its first word.
    out.into_iter()
        .map(|text| text.strip_prefix("Error: ").map_or(text.clone(), str::to_owned))
        .collect()
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
    assert_eq!(tool_names(first), ["bash", "read_file", "write_file", "edit_file", "grep", "glob"]);
    if matches!(wire, Wire::Anthropic) {
        // Each child's requests carry their own prompt-cache breakpoints: on its system prompt
        // and on its newest message.
        for body in &requests {
            assert!(body["system"][0]["cache_control"].is_object(), "{body}");
            let newest = body["messages"].as_array().unwrap().last().unwrap();
            let block = newest["content"].as_array().unwrap().last().unwrap();
            assert!(block["cache_control"].is_object(), "{body}");
        }
    }
    // The parent grows by the report and the board only: the child's 5 KB of output never
    // reaches it.
    for body in server.parent() {
        assert!(!body.to_string().contains(CHILD_NOISE), "a child's output reached the parent");
    }
    let sizes: Vec<usize> = server
        .sized()
        .into_iter()
        .filter(|(whose, ..)| whose.is_none())
        .map(|(.., size)| size)
        .collect();
    let (before, after) = (sizes[sizes.len() - 2], sizes[sizes.len() - 1]);
    assert!(after - before < 1_500, "the parent grew by {} bytes", after - before);
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

/// A child that never stops on its own: a command every response.
fn runaway(marker: &str) -> crate::support::llm::family::ChildScript {
    let steps = (1..=40).map(|k| tool("bash", json!({"command": format!("echo round {k}")})));
    child(marker, steps.collect())
}

fn one_item() -> Value {
    json!({"items": [{"id": "1", "text": "Do it", "status": "pending"}]})
}

fn budget(rounds: u32, input_tokens: u64) -> AgentConfig {
    AgentConfig {
        children: ChildSettings {
            budget: Budget { rounds, input_tokens },
            ..ChildSettings::default()
        },
        ..auto()
    }
}

async fn a_failed_child_leaves_its_item_in_progress(wire: Wire) {
    let parent = vec![
        tool("todo", one_item()),
        tool("task", task(Some("1"), "RUNAWAY: do it")),
        text("It did not finish."),
    ];
    let (server, _work, events) =
        run(wire, parent, vec![runaway("RUNAWAY")], budget(2, 10_000_000)).await;
    assert_eq!(server.child("RUNAWAY").len(), 2, "stopped at its budget of 2 responses");
    let answer = results(server.parent().last().unwrap()).pop().unwrap();
    assert_eq!(
        answer,
        "The child agent a1 (item #1) stopped before it finished: it used its budget of 2 model \
         responses (max_child_rounds). Item #1 stays in progress.\nWhat it did (2 tool calls):\n\
         - bash echo round 1 → exit 0\n- bash echo round 2 → exit 0"
    );
    let Some(AgentEvent::Result { done, total, .. }) = events.last() else { panic!() };
    assert_eq!((*done, *total), (0, 1));
    let todo = events.iter().rev().find_map(|event| match event {
        AgentEvent::Todo { items, .. } => Some(items.clone()),
        _ => None,
    });
    assert_eq!(todo.unwrap()[0].status, keel::board::Status::InProgress);
    assert!(events.iter().any(|event| matches!(event,
        AgentEvent::AgentEnd { agent, status: keel::agent::ChildStatus::Stopped, rounds: 2, .. } if agent == "a1")));
}

#[tokio::test]
async fn a_child_stopped_by_its_budget_leaves_its_item_in_progress_anthropic() {
    a_failed_child_leaves_its_item_in_progress(Wire::Anthropic).await;
}

#[tokio::test]
async fn a_child_stopped_by_its_budget_leaves_its_item_in_progress_openai() {
    a_failed_child_leaves_its_item_in_progress(Wire::OpenAi).await;
}

/// The OpenAI-compatible server reports 1,000 prompt tokens a request: a budget of 4,500 lets a
/// runaway child make four requests, never a fifth that would pass it.
#[tokio::test]
async fn a_runaway_child_is_stopped_within_its_token_budget() {
    const BUDGET: u64 = 4_500;
    let parent = vec![tool("task", task(None, "RUNAWAY: look around")), text("Stopped.")];
    let (server, _work, events) =
        run(Wire::OpenAi, parent, vec![runaway("RUNAWAY")], budget(30, BUDGET)).await;
    let requests = server.child("RUNAWAY").len();
    let Some((input, status, error)) = events.iter().find_map(|event| match event {
        AgentEvent::AgentEnd { input_tokens, status, error, .. } => {
            Some((*input_tokens, *status, error.clone()))
        }
        _ => None,
    }) else {
        panic!("no agent_end")
    };
    assert_eq!(status, keel::agent::ChildStatus::Stopped);
    assert!(input <= BUDGET, "{input} tokens, over the budget");
    assert_eq!(input, 1_000 * requests as u64);
    assert!(requests >= 3, "{requests} requests: stopped too early");
    assert!(error.unwrap().contains("max_child_tokens"));
}

#[tokio::test]
async fn item_children_run_one_at_a_time_in_the_order_called() {
    let parent = vec![
        tool(
            "todo",
            json!({"items": [
                {"id": "1", "text": "Write a", "status": "pending"},
                {"id": "2", "text": "Write b", "status": "pending"},
            ]}),
        ),
        Step {
            tools: vec![
                ("task".into(), task(Some("1"), "FIRST: write a.txt")),
                ("task".into(), task(Some("2"), "SECOND: write b.txt")),
            ],
            ..Step::default()
        },
        text("Both written."),
    ];
    let first = worker("FIRST", "a.txt").slow(Duration::from_millis(200));
    let (server, work, events) =
        run(Wire::Anthropic, parent, vec![first, worker("SECOND", "b.txt")], auto()).await;
    let order: Vec<String> = server.requests().into_iter().filter_map(|(whose, _)| whose).collect();
    assert_eq!(order, ["FIRST", "FIRST", "FIRST", "SECOND", "SECOND", "SECOND"]);
    let answers = results(server.parent().last().unwrap());
    assert!(answers[answers.len() - 2].starts_with("Report: wrote a.txt."));
    assert!(answers[answers.len() - 1].ends_with("(2/2 completed)"), "{answers:?}");
    assert!(work.path().join("a.txt").exists() && work.path().join("b.txt").exists());
    let Some(AgentEvent::Result { done: 2, total: 2, .. }) = events.last() else {
        panic!("{:?}", events.last())
    };
}

/// Three explorers of one response: each answers its first request only after a second, so if
/// they ran one after another the second's first request would come after the first's last.
async fn explorers_run_side_by_side(wire: Wire, parallel: usize) -> Vec<String> {
    let explorer = |marker: &str| {
        child(
            marker,
            vec![
                tool("read_file", json!({"path": "notes.txt"})),
                text(&format!("{marker} found it.")),
            ],
        )
        .slow(Duration::from_millis(600))
    };
    let parent = vec![
        Step {
            tools: ["ONE", "TWO", "THREE"]
                .iter()
                .map(|marker| ("task".to_owned(), task(None, &format!("{marker}: look"))))
                .collect(),
            ..Step::default()
        },
        text("Looked."),
    ];
    let config = AgentConfig {
        children: ChildSettings { max_parallel: parallel, ..ChildSettings::default() },
        ..auto()
    };
    let server = FamilyLlm::start(parent, ["ONE", "TWO", "THREE"].map(explorer).to_vec()).await;
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("notes.txt"), "notes\n").unwrap();
    let mut handle = start(&server, wire, work.path(), config, Sessions::Off);
    handle.commands.send(keel::agent::Command::Submit("Look.".into())).unwrap();
    until_result(&mut handle).await;
    let answers = results(server.parent().last().unwrap());
    assert_eq!(answers, ["ONE found it.", "TWO found it.", "THREE found it."], "each its own");
    server.requests().into_iter().filter_map(|(whose, _)| whose).collect()
}

#[tokio::test]
async fn explorers_of_one_response_run_at_the_same_time_anthropic() {
    let order = explorers_run_side_by_side(Wire::Anthropic, 3).await;
    assert_eq!(&order[..3].iter().collect::<std::collections::HashSet<_>>().len(), &3, "{order:?}");
}

#[tokio::test]
async fn explorers_of_one_response_run_at_the_same_time_openai() {
    let order = explorers_run_side_by_side(Wire::OpenAi, 3).await;
    assert_eq!(&order[..3].iter().collect::<std::collections::HashSet<_>>().len(), &3, "{order:?}");
}

#[tokio::test]
async fn at_most_max_parallel_agents_explore_at_once() {
    let order = explorers_run_side_by_side(Wire::Anthropic, 2).await;
    // The third starts once one of the first two has ended: after a second request of theirs.
    let third = order.iter().position(|whose| whose == "THREE").unwrap();
    assert!(third >= 3, "{order:?}");
    assert!(order[..2].contains(&"ONE".to_owned()) && order[..2].contains(&"TWO".to_owned()));
}

#[tokio::test]
async fn a_child_has_no_task_and_no_todo() {
    let parent = vec![tool("task", task(None, "DEEP: look")), text("Done.")];
    let deep = child(
        "DEEP",
        vec![
            Step {
                tools: vec![("task".into(), task(None, "deeper")), ("todo".into(), one_item())],
                ..Step::default()
            },
            text("I could not."),
        ],
    );
    let (server, _work, events) = run(Wire::Anthropic, parent, vec![deep], auto()).await;
    let requests = server.child("DEEP");
    assert_eq!(
        tool_names(&requests[0]),
        ["bash", "read_file", "grep", "glob"],
        "an explorer reads"
    );
    let answers = results(&requests[1]);
    for answer in &answers {
        assert!(answer.starts_with("Unknown tool `"), "{answer}");
        assert!(answer.ends_with("Available tools: bash, read_file, grep, glob."), "{answer}");
    }
    assert_eq!(
        server.requests().iter().filter(|(whose, _)| whose.as_deref() == Some("?")).count(),
        0
    );
    let starts = events.iter().filter(|e| matches!(e, AgentEvent::AgentStart { .. })).count();
    assert_eq!(starts, 1, "depth 1");
}

#[tokio::test]
async fn an_item_not_on_the_board_or_already_done_is_refused_and_nothing_is_handed_over() {
    let parent = vec![
        tool("todo", json!({"items": [{"id": "1", "text": "Do it", "status": "completed"}]})),
        Step {
            tools: vec![
                ("task".into(), task(Some("9"), "NOBODY: do nine")),
                ("task".into(), task(Some("1"), "NOBODY: do one again")),
                ("task".into(), json!({"prompt": " ", "item": "1"})),
            ],
            ..Step::default()
        },
        text("Nothing to do."),
    ];
    let (server, _work, events) =
        run(Wire::Anthropic, parent, vec![worker("NOBODY", "x.txt")], auto()).await;
    let answers = results(server.parent().last().unwrap());
    let answers = &answers[answers.len() - 3..];
    assert!(answers[0].starts_with("Item #9 is not on the board"), "{answers:?}");
    assert!(answers[1].starts_with("Item #1 is already completed"), "{answers:?}");
    assert!(answers[2].contains("prompt is empty"), "{answers:?}");
    assert!(server.child("NOBODY").is_empty(), "no child ran");
    assert!(!events.iter().any(|event| matches!(event, AgentEvent::AgentStart { .. })));
}
