//! Sessions that survive restarts, through the agent: whatever a resumed session needs — the
//! history, the board, the reminder counter, the undo records, the tokens used — is in the log
//! the moment it changes, and a resumed session goes on exactly as the uninterrupted one would.

use crate::support::scripted::assert_every_call_answered;
use keel::agent::journal::{Restored, SessionStore};
use keel::agent::{self, AgentConfig, AgentEvent, AgentHandle, Command, Sessions, Snapshot};
use keel::llm::Provider;
use keel::llm::scripted::ScriptedProvider;
use keel::message::{ContentBlock, Message};
use keel::runtime::Workspace;
use keel::runtime::undo::UndoContext;
use keel::tools::Tools;
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

/// The sessions of workspace `dir`, kept in `state`.
fn store(state: &Path, dir: &Path) -> SessionStore {
    SessionStore::new(state, &dir.canonicalize().unwrap())
}

/// The id of the only session saved.
fn only_session(store: &SessionStore) -> String {
    let sessions = store.list().unwrap();
    assert_eq!(sessions.len(), 1, "one session was saved");
    sessions[0].id.clone()
}

/// What the only session saved holds, read while its agent may still have it open.
fn peek(store: &SessionStore) -> Restored {
    store.peek(&only_session(store)).unwrap()
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
    let state = tempfile::tempdir().unwrap();
    let sessions = store(state.path(), resumed_dir.path());
    let mut handle = start(resumed_dir.path(), Sessions::New(sessions.clone()));
    let (before, _) = turn(&mut handle, "go").await;
    quit(handle).await;
    let (log, restored) = sessions.open(&only_session(&sessions)).unwrap();
    assert_eq!(restored.reminder.since_todo, 0, "the reminder's reset of the count was saved");
    let mut handle = start(resumed_dir.path(), Sessions::Resume(sessions.clone(), log, restored));
    let (after, resumed) = turn(&mut handle, "more").await;
    quit(handle).await;

    assert_eq!((reminders(&before), reminders(&after)), (1, 1));
    let history: Vec<&Message> = uninterrupted.history.iter().collect();
    let resumed_history: Vec<&Message> = resumed.history.iter().collect();
    assert_eq!(resumed_history, history, "the resumed history is the uninterrupted one");
    assert_eq!(resumed.reminder.since_todo(), uninterrupted.reminder.since_todo());
    assert!(uninterrupted.usage.output_tokens > 0);
    assert_eq!(resumed.usage, uninterrupted.usage, "the tokens counted on from the log's");
}

