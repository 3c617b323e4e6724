#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Sessions that survive restarts, through the agent: whatever a resumed session needs — the
//! history, the board, the reminder counter, the undo records — is in the log the moment it
//! changes, and a resumed session goes on exactly as the uninterrupted one would have.

use keel::agent::journal::{self, Restored, SessionLog};
use keel::agent::{self, AgentConfig, AgentEvent, AgentHandle, Command, Sessions, Snapshot};
use keel::llm::Provider;
use keel::llm::scripted::ScriptedProvider;
use keel::message::{ContentBlock, Message};
use keel::tools::{Tools, Workspace};
use serde_json::{Value, json};
use std::path::Path;
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(30);
const NAG_THRESHOLD: u32 = 3;

fn call(name: &str, input: Value) -> Value {
    json!({"name": name, "input": input})
}

fn step(text: &str, tools: Vec<Value>) -> Value {
    json!({"text": text, "tools": tools})
}

fn board(status: &str) -> Value {
    call("todo", json!({"items": [{"id": "1", "text": "the work", "status": status}]}))
}

fn silent() -> Value {
    step("", vec![call("read_file", json!({"path": "missing.txt"}))])
}

/// A board update, three silent rounds (the reminder is due after the third) and a pause; then,
/// after the second prompt, four more silent rounds and the end.
fn script() -> String {
    let mut steps = vec![step("Planning.", vec![board("in_progress")])];
    steps.extend((0..3).map(|_| silent()));
    steps.push(step("Pausing here.", vec![]));
    steps.extend((0..4).map(|_| silent()));
    steps.push(step("Done.", vec![]));
    json!({"prompt": "go", "finished": "finished", "steps": steps}).to_string()
}

fn start(dir: &Path, sessions: Sessions) -> AgentHandle {
    let provider = ScriptedProvider::from_json(&script(), Duration::ZERO).unwrap();
    let config = AgentConfig {
        nag_threshold: keel::agent::NagThreshold::Fixed(NAG_THRESHOLD),
        ..AgentConfig::default()
    };
    let tools = Tools::new(Workspace::new(dir).unwrap());
    agent::spawn_with_session(config, Some(Provider::Scripted(provider)), tools, sessions)
}

/// Sends `prompt` and returns the turn's events and the newest snapshot once it has ended.
async fn turn(handle: &mut AgentHandle, prompt: &str) -> (Vec<AgentEvent>, Snapshot) {
    handle.commands.send(Command::Submit(prompt.into())).unwrap();
    let events = tokio::time::timeout(WAIT, async {
        let mut events = Vec::new();
        loop {
            let event = handle.events.recv().await.expect("the agent stopped");
            let done = matches!(event, AgentEvent::Result { .. });
            events.push(event);
            if done {
                return events;
            }
        }
    })
    .await
    .expect("the turn did not end in time");
    let mut latest = None;
    while let Ok(snapshot) = handle.snapshots.try_recv() {
        latest = Some(snapshot);
    }
    (events, latest.expect("no snapshot"))
}

async fn quit(handle: AgentHandle) {
    handle.commands.send(Command::Quit).unwrap();
    tokio::time::timeout(WAIT, handle.task).await.expect("the agent did not stop").unwrap();
}

fn reminders(events: &[AgentEvent]) -> usize {
    events.iter().filter(|event| matches!(event, AgentEvent::Reminder { .. })).count()
}

/// The only session saved in `dir`, reopened.
fn reopen(dir: &Path) -> (SessionLog, Restored) {
    let sessions = journal::list(dir).unwrap();
    assert_eq!(sessions.len(), 1, "one session was saved");
    SessionLog::open(dir, &sessions[0].id).unwrap()
}

