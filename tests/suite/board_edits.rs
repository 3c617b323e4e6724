//! The person's board edits as the model receives them (docs/board.md): a real agent talks to a
//! loopback server on both protocols; edits sent as `Command::EditBoard` reach the next request
//! in a text block after the prompt or the tool results, with the board as it now stands; a bad
//! edit is the person's error and the model hears nothing; edits survive a resume.

use crate::support::{agent, llm};
use agent::{WAIT, Wire, edit, latest, start, until_result};
use keel::agent::journal::SessionStore;
use keel::agent::{AgentConfig, AgentEvent, Command, Entry, Sessions};
use keel::board::BoardEdit;
use llm::{FakeLlm, Step, board, text, tool};
use serde_json::{Value, json};
use std::time::Duration;

const NOTE: &str = "<board-edit>";

/// Plans three steps, then answers.
fn plan_then_answer() -> Vec<Step> {
    vec![tool("todo", board(0, 3)), text("Planned."), text("Carrying on."), text("Done.")]
}

/// The text of the request's newest message, which is the person's: its text blocks joined.
fn last_user_text(body: &Value, wire: Wire) -> String {
    let last = body["messages"].as_array().unwrap().last().unwrap();
    assert_eq!(last["role"], "user");
    match wire {
        Wire::Anthropic => last["content"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|block| block["type"] == "text")
            .map(|block| block["text"].as_str().unwrap().to_owned())
            .collect::<Vec<_>>()
            .join("\n"),
        Wire::OpenAi => last["content"].as_str().unwrap().to_owned(),
    }
}

const EXPECTED_NOTE: &str = "<board-edit>The person changed the board:\n\
- marked #1 completed\n\
- added #4: Write the docs\n\
- moved #4 to position 2\n\n\
The board now:\n\
[x] #1: Step 1\n\
[ ] #4: Write the docs\n\
[ ] #2: Step 2\n\
[ ] #3: Step 3\n\n\
(1/4 completed)</board-edit>";

async fn edits_between_turns(wire: Wire) {
    let server = FakeLlm::start(plan_then_answer(), Duration::ZERO).await;
    let dir = tempfile::tempdir().unwrap();
    let mut handle = start(&server, wire, dir.path(), AgentConfig::default(), Sessions::Off);
    let mut seen = 0;
    handle.commands.send(Command::Submit("plan it".into())).unwrap();
    until_result(&mut handle).await;
    edit(&mut handle, &mut seen, "done 1").await;
    edit(&mut handle, &mut seen, "add Write the docs").await;
    edit(&mut handle, &mut seen, "move 4 2").await;
    handle.commands.send(Command::Submit("go on".into())).unwrap();
    until_result(&mut handle).await;
    handle.commands.send(Command::Submit("and finish".into())).unwrap();
    until_result(&mut handle).await;

    let bodies = server.bodies().await;
    assert_eq!(bodies.len(), 4);
    for body in &bodies[..2] {
        assert!(!body.to_string().contains(NOTE), "no note before the person edited");
    }
    let told = last_user_text(&bodies[2], wire);
    assert!(told.starts_with("go on") && told.ends_with(EXPECTED_NOTE), "{told}");
    assert_eq!(bodies[3].to_string().matches(NOTE).count(), 1, "told once, not again");
}

