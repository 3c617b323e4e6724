//! Checks in a live agent, against the loopback server: the person's `/todo done` on an item
//! with a check (between turns at once, during a turn once the round's calls are done), a
//! failing check leaving the board exactly as it was for both of the model's forms, the
//! timeout, and the plain note after three failures in a row. The helpers the other
//! `board_checks_*` suites share live here.

use crate::support::agent::{Wire, latest, start, until_result, wait_for};
use crate::support::llm::{FakeLlm, Step, text, tool};
use keel::agent::{AgentConfig, AgentEvent, AgentHandle, Command, Entry, Sessions, Snapshot};
use keel::board::{BoardEdit, Status};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// What the person reads when their edit was refused.
const NOT_CHANGED: &str = "The board was not changed: ";
/// The plain note after the third failure in a row.
const STALE_NOTE: &str = "fix the cause, or re-plan";

/// Board item `id` (`Step {id}`) with `status`, and `check` when given.
pub(super) fn item(id: &str, status: &str, check: Option<&str>) -> Value {
    let mut item = json!({"id": id, "text": format!("Step {id}"), "status": status});
    if let Some(check) = check {
        item["check"] = json!(check);
    }
    item
}

/// The model's `todo` call with the whole list `items`.
pub(super) fn whole(items: &[Value]) -> Step {
    tool("todo", json!({ "items": items }))
}

/// The model's `todo` call that sets item `id`'s status.
pub(super) fn set(id: &str, status: &str) -> Step {
    tool("todo", json!({"update": [{"id": id, "status": status}]}))
}

/// A model that plans one item with `check`, claims it done, and says `last`.
pub(super) fn claim_once(check: &str, last: &str) -> Vec<Step> {
    vec![whole(&[item("1", "in_progress", Some(check))]), set("1", "completed"), text(last)]
}

/// What each `todo` call of `events` answered, in order: whether it was an error, and the text.
pub(super) fn todo_answers(events: &[AgentEvent]) -> Vec<(bool, String)> {
    events
        .iter()
        .filter_map(|event| match event {
            AgentEvent::ToolEnd { name, is_error, output, .. } if name == "todo" => {
                Some((*is_error, output.clone()))
            }
            _ => None,
        })
        .collect()
}

/// The items whose checks `events` told as starting, in order.
pub(super) fn checks_started(events: &[AgentEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|event| match event {
            AgentEvent::CheckStart { item, .. } => Some(item.clone()),
            _ => None,
        })
        .collect()
}

/// The checks `events` told as ending, in order: the item, and whether it passed.
pub(super) fn checks_ended(events: &[AgentEvent]) -> Vec<(String, bool)> {
    events
        .iter()
        .filter_map(|event| match event {
            AgentEvent::CheckEnd { item, passed, .. } => Some((item.clone(), *passed)),
            _ => None,
        })
        .collect()
}

/// The boards the `todo` events of `events` told, rendered as the model reads them.
fn todo_boards(events: &[AgentEvent]) -> Vec<Vec<(String, Status, bool)>> {
    events
        .iter()
        .filter_map(|event| match event {
            AgentEvent::Todo { items, .. } => Some(
                items
                    .iter()
                    .map(|item| (item.id.clone(), item.status, item.check_passed))
                    .collect(),
            ),
            _ => None,
        })
        .collect()
}

/// A live agent over a fresh workspace, talking to a server playing `steps`.
pub(super) struct Live {
    pub server: FakeLlm,
    pub work: tempfile::TempDir,
    pub handle: AgentHandle,
    /// The newest snapshot read so far.
    pub last: Option<Snapshot>,
}

impl Live {
    pub(super) async fn start(steps: Vec<Step>, delay: Duration, config: AgentConfig) -> Self {
        let server = FakeLlm::start(steps, delay).await;
        let work = tempfile::tempdir().unwrap();
        let handle = start(&server, Wire::Anthropic, work.path(), config, Sessions::Off);
        Self { server, work, handle, last: None }
    }

    /// Runs a turn on `prompt`; its events.
    pub(super) async fn turn(&mut self, prompt: &str) -> Vec<AgentEvent> {
        self.handle.commands.send(Command::Submit(prompt.into())).unwrap();
        until_result(&mut self.handle).await
    }