#[tokio::test]
async fn a_resumed_session_reminds_exactly_as_the_uninterrupted_one_would() {
    let straight = tempfile::tempdir().unwrap();
    let mut handle = start(straight.path(), Sessions::Off);
    let (first, _) = turn(&mut handle, "go").await;
    let (second, uninterrupted) = turn(&mut handle, "more").await;
    quit(handle).await;
    assert_eq!((reminders(&first), reminders(&second)), (1, 1));

    let resumed_dir = tempfile::tempdir().unwrap();
    let mut handle = start(resumed_dir.path(), Sessions::New);
    let (before, _) = turn(&mut handle, "go").await;
    quit(handle).await;
    let (log, restored) = reopen(resumed_dir.path());
    assert_eq!(restored.rounds_since_todo, 0, "the reminder's reset of the count was saved");
    let mut handle = start(resumed_dir.path(), Sessions::Resume(log, restored));
    let (after, resumed) = turn(&mut handle, "more").await;
    quit(handle).await;

    assert_eq!((reminders(&before), reminders(&after)), (1, 1));
    let history: Vec<&Message> = uninterrupted.history.iter().collect();
    let resumed_history: Vec<&Message> = resumed.history.iter().collect();
    assert_eq!(resumed_history, history, "the resumed history is the uninterrupted one");
    assert_eq!(resumed.rounds_since_todo, uninterrupted.rounds_since_todo);
}

#[tokio::test]
async fn every_change_that_matters_on_resume_is_in_the_reopened_log() {
    let dir = tempfile::tempdir().unwrap();
    let script = json!({"prompt": "go", "finished": "finished", "steps": [
        step("Planning.", vec![board("in_progress")]),
        step("", vec![call("write_file", json!({"path": "a.txt", "content": "one"}))]),
        silent(),
        silent(),
        step("", vec![board("completed")]),
        step("First done.", vec![]),
        step("", vec![call("write_file", json!({"path": "a.txt", "content": "two"}))]),
        silent(),
        step("Second done.", vec![]),
    ]})
    .to_string();
    let provider = ScriptedProvider::from_json(&script, Duration::ZERO).unwrap();
    let tools = Tools::new(Workspace::new(dir.path()).unwrap());
    let config = AgentConfig {
        nag_threshold: keel::agent::NagThreshold::Fixed(NAG_THRESHOLD),
        ..AgentConfig::default()
    };
    let mut handle =
        agent::spawn_with_session(config, Some(Provider::Scripted(provider)), tools, Sessions::New);

    let (_, first) = turn(&mut handle, "go").await;
    let (_, restored) = reopen(dir.path());
    assert_eq!(restored.history, first.history.iter().cloned().collect::<Vec<_>>());
    assert_eq!(&restored.board, first.board.as_ref());
    assert_eq!(restored.board.done(), 1);
    assert_eq!(restored.rounds_since_todo, first.rounds_since_todo);

    let (_, second) = turn(&mut handle, "again").await;
    assert_eq!(second.rounds_since_todo, 2);
    let (_, restored) = reopen(dir.path());
    assert_eq!(restored.history, second.history.iter().cloned().collect::<Vec<_>>());
    assert_eq!(restored.rounds_since_todo, 2);

    // Undo in the live session is saved: the reopened log's own undo steps past it.
    handle.commands.send(Command::Undo).unwrap();
    let undone = tokio::time::timeout(WAIT, async {
        loop {
            let snapshot = handle.snapshots.recv().await.expect("the agent stopped");
            if let Some(agent::Entry::Notice { text }) = snapshot.transcript.last()
                && text.starts_with("Restored")
            {
                return text.clone();
            }
        }
    })
    .await
    .expect("undo did not answer");
    assert!(undone.contains("a.txt"), "{undone}");
    assert_eq!(std::fs::read_to_string(dir.path().join("a.txt")).unwrap(), "one");
    quit(handle).await;

    let (_, mut restored) = reopen(dir.path());
    let report = restored.undo.undo();
    assert_eq!(report.restored, vec![dir.path().canonicalize().unwrap().join("a.txt")]);
    assert!(!dir.path().join("a.txt").exists(), "the first turn's write is undone next");
    assert_eq!(restored.undo.undo().summary(), "Nothing to undo.");
    let results = restored
        .history
        .iter()
        .flat_map(|message| &message.content)
        .filter(|block| matches!(block, ContentBlock::ToolResult { .. }))
        .count();
    assert_eq!(results, 7, "every tool call's result was saved");
}
