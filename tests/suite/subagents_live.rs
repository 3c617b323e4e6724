//! A child is never wider than its parent at any moment: plan mode turned on while a child runs
//! refuses the child's next change, a change of approval mode reaches a running child at its next
//! call, and a call the person allowed while plan mode (or a stricter mode) came on is refused
//! after all. The person's `/approval` may tighten the mode, and loosen it back to the one the
//! session started in, never further. (`subagents_e2e` drives the same through the TUI.)

use crate::support::agent::{WAIT, Wire, start, until_result, wait_for};
use crate::support::llm::family::{ChildScript, FamilyLlm, child};
use crate::support::llm::{text, tool};
use keel::agent::{
    AgentConfig, AgentEvent, AgentHandle, ApprovalMode, Command, Decision, Sessions,
};
use serde_json::{Value, json};
use std::path::Path;

/// What the model is told when the person says no.
const DECLINED: &str =
    "The user declined to run this tool call. Ask them what they would like to do instead.";
/// Why a child of a parent in plan mode may not change anything.
const UNDER_PLAN_MODE: &str = "the agent that started this child is in plan mode, so nothing \
may change until the person approves the plan. Report what you would change instead.";

/// A parent that hands one general step to the child `WRITER`, then ends.
fn parent() -> Vec<crate::support::llm::Step> {
    vec![
        tool("task", json!({"prompt": "WRITER: write", "kind": "general", "description": "Write"})),
        text("Done."),
    ]
}

/// A child that writes, waits for `release` to appear, then writes and runs a command that
/// writes.
fn writer() -> ChildScript {
    child(
        "WRITER",
        vec![
            tool("write_file", json!({"path": "one.txt", "content": "1\n"})),
            tool(
                "bash",
                json!({"command": "until [ -e release ]; do sleep 0.05; done; echo released"}),
            ),
            tool("write_file", json!({"path": "two.txt", "content": "2\n"})),
            tool("bash", json!({"command": "touch three.txt"})),
            text("Report: wrote."),
        ],
    )
}

/// The text of every tool result a request's last message carries (Anthropic).
fn results(body: &Value) -> Vec<String> {
    crate::support::keel_as::tool_results(std::slice::from_ref(body))
}

/// What the child's tools answered, in order.
fn child_answers(server: &FamilyLlm) -> Vec<String> {
    server.child("WRITER").iter().skip(1).flat_map(results).collect()
}

/// Waits until the child's command that waits for `release` has started.
async fn until_the_child_waits(handle: &mut AgentHandle, events: &mut Vec<AgentEvent>) {
    tokio::time::timeout(WAIT, async {
        loop {
            let event = handle.events.recv().await.expect("the agent stopped");
            let waits = matches!(
                &event,
                AgentEvent::Child { event, .. }
                    if matches!(&**event, AgentEvent::ToolStart { name, .. } if name == "bash")
            );
            events.push(event);
            if waits {
                return;
            }
        }
    })
    .await
    .expect("the child never started its command");
}

/// The next notice or error the agent tells, skipping everything else.
async fn next_said(handle: &mut AgentHandle) -> AgentEvent {
    tokio::time::timeout(WAIT, async {
        loop {
            let event = handle.events.recv().await.expect("the agent stopped");
            if matches!(event, AgentEvent::Notice { .. } | AgentEvent::Error { .. }) {
                return event;
            }
        }
    })
    .await
    .expect("nothing was said")
}

