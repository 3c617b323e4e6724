//! Checks under the approval rules, in a live agent against the loopback server: under `ask`
//! the first run of each check text asks, naming the item, and "always" covers that text only;
//! "deny" refuses the update with the board unchanged, deny-and-stop stops the turn. Under
//! `--approval read-only` and in plan mode no check runs, so no item with one is completed,
//! while an item without one still is.

use super::board_checks_agent::{
    Live, checks_ended, checks_started, claim_once, item, set, todo_answers, whole,
};
use crate::support::agent::WAIT;
use crate::support::llm::text;
use keel::agent::{AgentConfig, AgentEvent, ApprovalMode, ApprovalRequest, Command, Decision};
use keel::agent::{Entry, TurnOutcome};
use keel::board::{BoardEdit, Status};
use std::time::Duration;

/// A check that is no read-only command, so `ask` asks before it runs.
const CHECK: &str = "bash ok.sh";
/// Another check text running the same script.
const OTHER_CHECK: &str = "bash ok.sh 3";

/// Runs a turn on `prompt`, answering the approval boxes it shows with `answers` in order;
/// returns the boxes shown and the turn's events.
async fn turn_answering(
    live: &mut Live,
    prompt: &str,
    mut answers: Vec<Decision>,
) -> (Vec<ApprovalRequest>, Vec<AgentEvent>) {
    answers.reverse();
    live.handle.commands.send(Command::Submit(prompt.into())).unwrap();
    let mut asked: Vec<ApprovalRequest> = Vec::new();
    let mut events = Vec::new();
    let (handle, last) = (&mut live.handle, &mut live.last);
    tokio::time::timeout(WAIT, async {
        loop {
            tokio::select! {
                Some(snapshot) = handle.snapshots.recv() => {
                    *last = Some(snapshot.clone());
                    let Some(request) = snapshot.pending_approval else { continue };
                    if asked.iter().any(|seen| seen.id == request.id) {
                        continue;
                    }
                    let decision = answers.pop().expect("asked more often than expected");
                    let id = request.id.clone();
                    asked.push((*request).clone());
                    handle.commands.send(Command::Approve { id, decision }).unwrap();
                }
                Some(event) = handle.events.recv() => {
                    let done = matches!(event, AgentEvent::Result { .. });
                    events.push(event);
                    if done {
                        return;
                    }
                }
            }
        }
    })
    .await
    .expect("the turn did not end in time");
    assert!(answers.is_empty(), "asked fewer times than expected: {asked:?}");
    (asked, events)
}

