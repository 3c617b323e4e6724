//! A child agent is never wider than its parent: the same approval mode (its asks shown in the
//! parent's approval box, naming it, and "always" answers the session's), read-only rules under
//! plan mode and for explorers, the person's interrupt stopping it, and its file changes undone
//! with the parent's turn.

use crate::support::agent::{WAIT, Wire, start, until_result};
use crate::support::llm::family::{ChildScript, FamilyLlm, child};
use crate::support::llm::{text, tool};
use keel::agent::journal::SessionStore;
use keel::agent::{
    AgentConfig, AgentEvent, ApprovalMode, ChildStatus, Command, Decision, Entry, Sessions,
};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

fn item(id: &str) -> Value {
    json!({"items": [{"id": id, "text": format!("Step {id}"), "status": "pending"}]})
}

/// The text of every tool result a request carries (Anthropic).
fn results(body: &Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|message| message["content"].as_array().cloned().unwrap_or_default())
        .filter(|block| block["type"] == "tool_result")
        .map(|block| block["content"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// A child that tries to change things, then reports.
fn meddler(marker: &str) -> ChildScript {
    child(
        marker,
        vec![
            tool("write_file", json!({"path": "a.txt", "content": "changed\n"})),
            tool("bash", json!({"command": "touch b.txt"})),
            tool("read_file", json!({"path": "notes.txt"})),
            text("Report: tried."),
        ],
    )
}

async fn meddle(
    config: AgentConfig,
    call: Value,
) -> (FamilyLlm, tempfile::TempDir, Vec<AgentEvent>) {
    let parent = vec![tool("task", call), text("Done.")];
    let server = FamilyLlm::start(parent, vec![meddler("MEDDLE")]).await;
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("notes.txt"), "notes\n").unwrap();
    let mut handle = start(&server, Wire::Anthropic, work.path(), config, Sessions::Off);
    handle.commands.send(Command::Submit("Try.".into())).unwrap();
    let events = until_result(&mut handle).await;
    (server, work, events)
}

/// What the child's tools answered, in order.
fn child_answers(server: &FamilyLlm) -> Vec<String> {
    server.child("MEDDLE").iter().skip(1).filter_map(|body| results(body).pop()).collect()
}

#[tokio::test]
async fn a_general_child_of_a_plan_mode_parent_runs_under_read_only_rules() {
    let config = AgentConfig { plan: true, approval: ApprovalMode::Auto, ..AgentConfig::default() };
    let general = json!({"prompt": "MEDDLE: change a.txt", "kind": "general"});
    let (server, work, _) = meddle(config, general).await;
    let answers = child_answers(&server);
    assert_eq!(answers.len(), 3, "{answers:?}");
    let why = "the agent that started this child is in plan mode, so nothing may change until \
               the person approves the plan. Report what you would change instead.";
    assert_eq!(answers[0], format!("`write_file` is not allowed: {why}"));
    assert!(answers[1].starts_with("Only commands that just read may run"), "{}", answers[1]);
    assert!(answers[1].ends_with(why), "{}", answers[1]);
    assert_eq!(answers[2], "     1\tnotes\n", "reading is allowed");
    assert!(!work.path().join("a.txt").exists() && !work.path().join("b.txt").exists());
    assert!(results(server.parent().last().unwrap())[0].starts_with("Report: tried."));

    // An item is work: it waits for the plan's approval.
    let config = AgentConfig { plan: true, approval: ApprovalMode::Auto, ..AgentConfig::default() };
    let parent = vec![
        tool("todo", item("1")),
        tool("task", json!({"prompt": "MEDDLE", "item": "1"})),
        text("Planned."),
    ];
    let server = FamilyLlm::start(parent, vec![meddler("MEDDLE")]).await;
    let mut handle = start(&server, Wire::Anthropic, work.path(), config, Sessions::Off);
    handle.commands.send(Command::Submit("Plan.".into())).unwrap();
    until_result(&mut handle).await;
    let refused = results(server.parent().last().unwrap()).pop().unwrap();
    assert!(refused.starts_with("Plan mode: item #1 cannot be handed to a child"), "{refused}");
    assert!(server.child("MEDDLE").is_empty());
}

#[tokio::test]
async fn an_explorer_only_reads_and_a_read_only_parents_child_is_refused_what_it_would_be() {
    let explore = json!({"prompt": "MEDDLE: look"});
    let (server, work, _) =
        meddle(AgentConfig { approval: ApprovalMode::Auto, ..AgentConfig::default() }, explore)
            .await;
    let answers = child_answers(&server);
    assert_eq!(
        answers[0], "Unknown tool `write_file`. Available tools: bash, read_file, grep, glob.",
        "an explorer is not offered what writes"
    );
    assert!(
        answers[1].ends_with(
            "this child agent explores and only reads. Report what should \
                                  change instead."
        ),
        "{}",
        answers[1]
    );
    assert!(!work.path().join("b.txt").exists());

    let read_only = AgentConfig { approval: ApprovalMode::ReadOnly, ..AgentConfig::default() };
    let general = json!({"prompt": "MEDDLE: change a.txt", "kind": "general"});
    let (server, work, _) = meddle(read_only, general).await;
    let answers = child_answers(&server);
    assert!(
        answers[0].starts_with("keel is in read-only mode: `write_file` is not allowed"),
        "{}",
        answers[0]
    );
    assert!(
        answers[1].starts_with("keel is in read-only mode: `bash` is not allowed"),
        "{}",
        answers[1]
    );
    assert_eq!(answers[2], "     1\tnotes\n");
    assert!(!work.path().join("a.txt").exists() && !work.path().join("b.txt").exists());
}

#[tokio::test]
async fn in_ask_mode_the_parents_box_names_the_child_and_always_is_the_sessions() {
    let parent = vec![
        tool("todo", item("1")),
        tool("task", json!({"prompt": "WRITER: write", "item": "1", "description": "Write two"})),
        tool("write_file", json!({"path": "c.txt", "content": "parent\n"})),
        text("Done."),
    ];
    let writer = child(
        "WRITER",
        vec![
            tool("write_file", json!({"path": "a.txt", "content": "a\n"})),
            tool("write_file", json!({"path": "b.txt", "content": "b\n"})),
            text("Report: wrote a and b."),
        ],
    );
    let server = FamilyLlm::start(parent, vec![writer]).await;
    let work = tempfile::tempdir().unwrap();
    let config = AgentConfig { approval: ApprovalMode::Ask, ..AgentConfig::default() };
    let mut handle = start(&server, Wire::Anthropic, work.path(), config, Sessions::Off);
    handle.commands.send(Command::Submit("Write.".into())).unwrap();
    let asked = tokio::time::timeout(WAIT, async {
        loop {
            let snapshot = handle.snapshots.recv().await.unwrap();
            if let Some(request) = snapshot.pending_approval.clone() {
                return (request, snapshot);
            }
        }
    })
    .await
    .expect("the child's ask was never shown");
    let (request, snapshot) = asked;
    assert_eq!(request.agent.as_deref(), Some("child a1 · Write two · item #1"));
    assert_eq!(request.tool, "write_file");
    assert_eq!(request.detail, "a.txt");
    assert_eq!(snapshot.activity, keel::agent::Activity::AwaitingApproval);
    assert!(snapshot.children[0].is_running());
    let first_id = request.id.clone();
    handle
        .commands
        .send(Command::Approve { id: request.id.clone(), decision: Decision::Always })
        .unwrap();
    let mut asked_again = Vec::new();
    let events = tokio::time::timeout(WAIT, async {
        let mut events = Vec::new();
        loop {
            tokio::select! {
                Some(snapshot) = handle.snapshots.recv() => {
                    if let Some(request) = snapshot.pending_approval
                        && request.id != first_id
                    {
                        asked_again.push(request.id.clone());
                    }
                }
                Some(event) = handle.events.recv() => {
                    let done = matches!(event, AgentEvent::Result { .. });
                    events.push(event);
                    if done { return events; }
                }
            }
        }
    })
    .await
    .unwrap();
    assert!(asked_again.is_empty(), "always covered the rest: {asked_again:?}");
    for (file, content) in [("a.txt", "a\n"), ("b.txt", "b\n"), ("c.txt", "parent\n")] {
        assert_eq!(std::fs::read_to_string(work.path().join(file)).unwrap(), content);
    }
    assert!(matches!(events.last(), Some(AgentEvent::Result { done: 1, total: 1, .. })));
}

#[tokio::test]
async fn the_persons_interrupt_stops_every_child_and_leaves_the_item_in_progress() {
    let parent = vec![
        tool("todo", item("1")),
        tool("task", json!({"prompt": "SLEEPER: wait", "item": "1"})),
        text("Never read."),
    ];
    let sleeper = child(
        "SLEEPER",
        vec![tool("bash", json!({"command": "echo started; sleep 30"})), text("Slept.")],
    );
    let server = FamilyLlm::start(parent, vec![sleeper]).await;
    let work = tempfile::tempdir().unwrap();
    let config = AgentConfig { approval: ApprovalMode::Auto, ..AgentConfig::default() };
    let mut handle = start(&server, Wire::Anthropic, work.path(), config, Sessions::Off);
    handle.commands.send(Command::Submit("Wait.".into())).unwrap();
    let mut events = Vec::new();
    tokio::time::timeout(WAIT, async {
        loop {
            let event = handle.events.recv().await.unwrap();
            let running = matches!(&event, AgentEvent::Child { event, .. } if matches!(**event, AgentEvent::ToolStart { .. }));
            events.push(event);
            if running {
                return;
            }
        }
    })
    .await
    .unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let interrupted = Instant::now();
    handle.commands.send(Command::Cancel).unwrap();
    events.extend(until_result(&mut handle).await);
    assert!(interrupted.elapsed() < Duration::from_secs(10), "the child's command was not stopped");
    assert!(events.iter().any(|event| matches!(
        event,
        AgentEvent::AgentEnd { status: ChildStatus::Interrupted, .. }
    )));
    let task_end = events.iter().find_map(|event| match event {
        AgentEvent::ToolEnd { name, output, .. } if name == "task" => Some(output.clone()),
        _ => None,
    });
    let output = task_end.unwrap();
    assert!(output.starts_with("interrupted by user\nThe child agent a1 (item #1) stopped before it finished: the person interrupted it. Item #1 stays in progress."), "{output}");
    let Some(AgentEvent::Result { outcome, done: 0, total: 1, .. }) = events.last() else {
        panic!()
    };
    assert_eq!(*outcome, keel::agent::TurnOutcome::Interrupted);
    assert_eq!(server.parent().len(), 2, "the parent asked nothing more");
}

#[tokio::test]
async fn a_childs_changes_are_undone_with_the_parents_turn() {
    for saved in [false, true] {
        let parent = vec![
            tool("todo", item("1")),
            tool("task", json!({"prompt": "CHANGER: change", "item": "1"})),
            text("Done."),
        ];
        let changer = child(
            "CHANGER",
            vec![
                tool("write_file", json!({"path": "a.txt", "content": "new\n"})),
                tool("bash", json!({"command": "echo made > b.txt"})),
                text("Report: changed."),
            ],
        );
        let server = FamilyLlm::start(parent, vec![changer]).await;
        let work = tempfile::tempdir().unwrap();
        std::fs::write(work.path().join("a.txt"), "old\n").unwrap();
        let state = tempfile::tempdir().unwrap();
        let sessions = if saved {
            Sessions::New(SessionStore::new(state.path(), &work.path().canonicalize().unwrap()))
        } else {
            Sessions::Off
        };
        let config = AgentConfig { approval: ApprovalMode::Auto, ..AgentConfig::default() };
        let mut handle = start(&server, Wire::Anthropic, work.path(), config, sessions);
        handle.commands.send(Command::Submit("Change.".into())).unwrap();
        until_result(&mut handle).await;
        assert_eq!(std::fs::read_to_string(work.path().join("a.txt")).unwrap(), "new\n");
        handle.commands.send(Command::Undo).unwrap();
        crate::support::agent::wait_for(&mut handle, |snapshot| {
            matches!(snapshot.transcript.last(), Some(Entry::Notice { text }) if text.starts_with("Undid"))
        })
        .await;
        assert_eq!(
            std::fs::read_to_string(work.path().join("a.txt")).unwrap(),
            "old\n",
            "saved: {saved}"
        );
        // What the child's command did, only the snapshots around it undo.
        assert_eq!(work.path().join("b.txt").exists(), !saved, "saved: {saved}");
    }
}

#[tokio::test]
async fn the_persons_interrupt_stops_every_explorer_at_once() {
    let looks: Vec<(String, Value)> = (1..=3)
        .map(|k| ("task".to_owned(), json!({"prompt": format!("[look {k}] look")})))
        .collect();
    let parent =
        vec![crate::support::llm::Step { tools: looks, ..Default::default() }, text("Never read.")];
    let slow = |k: usize| {
        child(&format!("[look {k}]"), vec![text("Found.")]).slow(Duration::from_secs(60))
    };
    let server = FamilyLlm::start(parent, (1..=3).map(slow).collect()).await;
    let work = tempfile::tempdir().unwrap();
    let config = AgentConfig { approval: ApprovalMode::Auto, ..AgentConfig::default() };
    let mut handle = start(&server, Wire::OpenAi, work.path(), config, Sessions::Off);
    handle.commands.send(Command::Submit("Look.".into())).unwrap();
    let mut events = Vec::new();
    tokio::time::timeout(WAIT, async {
        while server.requests().iter().filter(|(whose, _)| whose.is_some()).count() < 3 {
            while let Ok(event) = handle.events.try_recv() {
                events.push(event);
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the three explorers never asked their model");
    let interrupted = Instant::now();
    handle.commands.send(Command::Cancel).unwrap();
    events.extend(until_result(&mut handle).await);
    assert!(interrupted.elapsed() < Duration::from_secs(10), "the explorers were not stopped");
    let ended: Vec<ChildStatus> = events
        .iter()
        .filter_map(|event| match event {
            AgentEvent::AgentEnd { status, .. } => Some(*status),
            _ => None,
        })
        .collect();
    assert_eq!(ended, [ChildStatus::Interrupted; 3]);
    let Some(AgentEvent::Result { outcome, .. }) = events.last() else { panic!() };
    assert_eq!(*outcome, keel::agent::TurnOutcome::Interrupted);
}