    /// The newest snapshot sent so far.
    pub(super) fn newest(&mut self) -> Snapshot {
        while let Ok(snapshot) = self.handle.snapshots.try_recv() {
            self.last = Some(snapshot);
        }
        self.last.clone().expect("no snapshot")
    }

    /// Sends the person's edit and waits until a check it runs starts.
    async fn check_started_by(&mut self, command: &str) {
        let edit = BoardEdit::parse(command).unwrap();
        self.handle.commands.send(Command::EditBoard(edit)).unwrap();
        tokio::time::timeout(crate::support::agent::WAIT, async {
            while !matches!(self.handle.events.recv().await, Some(AgentEvent::CheckStart { .. })) {}
        })
        .await
        .expect("no check started");
    }

    /// Sends the person's edit between turns and waits until it is made or refused: the
    /// snapshot then, and the entry that told the person.
    pub(super) async fn edit(&mut self, command: &str) -> (Snapshot, Entry) {
        let before = self.newest().transcript.len();
        let edit = BoardEdit::parse(command).unwrap();
        self.handle.commands.send(Command::EditBoard(edit)).unwrap();
        let snapshot = wait_for(&mut self.handle, |snapshot| {
            snapshot.transcript.iter().skip(before).any(edit_ended)
        })
        .await;
        let told = snapshot.transcript.iter().skip(before).find(|entry| edit_ended(entry));
        let told = told.cloned().unwrap();
        self.last = Some(snapshot.clone());
        (snapshot, told)
    }
}

/// Whether `entry` tells the person their edit was made or refused.
fn edit_ended(entry: &Entry) -> bool {
    match entry {
        Entry::Notice { text } => text.starts_with("You "),
        Entry::Error { text } => text.starts_with(NOT_CHANGED),
        _ => false,
    }
}