fn outcome(events: &[AgentEvent]) -> TurnOutcome {
    events
        .iter()
        .find_map(|event| match event {
            AgentEvent::Result { outcome, .. } => Some(*outcome),
            _ => None,
        })
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn ask_asks_once_per_check_text_and_deny_refuses_the_update() {
    let steps = vec![
        whole(&[
            item("1", "in_progress", Some(CHECK)),
            item("2", "pending", Some(CHECK)),
            item("3", "pending", Some(OTHER_CHECK)),
        ]),
        set("1", "completed"),
        set("2", "completed"),
        set("3", "completed"),
        set("3", "completed"),
        text("Not reached: the person stopped the turn."),
    ];
    let config = AgentConfig { approval: ApprovalMode::Ask, ..AgentConfig::default() };
    let mut live = Live::start(steps, Duration::ZERO, config).await;
    std::fs::write(live.work.path().join("ok.sh"), "exit 0\n").unwrap();
    let answers = vec![Decision::Always, Decision::Deny, Decision::DenyAndStop];
    let (asked, events) = turn_answering(&mut live, "go", answers).await;

    let shown: Vec<(Option<&str>, &str)> =
        asked.iter().map(|request| (request.check.as_deref(), request.detail.as_str())).collect();
    assert_eq!(
        shown,
        [
            (Some("#1 Step 1"), CHECK),
            (Some("#3 Step 3"), OTHER_CHECK),
            (Some("#3 Step 3"), OTHER_CHECK)
        ],
        "item 2's check is item 1's text, which always covered"
    );
    assert!(asked[0].always.is_some(), "always is offered: {:?}", asked[0]);

    let answers = todo_answers(&events);
    assert_eq!(answers.len(), 5, "{answers:?}");
    assert!(answers[..3].iter().all(|(refused, _)| !refused), "{answers:?}");
    let (refused, denied) = &answers[3];
    assert!(*refused);
    assert_eq!(
        denied,
        &format!(
            "Item 3: cannot be completed: its check ({OTHER_CHECK}) was declined by the \
             person: ask them how to go on"
        )
    );
    assert!(answers[4].0, "{answers:?}");
    assert_eq!(checks_started(&events), ["1", "2"], "a declined check does not run");

    assert_eq!(outcome(&events), TurnOutcome::Interrupted);
    assert_eq!(live.server.bodies().await.len(), 5, "no request after the stop");
    let board = live.newest().board;
    let statuses: Vec<Status> = board.items().iter().map(|item| item.status).collect();
    assert_eq!(statuses, [Status::Completed, Status::Completed, Status::Pending]);
}

/// Runs the model's claims of a checked item and of a plain one under `config`'s read-only
/// rules; then the person's `/todo done` of the checked one. Returns what each said.
async fn read_only_rules(config: AgentConfig) -> (String, String) {
    let steps = vec![
        whole(&[item("1", "in_progress", Some("test -e a.txt")), item("2", "pending", None)]),
        set("1", "completed"),
        set("2", "completed"),
        text("Planned."),
    ];
    let mut live = Live::start(steps, Duration::ZERO, config).await;
    // The check would pass, were it run.
    std::fs::write(live.work.path().join("a.txt"), "done\n").unwrap();
    let events = live.turn("go").await;
    assert!(checks_started(&events).is_empty(), "no check runs: {events:?}");
    let answers = todo_answers(&events);
    assert_eq!(answers.len(), 3, "{answers:?}");
    let (refused, model_read) = answers[1].clone();
    assert!(refused, "{model_read}");
    assert!(!answers[2].0, "an item without a check completes: {answers:?}");
    let board = live.newest().board;
    let statuses: Vec<Status> = board.items().iter().map(|item| item.status).collect();
    assert_eq!(statuses, [Status::InProgress, Status::Completed]);

    let (snapshot, told) = live.edit("done 1").await;
    let Entry::Error { text: person_read } = told else { panic!("not refused: {told:?}") };
    assert_eq!(snapshot.board.items(), board.items(), "the person's edit changed nothing");
    assert!(!snapshot.checks.contains_key("1"), "no check ran for the person either");
    (model_read, person_read)
}

#[tokio::test(flavor = "multi_thread")]
async fn under_approval_read_only_no_check_runs_and_the_refusal_says_why() {
    let config = AgentConfig { approval: ApprovalMode::ReadOnly, ..AgentConfig::default() };
    let (model_read, person_read) = read_only_rules(config).await;
    let why = "Item 1: cannot be completed: its check (test -e a.txt) does not run under \
               --approval read-only, where no command runs";
    assert_eq!(model_read, why);
    assert!(person_read.contains(why), "{person_read}");
}

#[tokio::test(flavor = "multi_thread")]
async fn in_plan_mode_no_check_runs_and_the_refusal_says_why() {
    let config = AgentConfig { plan: true, ..AgentConfig::default() };
    let (model_read, person_read) = read_only_rules(config).await;
    let why = "Item 1: cannot be completed: its check (test -e a.txt) does not run in plan mode";
    assert!(model_read.starts_with(why), "{model_read}");
    assert!(person_read.contains(why), "{person_read}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_persons_done_asks_before_its_check_runs_and_a_denial_changes_nothing() {
    let steps = vec![whole(&[item("1", "in_progress", Some(CHECK))]), text("Planned.")];
    let config = AgentConfig { approval: ApprovalMode::Ask, ..AgentConfig::default() };
    let mut live = Live::start(steps, Duration::ZERO, config).await;
    std::fs::write(live.work.path().join("ok.sh"), "exit 0\n").unwrap();
    live.turn("plan").await;
    let before = live.newest().board;
    let edit = BoardEdit::parse("done 1").unwrap();
    live.handle.commands.send(Command::EditBoard(edit)).unwrap();
    let asked = crate::support::agent::wait_for(&mut live.handle, |snapshot| {
        snapshot.pending_approval.is_some()
    })
    .await;
    let request = asked.pending_approval.unwrap();
    assert_eq!((request.check.as_deref(), request.detail.as_str()), (Some("#1 Step 1"), CHECK));
    let decision = Decision::Deny;
    live.handle.commands.send(Command::Approve { id: request.id.clone(), decision }).unwrap();
    let refused = crate::support::agent::wait_for(&mut live.handle, |snapshot| {
        matches!(snapshot.transcript.last(), Some(Entry::Error { .. }))
    })
    .await;
    let Some(Entry::Error { text }) = refused.transcript.last() else { unreachable!() };
    assert_eq!(
        text,
        &format!(
            "The board was not changed: Item 1: cannot be completed: its check ({CHECK}) was \
             declined."
        ),
        "the person is not told to ask themselves"
    );
    assert_eq!(refused.board.items(), before.items());
    assert!(!refused.checks.contains_key("1"), "the check did not run");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_persons_interrupt_stops_a_check_and_counts_no_failure() {
    let steps = claim_once("sleep 20", "Not reached: the person interrupted.");
    let mut live = Live::start(steps, Duration::ZERO, AgentConfig::default()).await;
    live.handle.commands.send(Command::Submit("go".into())).unwrap();
    let mut events = Vec::new();
    let began = tokio::time::timeout(WAIT, async {
        loop {
            let event = live.handle.events.recv().await.unwrap();
            let started = matches!(event, AgentEvent::CheckStart { .. });
            events.push(event);
            if started {
                return std::time::Instant::now();
            }
        }
    })
    .await
    .unwrap();
    // Under way, not only about to start.
    tokio::time::sleep(Duration::from_millis(300)).await;
    live.handle.commands.send(Command::Cancel).unwrap();
    events.extend(crate::support::agent::until_result(&mut live.handle).await);
    assert!(began.elapsed() < Duration::from_secs(10), "the check was stopped");
    assert_eq!(outcome(&events), TurnOutcome::Interrupted);
    assert_eq!(checks_ended(&events), [("1".to_owned(), false)]);
    let snapshot = live.newest();
    assert_eq!(snapshot.board.items()[0].status, Status::InProgress, "the board unchanged");
    let record = &snapshot.checks["1"];
    assert_eq!(record.failures_in_row, 0, "an interrupt is no failure of the item: {record:?}");
    assert_eq!(live.server.bodies().await.len(), 2, "no request after the interrupt");
}
