//! The agent loop end to end with a scripted model: rounds, the reminder, the board, bad tool
//! calls and the turn's limits. Wire-level placement is tested per provider against a loopback
//! server in the provider tests; the person's commands are in `agent_commands.rs`.

use crate::support::scripted::*;
use keel::agent::{self, AgentConfig, AgentEvent, Command, TurnOutcome};
use keel::message::{ContentBlock, Role};
use serde_json::{Value, json};
use std::time::Duration;

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
    assert_eq!(snapshot.reminder.since_todo(), 0);
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
    assert_eq!(
        snapshot.reminder.since_todo(),
        4,
        "the counter keeps counting while nothing is open"
    );
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
    assert_eq!(snapshot.reminder.since_todo(), 0, "an invalid todo call still resets the count");
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
