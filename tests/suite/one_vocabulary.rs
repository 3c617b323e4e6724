//! The agent tells each happening once (docs/architecture.md, "One vocabulary"): the conversation
//! the screen shows is exactly the lines derived from the events `keel -p` prints, in the same
//! order — prompts, reasoning, answers, tool calls (a failed one too), the reminder, a turn that
//! ended in an error, the person's board edits (a refused one too).

use crate::support::{agent, llm};
use agent::{Wire, edit, start, until_result};
use keel::agent::{AgentConfig, AgentEvent, Command, Entry, Sessions};
use llm::{FakeLlm, Step, board, text, tool};
use serde_json::json;
use std::time::Duration;

/// A plan with reasoning, three rounds without the board (the third brings the reminder), one
/// call that fails, and an answer.
fn script() -> Vec<Step> {
    vec![
        Step { text: "Planning.".into(), ..tool("todo", board(0, 2)) }.thinking("A plan first."),
        tool("bash", json!({"command": "printf 'one\rtwo'"})),
        tool("read_file", json!({"path": "missing.txt"})),
        tool("bash", json!({"command": "true"})),
        text("Done."),
    ]
}

/// Every event the agent has sent so far, without waiting.
fn drain(handle: &mut keel::agent::AgentHandle, events: &mut Vec<AgentEvent>) {
    while let Ok(event) = handle.events.try_recv() {
        events.push(event);
    }
}

async fn the_screen_shows_what_the_events_tell(wire: Wire) {
    let server = FakeLlm::start(script(), Duration::ZERO).await;
    let dir = tempfile::tempdir().unwrap();
    // The first turn stops at the round limit, the second finishes.
    let config = AgentConfig { max_rounds: 4, ..AgentConfig::default() };
    let mut handle = start(&server, wire, dir.path(), config, Sessions::Off);
    handle.commands.send(Command::Submit("go".into())).unwrap();
    let mut events = until_result(&mut handle).await;
    handle.commands.send(Command::Submit("go on".into())).unwrap();
    events.extend(until_result(&mut handle).await);
    let mut seen = 0;
    edit(&mut handle, &mut seen, "done 1").await;
    edit(&mut handle, &mut seen, "done 9").await;
    let screen = edit(&mut handle, &mut seen, "add Write the docs").await;
    drain(&mut handle, &mut events);
    let mut screen = screen;
    while let Ok(newer) = handle.snapshots.try_recv() {
        screen = newer;
    }

    let told: Vec<Entry> = events.iter().filter_map(AgentEvent::entry).collect();
    let shown: Vec<Entry> = screen.transcript.iter().cloned().collect();
    assert_eq!(shown, told, "the screen and the events tell different stories");

    // The story is the whole one: each kind of line is there.
    let has = |check: fn(&Entry) -> bool| shown.iter().any(check);
    assert!(has(|e| matches!(e, Entry::User { text } if text == "go")));
    assert!(has(|e| matches!(e, Entry::Thinking { text, .. } if text == "A plan first.")));
    assert!(has(|e| matches!(e, Entry::Assistant { text } if text == "Done.")));
    assert!(has(|e| matches!(e, Entry::ToolCall { summary, .. } if summary == "printf 'one␍two'")));
    assert!(has(|e| matches!(e, Entry::Reminder { .. })));
    assert!(has(|e| matches!(e, Entry::Notice { text } if text.starts_with("You marked #1"))));
    assert!(has(|e| matches!(e, Entry::Error { text } if text.contains("was not changed"))));
    let count = |check: fn(&Entry) -> bool| shown.iter().filter(|e| check(e)).count();
    assert_eq!(count(|e| matches!(e, Entry::ToolCall { .. })), 4, "each call once");
    let stopped =
        |e: &Entry| matches!(e, Entry::Error { text } if text.starts_with("Stopped after"));
    assert_eq!(count(stopped), 1, "the turn's end told once");
}

#[tokio::test(flavor = "multi_thread")]
async fn anthropic_the_screen_shows_exactly_what_the_events_tell() {
    the_screen_shows_what_the_events_tell(Wire::Anthropic).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn openai_the_screen_shows_exactly_what_the_events_tell() {
    the_screen_shows_what_the_events_tell(Wire::OpenAi).await;
}
