//! The agent loop end to end with a scripted model: rounds, the reminder, the board, the turn's
//! limits and the person's commands. Wire-level placement is tested per provider against a
//! loopback server in the provider tests.

use keel::agent::{
    self, AgentConfig, AgentEvent, AgentHandle, ApprovalMode, Command, Decision, Snapshot,
    TurnOutcome,
};
use keel::llm::Provider;
use keel::llm::scripted::ScriptedProvider;
use keel::message::{ContentBlock, Role};
use keel::tools::{Tools, Workspace};
use serde_json::{Value, json};
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(30);

fn todo(statuses: &[&str]) -> Value {
    let items: Vec<Value> = statuses
        .iter()
        .enumerate()
        .map(|(i, status)| json!({"id": (i + 1).to_string(), "text": format!("step {}", i + 1), "status": status}))
        .collect();
    json!({"name": "todo", "input": {"items": items}})
}

fn call(name: &str, input: Value) -> Value {
    json!({"name": name, "input": input})
}

fn step(text: &str, tools: Vec<Value>) -> Value {
    json!({"text": text, "tools": tools})
}

fn script(steps: Vec<Value>) -> String {
    json!({"prompt": "go", "finished": "finished", "steps": steps}).to_string()
}

struct Run {
    _dir: tempfile::TempDir,
    handle: AgentHandle,
}

fn start(steps: Vec<Value>, config: AgentConfig, pace: Duration) -> Run {
    let dir = tempfile::tempdir().unwrap();
    let provider = ScriptedProvider::from_json(&script(steps), pace).unwrap();
    keel::tools::supervisor::set_program(env!("CARGO_BIN_EXE_keel"));
    let tools = Tools::new(Workspace::new(dir.path()).unwrap());
    let handle = agent::spawn(config, Some(Provider::Scripted(provider)), tools);
    Run { _dir: dir, handle }
}

impl Run {
    fn send(&self, command: Command) {
        self.handle.commands.send(command).unwrap();
    }

    /// Events until the turn's result.
    async fn until_result(&mut self) -> Vec<AgentEvent> {
        let mut events = Vec::new();
        loop {
            let event = tokio::time::timeout(WAIT, self.handle.events.recv())
                .await
                .expect("the turn did not end in time")
                .expect("the agent stopped");
            let done = matches!(event, AgentEvent::Result { .. });
            events.push(event);
            if done {
                return events;
            }
        }
    }

    /// The newest snapshot sent so far.
    fn latest(&mut self) -> Snapshot {
        let mut latest = None;
        while let Ok(snapshot) = self.handle.snapshots.try_recv() {
            latest = Some(snapshot);
        }
        latest.expect("no snapshot")
    }

    /// Ends the agent and returns every snapshot it sent that was not read yet.
    async fn rest_after_quit(&mut self) -> Vec<Snapshot> {
        self.send(Command::Quit);
        tokio::time::timeout(WAIT, &mut self.handle.task)
            .await
            .expect("the agent did not stop")
            .unwrap();
        std::iter::from_fn(|| self.handle.snapshots.try_recv().ok()).collect()
    }

    /// Waits until a snapshot satisfies `check`.
    async fn wait_for(&mut self, check: impl Fn(&Snapshot) -> bool) -> Snapshot {
        tokio::time::timeout(WAIT, async {
            loop {
                let snapshot = self.handle.snapshots.recv().await.expect("the agent stopped");
                if check(&snapshot) {
                    return snapshot;
                }
            }
        })
        .await
        .expect("the state never came")
    }
}

fn config(nag_threshold: u32) -> AgentConfig {
    AgentConfig {
        nag_threshold: keel::agent::NagThreshold::Fixed(nag_threshold),
        ..AgentConfig::default()
    }
}

fn result_of(events: &[AgentEvent]) -> (TurnOutcome, String, usize, usize) {
    match events.last() {
        Some(AgentEvent::Result { outcome, text, done, total, .. }) => {
            (*outcome, text.clone(), *done, *total)
        }
        other => panic!("no result: {other:?}"),
    }
}

/// Every tool_use in the history is answered by exactly one tool_result in the next message.
fn assert_every_call_answered(snapshot: &Snapshot) {
    let messages: Vec<_> = snapshot.history.iter().collect();
    for (index, message) in messages.iter().enumerate() {
        for (id, _, _) in message.tool_uses() {
            let next = messages.get(index + 1).expect("a tool call was left without results");
            let answers = next
                .content
                .iter()
                .filter(|block| matches!(block, ContentBlock::ToolResult { tool_use_id, .. } if tool_use_id == id))
                .count();
            assert_eq!(answers, 1, "tool call {id} has {answers} results");
        }
    }
}

fn listing() -> Value {
    call("read_file", json!({"path": "missing.txt"}))
}

