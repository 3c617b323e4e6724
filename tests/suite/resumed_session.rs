//! A resumed session looks resumed: the tool pane is rebuilt from the log — each call marked as
//! it ended, declined and interrupted ones included — a line says the session was resumed, and
//! the token counts and cost come back from the log (a log too old to have them says so).

use crate::support::tui::{app_with, draw};
use keel::agent::journal::{Record, SessionLog, SessionStore};
use keel::agent::{self, AgentConfig, AgentHandle, Command, Entry, Sessions, ToolStatus};
use keel::message::{ContentBlock, Message, Role, Usage};
use keel::runtime::Workspace;
use keel::tools::Tools;
use serde_json::json;
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(30);

/// An agent (with no model) that resumes `log`, closed here, in `dir`.
fn resume(sessions: &SessionStore, log: SessionLog, dir: &std::path::Path) -> AgentHandle {
    let id = log.id().to_owned();
    drop(log);
    let (log, restored) = sessions.open(&id).unwrap();
    let tools = Tools::new(Workspace::new(dir).unwrap());
    let resumed = Sessions::Resume(sessions.clone(), log, restored);
    agent::spawn_with_session(AgentConfig::default(), None, tools, resumed)
}

fn call(id: &str, name: &str, input: serde_json::Value) -> ContentBlock {
    ContentBlock::ToolUse { id: id.into(), name: name.into(), input }
}

fn result(id: &str, content: &str, is_error: bool) -> ContentBlock {
    ContentBlock::ToolResult { tool_use_id: id.into(), content: content.into(), is_error }
}

#[tokio::test]
async fn a_resumed_session_shows_its_tool_calls_as_they_ended_and_says_it_was_resumed() {
    let (dir, state) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let sessions = SessionStore::new(state.path(), &dir.path().canonicalize().unwrap());
    let mut log = sessions.create().unwrap();
    let declined = "The user declined to run this tool call. Ask them what they would like to \
                    do instead.";
    let messages = [
        Message::user_text("Clean up the build."),
        Message::assistant(vec![
            call("c1", "read_file", json!({"path": "Makefile"})),
            call("c2", "bash", json!({"command": "make clean"})),
            call("c3", "bash", json!({"command": "rm -rf target"})),
            call("c4", "bash", json!({"command": "cargo clean"})),
        ]),
        Message {
            role: Role::User,
            content: vec![
                result("c1", "1\tall:\n2\t\tcargo build", false),
                result("c2", "make: *** No rule to make target 'clean'.  Stop.", true),
                result("c3", declined, true),
                result("c4", "interrupted by user", true),
            ],
        },
        Message::assistant(vec![ContentBlock::Text { text: "There is no clean target.".into() }]),
    ];
    for message in messages {
        log.append(&Record::Message { message }).unwrap();
    }
    let mut handle = resume(&sessions, log, dir.path());
    let snapshot = tokio::time::timeout(WAIT, handle.snapshots.recv()).await.unwrap().unwrap();
    let ended: Vec<(&str, ToolStatus)> =
        snapshot.tools.iter().map(|run| (run.summary.as_str(), run.status)).collect();
    assert_eq!(
        ended,
        [
            ("Makefile", ToolStatus::Succeeded),
            ("make clean", ToolStatus::Failed),
            ("rm -rf target", ToolStatus::Declined),
            ("cargo clean", ToolStatus::Interrupted)
        ]
    );
    // A log written before usage was recorded: the counts start from the resume, and say so.
    assert_eq!(snapshot.usage, Usage::default());
    assert!(
        matches!(snapshot.transcript.last(), Some(Entry::Notice { text }) if text.starts_with("Resumed: 4 messages and 4 tool calls") && text.contains("did not record them")),
        "{:?}",
        snapshot.transcript.last()
    );

    let (mut app, _rx) = app_with(snapshot);
    let terminal = draw(&mut app, (100, 24));
    insta::assert_snapshot!("resumed_session_100x24", terminal.backend());

    handle.commands.send(Command::Quit).unwrap();
    tokio::time::timeout(WAIT, handle.task).await.unwrap().unwrap();
}

fn used(input_tokens: u64, output_tokens: u64, cache_read_tokens: u64) -> Usage {
    Usage { input_tokens, output_tokens, cache_read_tokens, cache_write_tokens: 0 }
}

#[tokio::test]
async fn a_resumed_session_shows_the_tokens_and_cost_its_log_recorded() {
    let (dir, state) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let sessions = SessionStore::new(state.path(), &dir.path().canonicalize().unwrap());
    let mut log = sessions.create().unwrap();
    let records = [
        Record::Message { message: Message::user_text("What is in here?") },
        Record::Usage(used(30_000, 1_000, 0)),
        Record::Message {
            message: Message::assistant(vec![ContentBlock::Text { text: "A Makefile.".into() }]),
        },
        Record::Usage(used(10_000, 500, 8_000)),
    ];
    for record in &records {
        log.append(record).unwrap();
    }
    let mut handle = resume(&sessions, log, dir.path());
    let mut snapshot = tokio::time::timeout(WAIT, handle.snapshots.recv()).await.unwrap().unwrap();
    assert_eq!(snapshot.usage, used(40_000, 1_500, 8_000));
    assert!(
        matches!(snapshot.transcript.last(), Some(Entry::Notice { text }) if text == "Resumed: 2 messages and 0 tool calls."),
        "{:?}",
        snapshot.transcript.last()
    );

    // The status line counts and prices them as it did before the session was closed.
    snapshot.model = "claude-sonnet-4-5".into();
    let (mut app, _rx) = app_with(snapshot);
    let terminal = draw(&mut app, (100, 24));
    let buffer = terminal.backend().buffer();
    let status: String = (0..buffer.area.width).map(|x| buffer[(x, 23)].symbol()).collect();
    assert!(status.contains("↑40.0k ↓1.5k cache 20%") && status.contains(" $"), "{status}");

    handle.commands.send(Command::Quit).unwrap();
    tokio::time::timeout(WAIT, handle.task).await.unwrap().unwrap();
}