fn release(work: &Path) {
    std::fs::write(work.join("release"), "").unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn plan_mode_turned_on_while_a_child_runs_refuses_its_next_changes() {
    let server = FamilyLlm::start(parent(), vec![writer()]).await;
    let work = tempfile::tempdir().unwrap();
    let config = AgentConfig { approval: ApprovalMode::Auto, ..AgentConfig::default() };
    let mut handle = start(&server, Wire::Anthropic, work.path(), config, Sessions::Off);
    handle.commands.send(Command::Submit("Write.".into())).unwrap();
    let mut events = Vec::new();
    until_the_child_waits(&mut handle, &mut events).await;
    assert!(work.path().join("one.txt").exists(), "the child wrote before plan mode");
    handle.commands.send(Command::PlanMode(true)).unwrap();
    wait_for(&mut handle, |snapshot| snapshot.plan_mode).await;
    release(work.path());
    until_result(&mut handle).await;
    let answers = child_answers(&server);
    assert_eq!(answers.len(), 4, "{answers:?}");
    assert!(answers[1].contains("released"), "the running command went on: {}", answers[1]);
    assert_eq!(answers[2], format!("`write_file` is not allowed: {UNDER_PLAN_MODE}"));
    assert!(answers[3].starts_with("Only commands that just read may run"), "{}", answers[3]);
    assert!(answers[3].ends_with(UNDER_PLAN_MODE), "{}", answers[3]);
    assert!(!work.path().join("two.txt").exists(), "the child wrote in plan mode");
    assert!(!work.path().join("three.txt").exists(), "the child's command wrote in plan mode");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_approval_mode_change_reaches_a_running_child_at_its_next_call() {
    let server = FamilyLlm::start(parent(), vec![writer()]).await;
    let work = tempfile::tempdir().unwrap();
    let config = AgentConfig { approval: ApprovalMode::Auto, ..AgentConfig::default() };
    let mut handle = start(&server, Wire::Anthropic, work.path(), config, Sessions::Off);
    handle.commands.send(Command::Submit("Write.".into())).unwrap();
    let mut events = Vec::new();
    until_the_child_waits(&mut handle, &mut events).await;
    handle.commands.send(Command::Approval(Some(ApprovalMode::Ask))).unwrap();
    let said = next_said(&mut handle).await;
    let switched = "Approval mode: ask from the next call on, running child agents' too";
    assert!(matches!(&said, AgentEvent::Notice { text } if text.starts_with(switched)), "{said:?}");
    release(work.path());
    for (tool, detail) in [("write_file", "two.txt"), ("bash", "touch three.txt")] {
        let asked = wait_for(&mut handle, |snapshot| {
            snapshot.pending_approval.as_ref().is_some_and(|request| request.tool == tool)
        })
        .await;
        let request = asked.pending_approval.unwrap();
        assert_eq!(request.agent.as_deref(), Some("child a1 · Write"), "the child asks");
        assert!(request.detail.contains(detail), "{}", request.detail);
        assert!(!work.path().join("two.txt").exists(), "nothing ran unasked");
        let deny = Command::Approve { id: request.id.clone(), decision: Decision::Deny };
        handle.commands.send(deny).unwrap();
    }
    until_result(&mut handle).await;
    let answers = child_answers(&server);
    assert_eq!(&answers[2..], [DECLINED, DECLINED], "{answers:?}");
    assert!(!work.path().join("two.txt").exists() && !work.path().join("three.txt").exists());
}

/// Runs `parent` (children: `children`) in `ask` mode; when the first approval box shows,
/// sends `meanwhile`, then allows the call once. Returns the server and the workspace.
async fn allowed_once_after(
    parent: Vec<crate::support::llm::Step>,
    children: Vec<ChildScript>,
    meanwhile: Command,
) -> (FamilyLlm, tempfile::TempDir) {
    let server = FamilyLlm::start(parent, children).await;
    let work = tempfile::tempdir().unwrap();
    let config = AgentConfig { approval: ApprovalMode::Ask, ..AgentConfig::default() };
    let mut handle = start(&server, Wire::Anthropic, work.path(), config, Sessions::Off);
    handle.commands.send(Command::Submit("Write.".into())).unwrap();
    let asked = wait_for(&mut handle, |snapshot| snapshot.pending_approval.is_some()).await;
    let id = asked.pending_approval.unwrap().id.clone();
    handle.commands.send(meanwhile).unwrap();
    handle.commands.send(Command::Approve { id, decision: Decision::Once }).unwrap();
    until_result(&mut handle).await;
    (server, work)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_call_allowed_while_plan_mode_came_on_is_refused_after_all() {
    // A child's call: the parent's plan mode holds it.
    let writes = child(
        "WRITER",
        vec![tool("write_file", json!({"path": "a.txt", "content": "a\n"})), text("Report.")],
    );
    let (server, work) = allowed_once_after(parent(), vec![writes], Command::PlanMode(true)).await;
    let answers = child_answers(&server);
    assert_eq!(answers, [format!("`write_file` is not allowed: {UNDER_PLAN_MODE}")]);
    assert!(!work.path().join("a.txt").exists());

    // The parent's own call: its plan mode holds it.
    let parent = vec![tool("write_file", json!({"path": "c.txt", "content": "c\n"})), text("Ok.")];
    let (server, work) = allowed_once_after(parent, vec![], Command::PlanMode(true)).await;
    let answer = results(server.parent().last().unwrap()).remove(0);
    assert!(answer.starts_with("Plan mode: `write_file` is not allowed"), "{answer}");
    assert!(!work.path().join("c.txt").exists());

    // A stricter approval mode holds it too.
    let parent = vec![tool("write_file", json!({"path": "c.txt", "content": "c\n"})), text("Ok.")];
    let read_only = Command::Approval(Some(ApprovalMode::ReadOnly));
    let (server, work) = allowed_once_after(parent, vec![], read_only).await;
    let answer = results(server.parent().last().unwrap()).remove(0);
    assert!(answer.starts_with("keel is in read-only mode: `write_file`"), "{answer}");
    assert!(!work.path().join("c.txt").exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn the_approval_mode_never_goes_looser_than_the_session_started() {
    let server = FamilyLlm::start(vec![text("Hi.")], vec![]).await;
    let work = tempfile::tempdir().unwrap();
    let config = AgentConfig { approval: ApprovalMode::Ask, ..AgentConfig::default() };
    let mut handle = start(&server, Wire::Anthropic, work.path(), config, Sessions::Off);
    let mut say = async |mode: Option<ApprovalMode>| {
        handle.commands.send(Command::Approval(mode)).unwrap();
        match next_said(&mut handle).await {
            AgentEvent::Notice { text } => Ok(text),
            AgentEvent::Error { text } => Err(text),
            _ => unreachable!(),
        }
    };
    let looser = say(Some(ApprovalMode::Auto)).await.unwrap_err();
    assert_eq!(
        looser,
        "The approval mode stays ask: this session started in ask, and /approval may not go \
         looser than that. Start keel with a looser --approval for more."
    );
    let stricter = say(Some(ApprovalMode::ReadOnly)).await.unwrap();
    assert!(stricter.starts_with("Approval mode: read-only from the next call on"), "{stricter}");
    let back = say(Some(ApprovalMode::Ask)).await.unwrap();
    assert!(back.starts_with("Approval mode: ask from the next call on"), "{back}");
    let which = say(None).await.unwrap();
    assert!(which.starts_with("Approval mode: ask (commands and file changes are asked about)"));
    assert!(which.ends_with("up to ask, the mode keel started in."), "{which}");
}