#[tokio::test]
async fn the_reminder_follows_the_tool_results_after_three_rounds_without_todo() {
    let mut run = start(
        vec![
            step("plan", vec![todo(&["in_progress", "pending"])]),
            step("", vec![listing()]),
            step("", vec![listing()]),
            step("", vec![listing()]),
            step("", vec![todo(&["completed", "completed"])]),
            step("done", vec![]),
        ],
        config(3),
        Duration::ZERO,
    );
    run.send(Command::Submit("go".into()));
    let events = run.until_result().await;
    assert_eq!(result_of(&events), (TurnOutcome::Success, "done".into(), 2, 2));
    let reminders: Vec<_> =
        events.iter().filter(|event| matches!(event, AgentEvent::Reminder { .. })).collect();
    assert_eq!(reminders.len(), 1);

    let snapshot = run.latest();
    assert_every_call_answered(&snapshot);
    // user, (assistant, user) x 5, assistant: the reminder rides on the fourth round's results.
    let with_reminder: Vec<usize> = snapshot
        .history
        .iter()
        .enumerate()
        .filter(|(_, message)| {
            message.content.iter().any(|block| matches!(block, ContentBlock::Reminder { .. }))
        })
        .map(|(index, _)| index)
        .collect();
    assert_eq!(with_reminder, vec![8]);
    let message = &snapshot.history[8];
    assert_eq!(message.role, Role::User);
    assert!(matches!(message.content[0], ContentBlock::ToolResult { .. }));
    assert_eq!(
        message.content.last(),
        Some(&ContentBlock::Reminder {
            // The board follows the reminder's words, as the todo tool renders it.
            text: "<reminder>Update your todos in the same response as your next step's tool \
                   call, not in a response of its own.</reminder>\n\n[>] #1: step 1\n[ ] #2: step 2\n\n\
                   (0/2 completed)"
                .into()
        })
    );
    assert_eq!(snapshot.rounds_since_todo, 0);
    assert_eq!(snapshot.tools.len(), 3, "the tool pane lists the reads, not the board updates");
    assert!(snapshot.tools.iter().all(|run| run.name == "read_file"));
}

#[tokio::test]
async fn no_reminder_right_after_a_todo_call_or_when_everything_is_done() {
    let mut run = start(
        vec![
            step("", vec![listing()]),
            step("", vec![listing()]),
            step("", vec![todo(&["in_progress"])]),
            step("", vec![listing()]),
            step("", vec![todo(&["completed"])]),
            step("", vec![listing()]),
            step("", vec![listing()]),
            step("", vec![listing()]),
            step("", vec![listing()]),
            step("done", vec![]),
        ],
        config(3),
        Duration::ZERO,
    );
    run.send(Command::Submit("go".into()));
    let events = run.until_result().await;
    assert!(!events.iter().any(|event| matches!(event, AgentEvent::Reminder { .. })));
    let snapshot = run.latest();
    assert_eq!(snapshot.rounds_since_todo, 4, "the counter keeps counting while nothing is open");
}

#[tokio::test]
async fn the_reminder_with_no_board_fires_once_a_turn_and_never_when_off() {
    let steps = || {
        let mut steps: Vec<Value> = (0..7).map(|_| step("", vec![listing()])).collect();
        steps.push(step("done", vec![]));
        steps
    };
    let mut run = start(steps(), config(3), Duration::ZERO);
    run.send(Command::Submit("go".into()));
    let events = run.until_result().await;
    let rounds: Vec<u32> = events
        .iter()
        .filter_map(|event| match event {
            AgentEvent::Reminder { rounds_since_todo, .. } => Some(*rounds_since_todo),
            _ => None,
        })
        .collect();
    // With no board the reminder goes out once a turn (docs/board.md, "The reminder").
    assert_eq!(rounds, vec![3], "after round 3 of 7, and not again in the turn");

    let mut run = start(steps(), config(0), Duration::ZERO);
    run.send(Command::Submit("go".into()));
    let events = run.until_result().await;
    assert!(!events.iter().any(|event| matches!(event, AgentEvent::Reminder { .. })));
}

#[tokio::test]
async fn an_invalid_todo_update_is_an_error_result_and_the_board_stays() {
    let bad = json!({"name": "todo", "input": {"items": [
        {"id": "1", "text": "a", "status": "in_progress"},
        {"id": "2", "text": "b", "status": "in_progress"}
    ]}});
    let mut run = start(
        vec![
            step("", vec![todo(&["in_progress", "pending"])]),
            step("", vec![bad]),
            step("ok", vec![]),
        ],
        config(3),
        Duration::ZERO,
    );
    run.send(Command::Submit("go".into()));
    let events = run.until_result().await;
    let todo_events =
        events.iter().filter(|event| matches!(event, AgentEvent::Todo { .. })).count();
    assert_eq!(todo_events, 1, "only the valid update changes the board");
    let snapshot = run.latest();
    assert_eq!(snapshot.board.render(), "[>] #1: step 1\n[ ] #2: step 2\n\n(0/2 completed)");
    let results = &snapshot.history[4].content;
    assert_eq!(
        results[0],
        ContentBlock::ToolResult {
            tool_use_id: "toolu_demo_1_0".into(),
            content: "Only one task can be in_progress at a time".into(),
            is_error: true,
        }
    );
    assert_eq!(snapshot.rounds_since_todo, 0, "an invalid todo call still resets the count");
}

