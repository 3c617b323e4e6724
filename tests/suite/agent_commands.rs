//! The person's commands to a running agent with a scripted model: approvals in each mode
//! (asked, refused, always, Esc), cancelling a running command, undo, and a resumed session
//! whose last call was left unanswered.

use crate::support::scripted::*;
use keel::agent::{self, AgentConfig, AgentEvent, ApprovalMode, Command, Decision, TurnOutcome};
use keel::llm::Provider;
use keel::llm::scripted::ScriptedProvider;
use keel::message::ContentBlock;
use keel::runtime::Workspace;
use keel::tools::Tools;
use serde_json::json;
use std::time::Duration;

#[tokio::test]
async fn ask_mode_waits_for_the_person_and_a_refusal_reaches_the_model() {
    let mut run = start(
        vec![step("", vec![call("bash", json!({"command": "echo hi"}))]), step("ok", vec![])],
        AgentConfig { approval: ApprovalMode::Ask, ..config(3) },
        Duration::ZERO,
    );
    run.send(Command::Submit("go".into()));
    let snapshot = run.wait_for(|snapshot| snapshot.pending_approval.is_some()).await;
    let request = snapshot.pending_approval.clone().unwrap();
    assert_eq!(request.tool, "bash");
    run.send(Command::Approve { id: request.id.clone(), decision: Decision::Deny });
    let events = run.until_result().await;
    assert_eq!(result_of(&events).0, TurnOutcome::Success);
    let snapshot = run.latest();
    assert!(snapshot.pending_approval.is_none());
    assert!(matches!(
        &snapshot.history[2].content[0],
        ContentBlock::ToolResult { content, is_error: true, .. } if content.contains("declined")
    ));
}

#[tokio::test]
async fn read_only_mode_refuses_commands_without_asking() {
    let mut run = start(
        vec![
            step("", vec![call("bash", json!({"command": "touch ran.txt"}))]),
            step("", vec![call("write_file", json!({"path": "a", "content": "b"}))]),
            step(
                "",
                vec![call(
                    "edit_file",
                    json!({"path": "kept.txt", "old_text": "old", "new_text": "new"}),
                )],
            ),
            step("ok", vec![]),
        ],
        AgentConfig { approval: ApprovalMode::ReadOnly, ..config(0) },
        Duration::ZERO,
    );
    std::fs::write(run._dir.path().join("kept.txt"), "old").unwrap();
    run.send(Command::Submit("go".into()));
    assert_eq!(result_of(&run.until_result().await).0, TurnOutcome::Success);
    let snapshots = run.rest_after_quit().await;
    let asked = snapshots.iter().filter(|snapshot| snapshot.pending_approval.is_some()).count();
    assert_eq!(asked, 0, "read-only refuses without asking");
    let snapshot = snapshots.last().unwrap();
    for index in [2, 4, 6] {
        assert!(
            matches!(
                &snapshot.history[index].content[0],
                ContentBlock::ToolResult { content, is_error: true, .. } if content.contains("read-only")
            ),
            "{:?}",
            snapshot.history[index]
        );
    }
    assert!(!run._dir.path().join("ran.txt").exists());
    assert!(!run._dir.path().join("a").exists());
    assert_eq!(std::fs::read_to_string(run._dir.path().join("kept.txt")).unwrap(), "old");
}