/// The text of the request's newest message.
fn newest_message(body: &Value) -> String {
    body["messages"].as_array().unwrap().last().unwrap().to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_persons_done_runs_the_check_between_turns_and_the_model_hears_only_a_pass() {
    let steps = vec![
        whole(&[item("1", "in_progress", Some("test -e a.txt")), item("2", "pending", None)]),
        text("Planned."),
        text("Carrying on."),
    ];
    let mut live = Live::start(steps, Duration::ZERO, AgentConfig::default()).await;
    live.turn("plan it").await;
    let before = live.newest().board;

    let (snapshot, told) = live.edit("done 1").await;
    let Entry::Error { text } = told else { panic!("not refused: {told:?}") };
    assert!(text.contains("Item 1: its check failed (exit 1): test -e a.txt"), "{text}");
    assert_eq!(snapshot.board.items(), before.items(), "the board exactly as it was");
    assert!(!snapshot.checks["1"].passed());

    std::fs::write(live.work.path().join("a.txt"), "done\n").unwrap();
    let (snapshot, told) = live.edit("done 1").await;
    assert_eq!(
        told,
        Entry::Notice {
            text: "You marked #1 completed; the model is told in its next request.".into()
        }
    );
    let first = &snapshot.board.items()[0];
    assert_eq!((first.status, first.check_passed), (Status::Completed, true));
    assert!(snapshot.checks["1"].passed());

    live.turn("go on").await;
    let bodies = live.server.bodies().await;
    let told = newest_message(&bodies[2]);
    assert!(told.contains("- marked #1 completed"), "{told}");
    assert!(told.contains("[x] #1: Step 1  (check passed)"), "{told}");
    assert_eq!(told.matches("- marked").count(), 1, "the refused edit is not told: {told}");
    assert!(!bodies.iter().any(|body| body.to_string().contains("its check failed")));
}

#[tokio::test(flavor = "multi_thread")]
async fn the_persons_done_sent_while_a_turn_runs_waits_for_the_rounds_calls() {
    let steps = vec![
        whole(&[item("1", "in_progress", Some("test -e a.txt"))]),
        tool("write_file", json!({"path": "a.txt", "content": "done\n"})),
        text("Done."),
    ];
    // Each answer takes a while, so the edit lands while the second request is out.
    let mut live = Live::start(steps, Duration::from_millis(500), AgentConfig::default()).await;
    live.handle.commands.send(Command::Submit("go".into())).unwrap();
    tokio::time::timeout(crate::support::agent::WAIT, async {
        while live.server.bodies().await.len() < 2 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .unwrap();
    let edit = BoardEdit::parse("done 1").unwrap();
    live.handle.commands.send(Command::EditBoard(edit)).unwrap();
    let events = until_result(&mut live.handle).await;

    // Run at once, the check would have failed: the file is written by the round's call.
    let wrote = events.iter().position(|event| {
        matches!(event, AgentEvent::ToolEnd { name, is_error: false, .. } if name == "write_file")
    });
    let checked = events.iter().position(|event| matches!(event, AgentEvent::CheckStart { .. }));
    assert!(wrote.unwrap() < checked.unwrap(), "{events:?}");
    assert_eq!(checks_ended(&events), [("1".to_owned(), true)]);
    let board = live.newest().board;
    assert_eq!((board.items()[0].status, board.items()[0].check_passed), (Status::Completed, true));
    let bodies = live.server.bodies().await;
    assert_eq!(bodies.len(), 3);
    let told = newest_message(&bodies[2]);
    assert!(told.contains("tool_result") && told.contains("- marked #1 completed"), "{told}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failing_check_leaves_the_board_exactly_as_it_was_for_both_forms() {
    let plan = [
        item("1", "in_progress", Some("test -e a.txt")),
        item("2", "pending", None),
        item("3", "pending", None),
    ];
    let steps = vec![
        whole(&plan),
        // The whole list: completes #1, renames #2 and starts it, adds #4.
        whole(&[
            item("1", "completed", None),
            json!({"id": "2", "text": "Step two, renamed", "status": "in_progress"}),
            item("3", "pending", None),
            item("4", "pending", None),
        ]),
        // An update: completes #1 and starts #2 beside other changes.
        tool(
            "todo",
            json!({"update": [
                {"id": "1", "status": "completed"},
                {"id": "2", "text": "Renamed again"},
                {"id": "3", "status": "completed"}
            ]}),
        ),
        text("Stuck."),
    ];
    for wire in [Wire::Anthropic, Wire::OpenAi] {
        let server = FakeLlm::start(steps.clone(), Duration::ZERO).await;
        let work = tempfile::tempdir().unwrap();
        let mut handle = start(&server, wire, work.path(), AgentConfig::default(), Sessions::Off);
        handle.commands.send(Command::Submit("go".into())).unwrap();
        let events = until_result(&mut handle).await;
        let answers = todo_answers(&events);
        assert_eq!(answers.len(), 3, "{wire:?}");
        let planned = answers[0].1.clone();
        for (refused, text) in &answers[1..] {
            assert!(*refused, "{wire:?}: {text}");
            assert!(text.contains("Item 1: its check failed (exit 1): test -e a.txt"), "{text}");
        }
        let boards = todo_boards(&events);
        assert_eq!(boards.len(), 1, "{wire:?}: only the plan was told: {boards:?}");
        let board = latest(&mut handle).board;
        assert_eq!(board.render(), planned, "{wire:?}: the board exactly as planned");
        assert_eq!(board.items()[1].text, "Step 2");
        assert_eq!(checks_ended(&events), [("1".to_owned(), false), ("1".to_owned(), false)]);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_check_that_outlives_check_timeout_is_refused_as_timed_out() {
    let config = AgentConfig { check_timeout: 1, ..AgentConfig::default() };
    let mut live = Live::start(claim_once("sleep 30", "Waiting."), Duration::ZERO, config).await;
    let began = Instant::now();
    let events = live.turn("go").await;
    assert!(began.elapsed() < Duration::from_secs(10), "took {:?}", began.elapsed());
    let (refused, text) = todo_answers(&events)[1].clone();
    assert!(refused, "{text}");
    assert!(text.starts_with("Item 1: its check failed (command timed out after 1"), "{text}");
    assert!(text.contains("): sleep 30"), "{text}");
    let end = events.iter().find_map(|event| match event {
        AgentEvent::CheckEnd { passed, exit_code, exit, .. } => {
            Some((*passed, *exit_code, exit.clone()))
        }
        _ => None,
    });
    let (passed, exit_code, exit) = end.unwrap();
    assert_eq!((passed, exit_code), (false, None));
    assert!(exit.starts_with("command timed out after 1"), "{exit}");
    let board = live.newest().board;
    assert_eq!(board.items()[0].status, Status::InProgress, "the board unchanged");
}

#[tokio::test(flavor = "multi_thread")]
async fn three_failures_in_a_row_bring_the_plain_note_and_a_pass_ends_the_run() {
    let steps = vec![
        whole(&[item("1", "in_progress", Some("test -e a.txt"))]),
        set("1", "completed"),
        set("1", "completed"),
        set("1", "completed"),
        text("Stuck."),
        tool("write_file", json!({"path": "a.txt", "content": "done\n"})),
        set("1", "completed"),
        text("Done."),
    ];
    let mut live = Live::start(steps, Duration::ZERO, AgentConfig::default()).await;
    let events = live.turn("go").await;
    let answers = todo_answers(&events);
    assert_eq!(answers.len(), 4);
    for (k, (refused, text)) in answers[1..].iter().enumerate() {
        assert!(*refused, "{text}");
        assert_eq!(text.contains(STALE_NOTE), k == 2, "claim {}: {text}", k + 1);
    }
    assert!(answers[3].1.contains("This check has now failed 3 times in a row."));
    let snapshot = live.newest();
    assert!(snapshot.checks["1"].stale());
    assert_eq!(snapshot.checks["1"].failures_in_row, 3);
    assert_eq!(checks_ended(&events).len(), 3);
    let ends = events.iter().filter(|event| matches!(event, AgentEvent::CheckEnd { .. }));
    for (k, end) in (1..).zip(ends) {
        let counted =
            matches!(end, AgentEvent::CheckEnd { failures_in_row, .. } if *failures_in_row == k);
        assert!(counted, "failure {k}: {end:?}");
    }

    let events = live.turn("try again").await;
    let (refused, text) = todo_answers(&events)[0].clone();
    assert!(!refused, "{text}");
    let snapshot = live.newest();
    assert!(snapshot.checks["1"].passed() && !snapshot.checks["1"].stale());
    assert_eq!(snapshot.checks["1"].failures_in_row, 0);
    assert_eq!(snapshot.board.items()[0].status, Status::Completed);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_prompt_sent_while_the_persons_check_runs_between_turns_is_taken_up_after_it() {
    let steps = vec![
        whole(&[item("1", "in_progress", Some("sleep 1"))]),
        text("Planned."),
        text("Went on."),
    ];
    let mut live = Live::start(steps, Duration::ZERO, AgentConfig::default()).await;
    live.turn("plan it").await;
    live.check_started_by("done 1").await;
    live.handle.commands.send(Command::Submit("go on".into())).unwrap();
    let events = until_result(&mut live.handle).await;
    assert_eq!(checks_ended(&events), [("1".to_owned(), true)], "the check ended first");
    assert!(events.contains(&AgentEvent::Prompt { text: "go on".into() }), "{events:?}");
    let bodies = live.server.bodies().await;
    assert_eq!(bodies.len(), 3, "the plan's two requests, and the prompt's");
    let told = newest_message(&bodies[2]);
    assert!(told.contains("go on") && told.contains("- marked #1 completed"), "{told}");
}

#[tokio::test(flavor = "multi_thread")]
async fn esc_on_the_persons_check_between_turns_hands_a_queued_prompt_back() {
    let steps = vec![whole(&[item("1", "in_progress", Some("sleep 20"))]), text("Planned.")];
    let mut live = Live::start(steps, Duration::ZERO, AgentConfig::default()).await;
    live.turn("plan it").await;
    live.check_started_by("done 1").await;
    live.handle.commands.send(Command::Submit("go on".into())).unwrap();
    live.handle.commands.send(Command::Cancel).unwrap();
    let snapshot = wait_for(&mut live.handle, |snapshot| snapshot.handed_back.count > 0).await;
    assert_eq!(snapshot.handed_back.prompts.iter().collect::<Vec<_>>(), ["go on"]);
    assert!(snapshot.queued.is_empty());
    assert_eq!(snapshot.board.items()[0].status, Status::InProgress, "the board unchanged");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(live.server.bodies().await.len(), 2, "the prompt was not sent");
}
