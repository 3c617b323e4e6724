//! Board answers in the history (docs/board.md): every one is the whole board, and what was sent
//! is never rewritten, so the history's prefix stays what a provider cached; a round that updates
//! the board twice sends only its newest answer whole; and a resumed session sends exactly the
//! history the uninterrupted one would have.

use crate::support::{agent, llm};
use agent::{WAIT, Wire, start, until_result, wait_for};
use keel::agent::journal::SessionStore;
use keel::agent::{AgentConfig, Command, Sessions};
use keel::board::SUPERSEDED;
use keel::message::{ContentBlock, Message};
use llm::{FakeLlm, board, text, tool};
use serde_json::{Value, json};
use std::time::Duration;

/// Every `tool_result` of a request, in order.
fn results(body: &Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|message| message["content"].as_array().cloned().unwrap_or_default())
        .filter(|block| block["type"] == "tool_result")
        .map(|block| block["content"].as_str().unwrap().to_owned())
        .collect()
}

fn board_results(history: &[Message]) -> Vec<String> {
    history
        .iter()
        .flat_map(|message| message.content.iter())
        .filter_map(|block| match block {
            ContentBlock::ToolResult { content, .. }
                if content.starts_with('[') || content.contains("completed)") =>
            {
                Some(content.clone())
            }
            _ => None,
        })
        .collect()
}

/// The `messages` array of a request body, each message as its JSON text without the cache
/// marks (which move to the newest messages every round, by design).
fn messages(body: &Value) -> Vec<String> {
    let mut messages = body["messages"].as_array().unwrap().clone();
    for block in messages.iter_mut().flat_map(|m| m["content"].as_array_mut().into_iter().flatten())
    {
        if let Some(block) = block.as_object_mut() {
            block.remove("cache_control");
        }
    }
    messages.iter().map(Value::to_string).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn board_answers_already_sent_stay_as_sent_and_a_resume_sends_the_same() {
    let look = || tool("read_file", json!({"path": "notes.txt"}));
    let bad = tool("todo", json!({"items": "not a list"}));
    // Round 5 updates the board twice, the second time adding a fourth item: only its newer
    // answer, the whole board, goes out whole.
    let fourth = json!({"update": [
        {"id": "2", "status": "completed"},
        {"id": "3", "status": "in_progress"},
        {"id": "4", "text": "Step 4"}
    ]});
    let twice = llm::Step {
        tools: vec![("todo".into(), board(1, 3)), ("todo".into(), fourth)],
        ..text("")
    };
    let script = vec![
        tool("todo", board(0, 3)),
        look(),
        tool("todo", board(1, 3)),
        bad,
        twice,
        text("Paused."),
        text("Resumed."),
    ];
    let server = FakeLlm::start(script, Duration::ZERO).await;
    let (dir, state) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    std::fs::write(dir.path().join("notes.txt"), "hello\n").unwrap();
    let store = SessionStore::new(state.path(), &dir.path().canonicalize().unwrap());
    let mut handle = start(
        &server,
        Wire::Anthropic,
        dir.path(),
        AgentConfig::default(),
        Sessions::New(store.clone()),
    );
    handle.commands.send(Command::Submit("go".into())).unwrap();
    until_result(&mut handle).await;
    let live = wait_for(&mut handle, |snapshot| snapshot.history.len() == 12).await;
    handle.commands.send(Command::Quit).unwrap();
    tokio::time::timeout(WAIT, handle.task).await.unwrap().unwrap();

    let bodies = server.bodies().await;
    // What was sent is never rewritten: each request's messages begin with the one before's
    // (the newest user message grows as results join it), so a provider's prompt cache keeps
    // serving.
    for pair in bodies.windows(2) {
        let (before, after) = (messages(&pair[0]), messages(&pair[1]));
        let settled = before.len() - 1;
        assert_eq!(after[..settled], before[..settled], "a sent message changed");
    }
    let last = results(&bodies[5]);
    assert_eq!(last[0], "[>] #1: Step 1\n[ ] #2: Step 2\n[ ] #3: Step 3\n\n(0/3 completed)");
    assert_eq!(last[2], "[x] #1: Step 1\n[>] #2: Step 2\n[ ] #3: Step 3\n\n(1/3 completed)");
    assert_eq!(last[3], "items must be an array", "an error is not a board answer");
    assert_eq!(last[4], SUPERSEDED, "the round's earlier update is one line");
    assert!(last[5].starts_with("[x] #1: Step 1\n") && last[5].ends_with("(2/4 completed)"));

    // Reopened, the history is the one the uninterrupted session held: the same bytes go out.
    let (log, restored) = store.open_newest().unwrap();
    let live_history: Vec<Message> = live.history.iter().cloned().collect();
    assert_eq!(restored.history, live_history);
    assert_eq!(board_results(&restored.history).iter().filter(|r| *r == SUPERSEDED).count(), 1);
    let mut handle = start(
        &server,
        Wire::Anthropic,
        dir.path(),
        AgentConfig::default(),
        Sessions::Resume(store.clone(), log, restored),
    );
    handle.commands.send(Command::Submit("go on".into())).unwrap();
    until_result(&mut handle).await;
    let bodies = server.bodies().await;
    let resumed = results(&bodies[6]);
    assert_eq!(resumed, last, "the resumed request carries the same answers");
    handle.commands.send(Command::Quit).unwrap();
    tokio::time::timeout(WAIT, handle.task).await.unwrap().unwrap();
}