#[tokio::test]
async fn every_change_that_matters_on_resume_is_in_the_reopened_log() {
    let dir = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let sessions = store(state.path(), dir.path());
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
    let mut handle = agent::spawn_with_session(
        config,
        Some(Provider::Scripted(provider)),
        tools,
        Sessions::New(sessions.clone()),
    );

    let (_, first) = turn(&mut handle, "go").await;
    let restored = peek(&sessions);
    assert_eq!(restored.history, first.history.iter().cloned().collect::<Vec<_>>());
    assert_eq!(&restored.board, first.board.as_ref());
    assert_eq!(restored.board.done(), 1);
    assert_eq!(restored.reminder.since_todo, first.reminder.since_todo());
    assert!(restored.usage_recorded);
    assert_eq!(restored.usage, first.usage);

    let (_, second) = turn(&mut handle, "again").await;
    assert_eq!(second.reminder.since_todo(), 2);
    let restored = peek(&sessions);
    assert_eq!(restored.history, second.history.iter().cloned().collect::<Vec<_>>());
    assert_eq!(restored.reminder.since_todo, 2);
    assert_eq!(restored.usage, second.usage);

    // Undo in the live session is saved: the reopened log's own undo steps past it.
    handle.commands.send(Command::Undo).unwrap();
    let undone = tokio::time::timeout(WAIT, async {
        loop {
            let snapshot = handle.snapshots.recv().await.expect("the agent stopped");
            if let Some(agent::Entry::Notice { text }) = snapshot.transcript.last()
                && text.starts_with("Undid")
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

    let id = only_session(&sessions);
    let (_, mut restored) = sessions.open(&id).unwrap();
    let workspace = Workspace::new(dir.path()).unwrap();
    let shadow = sessions.shadow(&id);
    let context = UndoContext { workspace: &workspace, shadow: Some(&shadow) };
    let report = restored.undo.undo(context);
    assert_eq!(report.deleted, vec!["a.txt".to_owned()], "{report:?}");
    assert!(!dir.path().join("a.txt").exists(), "the first turn's write is undone next");
    assert_eq!(restored.undo.undo(context).summary(), "Nothing to undo.");
    let results = restored
        .history
        .iter()
        .flat_map(|message| &message.content)
        .filter(|block| matches!(block, ContentBlock::ToolResult { .. }))
        .count();
    assert_eq!(results, 7, "every tool call's result was saved");
}

#[tokio::test]
async fn a_log_two_writers_garbled_never_yields_an_invalid_history() {
    use keel::agent::journal::Record;
    use keel::message::Role;
    let (dir, state) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let sessions = store(state.path(), dir.path());
    let mut log = sessions.create().unwrap();
    let result = |id: &str, content: &str| Message {
        role: Role::User,
        content: vec![ContentBlock::ToolResult {
            tool_use_id: id.into(),
            content: content.into(),
            is_error: false,
        }],
    };
    let call = Message::assistant(vec![ContentBlock::ToolUse {
        id: "t1".into(),
        name: "bash".into(),
        input: json!({"command": "ls"}),
    }]);
    for message in [Message::user_text("go"), call, result("t1", "mine")] {
        log.append(&Record::Message { message }).unwrap();
    }
    // What a second process writing the same log left: the same call answered again.
    log.append(&Record::Message { message: result("t1", "theirs") }).unwrap();
    log.append(&Record::Message { message: Message::assistant(vec![]) }).unwrap();
    let id = log.id().to_owned();
    drop(log);

    let (log, restored) = sessions.open(&id).unwrap();
    assert_eq!(restored.history.len(), 3, "loaded up to the second answer");
    assert!(restored.warnings[0].contains("which was never made"), "{:?}", restored.warnings);
    let mut handle = start(dir.path(), Sessions::Resume(sessions.clone(), log, restored));
    let snapshot = tokio::time::timeout(WAIT, handle.snapshots.recv()).await.unwrap().unwrap();
    assert_every_call_answered(&snapshot);
    assert!(
        snapshot.transcript.iter().any(
            |entry| matches!(entry, agent::Entry::Notice { text } if text.contains("damaged"))
        )
    );
    quit(handle).await;
}

#[tokio::test]
async fn a_resumed_transcript_shows_the_models_thinking_folded_before_its_answer() {
    use keel::agent::journal::Record;
    let (dir, state) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let sessions = store(state.path(), dir.path());
    let mut log = sessions.create().unwrap();
    let answer = Message::assistant(vec![
        ContentBlock::Thinking { thinking: "Weighing it.".into(), signature: Some("c2ln".into()) },
        ContentBlock::Text { text: "Here it is.".into() },
    ]);
    for message in [Message::user_text("go"), answer] {
        log.append(&Record::Message { message }).unwrap();
    }
    let id = log.id().to_owned();
    drop(log);

    let (log, restored) = sessions.open(&id).unwrap();
    let mut handle = start(dir.path(), Sessions::Resume(sessions.clone(), log, restored));
    let snapshot = tokio::time::timeout(WAIT, handle.snapshots.recv()).await.unwrap().unwrap();
    let shown: Vec<&agent::Entry> = snapshot.transcript.iter().collect();
    assert!(
        matches!(
            shown.as_slice(),
            [
                agent::Entry::User { .. },
                agent::Entry::Thinking { text, redacted: false },
                agent::Entry::Assistant { text: answer },
                agent::Entry::Notice { text: resumed },
            ] if text == "Weighing it." && answer == "Here it is." && resumed.starts_with("Resumed")
        ),
        "{shown:?}"
    );
    quit(handle).await;
}

#[test]
fn keel_state_inside_the_workspace_is_never_snapshotted() {
    let work = tempfile::tempdir().unwrap();
    let root = work.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("src/main.rs"), "fn main() {}\n").unwrap();
    let snapshot_folders = |state: &Path| -> Vec<String> {
        let store = SessionStore::new(state, &root);
        let id = store.create().unwrap().id().to_owned();
        let shadow = store.shadow(&id);
        let tree = shadow.snapshot().unwrap();
        let folders = shadow.folders(&tree).unwrap();
        folders.iter().map(|folder| String::from_utf8_lossy(folder).into_owned()).collect()
    };
    // Say, a workspace that is the home folder: the state is left out, and the rest goes in.
    let inside = snapshot_folders(&root.join(".local/state/keel"));
    assert!(inside.contains(&"src".to_owned()), "{inside:?}");
    assert!(!inside.iter().any(|folder| folder.starts_with(".local")), "{inside:?}");
    // A state folder that is the workspace itself leaves nothing out.
    let same = snapshot_folders(&root);
    assert!(same.contains(&"src".to_owned()), "{same:?}");
}