#[tokio::test]
async fn unknown_tools_and_bad_arguments_are_told_to_the_model_and_the_loop_goes_on() {
    let mut run = start(
        vec![
            step(
                "",
                vec![call("launch_rockets", json!({})), call("read_file", json!("{not json"))],
            ),
            step("recovered", vec![]),
        ],
        config(3),
        Duration::ZERO,
    );
    run.send(Command::Submit("go".into()));
    let events = run.until_result().await;
    assert_eq!(result_of(&events).0, TurnOutcome::Success);
    let snapshot = run.latest();
    assert_every_call_answered(&snapshot);
    let results: Vec<(String, bool)> = snapshot.history[2]
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::ToolResult { content, is_error, .. } => {
                Some((content.clone(), *is_error))
            }
            _ => None,
        })
        .collect();
    assert!(results[0].1 && results[0].0.contains("launch_rockets"), "{results:?}");
    assert!(results[1].1 && results[1].0.contains("not valid JSON"), "{results:?}");
}

#[tokio::test]
async fn the_round_limit_ends_the_turn_with_a_clear_message() {
    let steps: Vec<Value> = (0..10).map(|_| step("", vec![listing()])).collect();
    let mut run = start(steps, AgentConfig { max_rounds: 3, ..config(0) }, Duration::ZERO);
    run.send(Command::Submit("go".into()));
    let events = run.until_result().await;
    match events.last() {
        Some(AgentEvent::Result { outcome, error, rounds, .. }) => {
            assert_eq!(*outcome, TurnOutcome::MaxRounds);
            assert_eq!(*rounds, 3);
            assert!(error.as_deref().unwrap().contains("--max-rounds"));
        }
        other => panic!("{other:?}"),
    }
    assert_every_call_answered(&run.latest());
}

#[tokio::test]
async fn cancel_while_the_model_streams_keeps_no_partial_answer() {
    let mut run = start(
        vec![step("a long answer that takes a while to arrive", vec![])],
        config(3),
        Duration::from_secs(5),
    );
    run.send(Command::Submit("go".into()));
    run.wait_for(|snapshot| snapshot.activity == agent::Activity::Thinking).await;
    run.send(Command::Cancel);
    let events = run.until_result().await;
    assert_eq!(result_of(&events).0, TurnOutcome::Interrupted);
    let snapshot = run.wait_for(|snapshot| snapshot.activity == agent::Activity::Idle).await;
    assert_eq!(snapshot.history.len(), 1, "only the prompt: {:?}", snapshot.history);
    assert!(snapshot.streaming.is_none());
}

#[tokio::test]
async fn a_prompt_sent_during_a_turn_is_queued_and_runs_next() {
    let mut run = start(
        vec![step("first", vec![]), step("second", vec![])],
        config(3),
        Duration::from_millis(300),
    );
    run.send(Command::Submit("one".into()));
    run.send(Command::Submit("two".into()));
    let snapshot = run.wait_for(|snapshot| !snapshot.queued.is_empty()).await;
    assert_eq!(snapshot.queued.iter().cloned().collect::<Vec<_>>(), vec!["two".to_owned()]);
    assert_eq!(result_of(&run.until_result().await).1, "first");
    assert_eq!(result_of(&run.until_result().await).1, "second");
}

#[tokio::test]
async fn snapshots_share_the_history_instead_of_copying_it() {
    let mut run = start(
        vec![
            step("plan", vec![todo(&["in_progress", "pending"])]),
            step("", vec![listing()]),
            step("", vec![listing()]),
            step("done", vec![]),
        ],
        config(3),
        Duration::ZERO,
    );
    run.send(Command::Submit("go".into()));
    run.until_result().await;
    let snapshots = run.rest_after_quit().await;
    assert!(snapshots.windows(2).all(|pair| pair[0].seq < pair[1].seq), "seq grows");
    // Between two snapshots the agent sent, a history (or board) that did not change is the same
    // data in memory, not a copy of it; one that changed is a new version. (A history of a
    // message or two is stored inline and copied, which costs no more than sharing it.)
    let (mut shared_history, mut shared_board) = (0, 0);
    for pair in snapshots.windows(2) {
        let (before, after) = (&pair[0], &pair[1]);
        if before.history == after.history && !before.history.is_inline() {
            assert!(before.history.ptr_eq(&after.history), "seq {}: history copied", after.seq);
            shared_history += 1;
        } else {
            assert!(!before.history.ptr_eq(&after.history));
        }
        if before.board == after.board {
            assert!(std::sync::Arc::ptr_eq(&before.board, &after.board), "seq {}", after.seq);
            shared_board += 1;
        }
    }
    assert!(shared_history > 3 && shared_board > 3, "{shared_history} and {shared_board} shared");
    let last = snapshots.last().unwrap();
    assert_eq!(last.history.len(), 8);
    assert_eq!(last.board.total(), 2);
}

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
    assert_eq!(snapshot.rounds_since_todo, 2);
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