#[tokio::test(flavor = "multi_thread")]
async fn anthropic_hears_the_persons_edits_after_the_next_prompt() {
    edits_between_turns(Wire::Anthropic).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn openai_hears_the_persons_edits_after_the_next_prompt() {
    edits_between_turns(Wire::OpenAi).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_edit_during_a_turn_follows_the_tool_results_of_the_next_request() {
    let look = || tool("read_file", json!({"path": "notes.txt"}));
    let script = vec![tool("todo", board(0, 2)), look(), look(), text("Done.")];
    // Each answer takes a while, so the edit lands while a request is out.
    let server = FakeLlm::start(script, Duration::from_millis(300)).await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "hello\n").unwrap();
    let mut handle =
        start(&server, Wire::Anthropic, dir.path(), AgentConfig::default(), Sessions::Off);
    handle.commands.send(Command::Submit("go".into())).unwrap();
    loop {
        let event = tokio::time::timeout(WAIT, handle.events.recv()).await.unwrap().unwrap();
        if matches!(event, AgentEvent::Todo { .. }) {
            break;
        }
    }
    handle
        .commands
        .send(Command::EditBoard(BoardEdit::parse("edit 2 Step two, done well").unwrap()))
        .unwrap();
    let events = until_result(&mut handle).await;
    assert!(events.iter().any(|event| matches!(event, AgentEvent::Todo { items, .. } if items[1].text == "Step two, done well")));

    let bodies = server.bodies().await;
    let carrying: Vec<usize> = (0..bodies.len())
        .filter(|&i| {
            let last = bodies[i]["messages"].as_array().unwrap().last().unwrap();
            last.to_string().contains(NOTE)
        })
        .collect();
    assert_eq!(carrying.len(), 1, "exactly one request's newest message tells the model");
    let last = bodies[carrying[0]]["messages"].as_array().unwrap().last().unwrap().clone();
    let blocks = last["content"].as_array().unwrap();
    assert_eq!(blocks[0]["type"], "tool_result", "the tool results come first");
    let note = blocks.last().unwrap();
    assert_eq!(note["type"], "text");
    let text = note["text"].as_str().unwrap();
    assert!(text.starts_with("<board-edit>The person changed the board:\n- changed #2 from \"Step 2\" to \"Step two, done well\"\n"), "{text}");
    assert!(text.contains("[ ] #2: Step two, done well\n"), "{text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_bad_edit_is_the_persons_error_and_the_model_hears_nothing() {
    let server = FakeLlm::start(plan_then_answer(), Duration::ZERO).await;
    let dir = tempfile::tempdir().unwrap();
    let mut handle =
        start(&server, Wire::Anthropic, dir.path(), AgentConfig::default(), Sessions::Off);
    let mut seen = 0;
    handle.commands.send(Command::Submit("plan it".into())).unwrap();
    until_result(&mut handle).await;
    let before = latest(&mut handle).board;
    for (command, error) in [
        ("done 9", "there is no item #9 on the board"),
        ("move 2 4", "#2 cannot move to position 4: the board has 3 items"),
        ("undo 2", "#2 is already pending"),
    ] {
        let snapshot = edit(&mut handle, &mut seen, command).await;
        let last = snapshot.transcript.last().unwrap().clone();
        assert!(
            matches!(last, Entry::Error { ref text } if text.contains(error)),
            "{command}: {last:?}"
        );
        assert_eq!(snapshot.board.items(), before.items(), "{command}: the board is unchanged");
    }
    // One edit that is made, among them.
    edit(&mut handle, &mut seen, "done 3").await;
    handle.commands.send(Command::Submit("go on".into())).unwrap();
    until_result(&mut handle).await;
    let bodies = server.bodies().await;
    let told = last_user_text(&bodies[2], Wire::Anthropic);
    assert!(
        told.contains("- marked #3 completed\n\nThe board now:"),
        "only the edit that was made: {told}"
    );
    assert!(!told.contains("#9"));
}

#[tokio::test(flavor = "multi_thread")]
async fn edits_are_saved_and_a_resumed_session_tells_the_model() {
    let server = FakeLlm::start(plan_then_answer(), Duration::ZERO).await;
    let (dir, state) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let store = SessionStore::new(state.path(), &dir.path().canonicalize().unwrap());
    let mut handle = start(
        &server,
        Wire::Anthropic,
        dir.path(),
        AgentConfig::default(),
        Sessions::New(store.clone()),
    );
    let mut seen = 0;
    handle.commands.send(Command::Submit("plan it".into())).unwrap();
    until_result(&mut handle).await;
    edit(&mut handle, &mut seen, "done 1").await;
    edit(&mut handle, &mut seen, "add Write the docs").await;
    edit(&mut handle, &mut seen, "move 4 2").await;
    // keel stops before the model heard of the edits.
    handle.commands.send(Command::Quit).unwrap();
    tokio::time::timeout(WAIT, handle.task).await.unwrap().unwrap();

    let (log, restored) = store.open_newest().unwrap();
    assert_eq!(restored.board.total(), 4);
    assert_eq!(restored.board_edits.len(), 3);
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
    let told = last_user_text(&bodies[2], Wire::Anthropic);
    assert!(told.starts_with("go on") && told.ends_with(EXPECTED_NOTE), "{told}");
    handle.commands.send(Command::Quit).unwrap();
    tokio::time::timeout(WAIT, handle.task).await.unwrap().unwrap();

    // Told once: a second resume has nothing left to tell.
    let (_, restored) = store.open_newest().unwrap();
    assert!(restored.board_edits.is_empty());
}
