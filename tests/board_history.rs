#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Superseded board answers (docs/board.md): once a later valid update replaced a board answer,
//! every request carries it as one line, the newest answer stays whole, and a resumed session
//! sends exactly the history the uninterrupted one would have.

mod fake_llm;
mod live_agent;

use fake_llm::{FakeLlm, board, text, tool};
use keel::agent::journal::SessionLog;
use keel::agent::{AgentConfig, Command, Sessions};
use keel::message::{ContentBlock, Message};
use keel::todo::SUPERSEDED;
use live_agent::{WAIT, Wire, start, until_result, wait_for};
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

#[tokio::test(flavor = "multi_thread")]
async fn only_the_newest_board_answer_is_sent_whole_and_a_resume_sends_the_same() {
    let look = || tool("read_file", json!({"path": "notes.txt"}));
    let bad = tool("todo", json!({"items": "not a list"}));
    let script = vec![
        tool("todo", board(0, 3)),
        look(),
        tool("todo", board(1, 3)),
        bad,
        tool("todo", board(2, 3)),
        text("Paused."),
        text("Resumed."),
    ];
    let server = FakeLlm::start(script, Duration::ZERO).await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "hello\n").unwrap();
    let mut handle =
        start(&server, Wire::Anthropic, dir.path(), AgentConfig::default(), Sessions::New);
    handle.commands.send(Command::Submit("go".into())).unwrap();
    until_result(&mut handle).await;
    let live = wait_for(&mut handle, |snapshot| snapshot.history.len() == 12).await;
    handle.commands.send(Command::Quit).unwrap();
    tokio::time::timeout(WAIT, handle.task).await.unwrap().unwrap();

    let bodies = server.bodies().await;
    // Request 3 follows the second update: the first answer is one line, the second whole.
    let third = results(&bodies[3]);
    assert_eq!(third[0], SUPERSEDED);
    assert!(third[2].starts_with("[x] #1: Step 1\n[>] #2: Step 2"), "{}", third[2]);
    // The last request: two superseded, the error kept as it was, the newest whole.
    let last = results(&bodies[5]);
    assert_eq!(last[0], SUPERSEDED);
    assert_eq!(last[2], SUPERSEDED);
    assert_eq!(last[3], "items must be an array", "an error is not a board answer");
    assert!(last[4].ends_with("(2/3 completed)"), "{}", last[4]);
    assert_eq!(bodies[5].to_string().matches("completed)").count(), 1);

    // Reopened, the history is the one the uninterrupted session held: the same bytes go out.
    let (log, restored) = SessionLog::open_newest(dir.path()).unwrap();
    let live_history: Vec<Message> = live.history.iter().cloned().collect();
    assert_eq!(restored.history, live_history);
    assert_eq!(board_results(&restored.history)[..2], [SUPERSEDED, SUPERSEDED]);
    let mut handle = start(
        &server,
        Wire::Anthropic,
        dir.path(),
        AgentConfig::default(),
        Sessions::Resume(log, restored),
    );
    handle.commands.send(Command::Submit("go on".into())).unwrap();
    until_result(&mut handle).await;
    let bodies = server.bodies().await;
    let resumed = results(&bodies[6]);
    assert_eq!(resumed, last, "the resumed request carries the same answers");
    handle.commands.send(Command::Quit).unwrap();
    tokio::time::timeout(WAIT, handle.task).await.unwrap().unwrap();
}