#[tokio::test]
async fn cancel_kills_a_running_command_and_every_call_still_gets_a_result() {
    let mut run = start(
        vec![
            step(
                "",
                vec![
                    call("bash", json!({"command": "sleep 600"})),
                    call("bash", json!({"command": "echo never"})),
                ],
            ),
            step("unreachable", vec![]),
        ],
        config(3),
        Duration::ZERO,
    );
    run.send(Command::Submit("go".into()));
    run.wait_for(|snapshot| matches!(snapshot.activity, agent::Activity::RunningTool { .. })).await;
    run.send(Command::Cancel);
    // The command sleeps far longer than the hang guard: only killing it ends the turn in time.
    let events = run.until_result().await;
    assert_eq!(result_of(&events).0, TurnOutcome::Interrupted);
    let snapshot = run.wait_for(|snapshot| snapshot.activity == agent::Activity::Idle).await;
    assert_every_call_answered(&snapshot);
    let results: Vec<&str> = snapshot.history[2]
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::ToolResult { content, .. } => Some(content.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(results.len(), 2);
    assert!(results.iter().all(|content| content.contains(agent::INTERRUPTED)), "{results:?}");
    assert_eq!(snapshot.history.len(), 3, "the turn stops: no further request");
}

#[tokio::test]
async fn always_allows_the_same_first_word_without_asking_again() {
    let mut run = start(
        vec![
            step("", vec![call("bash", json!({"command": "echo one"}))]),
            step("", vec![call("bash", json!({"command": "echo two"}))]),
            step("ok", vec![]),
        ],
        AgentConfig { approval: ApprovalMode::Ask, ..config(3) },
        Duration::ZERO,
    );
    run.send(Command::Submit("go".into()));
    let snapshot = run.wait_for(|snapshot| snapshot.pending_approval.is_some()).await;
    let id = snapshot.pending_approval.clone().unwrap().id.clone();
    run.send(Command::Approve { id, decision: Decision::Always });
    let events = run.until_result().await;
    assert_eq!(result_of(&events).0, TurnOutcome::Success);
    let asked = std::iter::from_fn(|| run.handle.snapshots.try_recv().ok())
        .filter(|snapshot| snapshot.pending_approval.is_some())
        .count();
    assert_eq!(asked, 0, "the second echo ran without asking");
    let outputs: Vec<String> = events
        .iter()
        .filter_map(|event| match event {
            AgentEvent::ToolEnd { output, .. } => Some(output.clone()),
            _ => None,
        })
        .collect();
    assert!(outputs[0].contains("one") && outputs[1].contains("two"), "{outputs:?}");
}

#[tokio::test]
async fn escape_at_the_approval_prompt_refuses_and_ends_the_turn() {
    let mut run = start(
        vec![
            step("", vec![call("write_file", json!({"path": "a.txt", "content": "x"}))]),
            step("no", vec![]),
        ],
        AgentConfig { approval: ApprovalMode::Ask, ..config(3) },
        Duration::ZERO,
    );
    run.send(Command::Submit("go".into()));
    let snapshot = run.wait_for(|snapshot| snapshot.pending_approval.is_some()).await;
    let request = snapshot.pending_approval.clone().unwrap();
    assert!(request.diff.as_deref().unwrap().contains("+x"), "the modal shows the diff");
    run.send(Command::Approve { id: request.id.clone(), decision: Decision::DenyAndStop });
    assert_eq!(result_of(&run.until_result().await).0, TurnOutcome::Interrupted);
    assert!(!run._dir.path().join("a.txt").exists());
    assert_every_call_answered(&run.wait_for(|s| s.activity == agent::Activity::Idle).await);
}

#[tokio::test]
async fn undo_takes_back_the_last_turns_writes() {
    let mut run = start(
        vec![
            step("", vec![call("write_file", json!({"path": "a.txt", "content": "new"}))]),
            step("written", vec![]),
        ],
        config(3),
        Duration::ZERO,
    );
    std::fs::write(run._dir.path().join("a.txt"), "old").unwrap();
    run.send(Command::Submit("go".into()));
    run.until_result().await;
    assert_eq!(std::fs::read_to_string(run._dir.path().join("a.txt")).unwrap(), "new");
    run.send(Command::Undo);
    let snapshot = run
        .wait_for(|snapshot| {
            matches!(snapshot.transcript.last(), Some(agent::Entry::Notice { text }) if text.starts_with("Undid"))
        })
        .await;
    // A turn that only wrote is undone whole by its file records: nothing is said of bash.
    let Some(agent::Entry::Notice { text }) = snapshot.transcript.last() else { unreachable!() };
    assert!(text.contains("restored a.txt"), "{text}");
    assert!(!text.contains("not what bash did"), "{text}");
    assert_eq!(std::fs::read_to_string(run._dir.path().join("a.txt")).unwrap(), "old");
}

#[tokio::test]
async fn a_resumed_session_answers_a_dangling_tool_call_and_keeps_board_and_counter() {
    use keel::agent::journal::{self, Record, SessionStore};
    use keel::message::Message;
    let dir = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let store = SessionStore::new(state.path(), &dir.path().canonicalize().unwrap());
    let mut log = store.create().unwrap();
    let mut board = keel::board::Board::default();
    board.update(&json!({"items": [{"id": "1", "text": "a", "status": "in_progress"}]})).unwrap();
    log.append(&Record::Message { message: Message::user_text("go") }).unwrap();
    log.append(&Record::Board { items: board.items().to_vec() }).unwrap();
    log.append(&Record::Rounds { rounds_since_todo: 2 }).unwrap();
    log.append(&Record::Message {
        message: Message::assistant(vec![ContentBlock::ToolUse {
            id: "t1".into(),
            name: "bash".into(),
            input: json!({"command": "ls"}),
        }]),
    })
    .unwrap();
    let id = log.id().to_owned();
    drop(log);

    let (log, restored) = store.open(&id).unwrap();
    let provider = ScriptedProvider::from_json(&script(vec![]), Duration::ZERO).unwrap();
    let tools = Tools::new(Workspace::new(dir.path()).unwrap());
    let handle = agent::spawn_with_session(
        config(3),
        Some(Provider::Scripted(provider)),
        tools,
        agent::Sessions::Resume(store.clone(), log, restored),
    );
    let mut run = Run { _dir: dir, handle };
    let snapshot = run.wait_for(|_| true).await;
    assert_eq!(snapshot.board.as_ref(), &board);
    assert_eq!(snapshot.reminder.since_todo(), 2);
    assert_every_call_answered(&snapshot);
    // Cut off by a crash, not by the person: the model is told to check before repeating it.
    assert!(matches!(
        &snapshot.history[2].content[0],
        ContentBlock::ToolResult { content, is_error: true, .. } if content == journal::CUT_OFF
    ));
    assert!(!format!("{:?}", snapshot.history).contains(agent::INTERRUPTED));
    // The answer was saved too: reopening (once the agent has let go of it) finds nothing
    // dangling.
    run.send(Command::Quit);
    tokio::time::timeout(WAIT, run.handle.task).await.expect("the agent did not stop").unwrap();
    let (_, again) = store.open(&id).unwrap();
    assert_eq!(again.history.len(), 3);
}
