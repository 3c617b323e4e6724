//! The reminder as the provider receives it (docs/board.md): after three tool rounds without a
//! `todo` call, the next request carries it — for Anthropic as a text block after the tool_result
//! blocks of the last user message, for OpenAI-compatible servers as a user message after the
//! tool messages — and the request after a `todo` call does not.

use crate::support::llm;
use llm::{FakeLlm, Step, board, text, tool};
use serde_json::{Value, json};
use std::process::Command;
use std::time::Duration;

const REMINDER: &str = "<reminder>Update your todos in the same response as your next step's tool call, not in a response of its own.</reminder>";
/// The board after the reminder's words: `board(0, 2)` as the todo tool renders it.
const BOARD: &str = "[>] #1: Step 1\n[ ] #2: Step 2\n\n(0/2 completed)";

fn script() -> Vec<Step> {
    let look = || tool("read_file", json!({"path": "notes.txt"}));
    vec![
        tool("todo", board(0, 2)),
        look(),
        look(),
        look(), // third round without todo: the next request carries the reminder
        tool("todo", board(1, 2)),
        text("done"),
    ]
}

fn run(server: &FakeLlm, provider: &str) {
    let (home, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    std::fs::write(work.path().join("notes.txt"), "hello\n").unwrap();
    let mut command = Command::new(crate::support::bin::program());
    command.args(["-p", "go", "--workdir"]).arg(work.path()).env("HOME", home.path());
    for name in [
        "ANTHROPIC_API_KEY",
        "OPENAI_API_KEY",
        "KEEL_PROVIDER",
        "KEEL_MODEL",
        "XDG_CONFIG_HOME",
        "XDG_STATE_HOME",
    ] {
        command.env_remove(name);
    }
    match provider {
        "anthropic" => {
            command.env("ANTHROPIC_API_KEY", "k").env("ANTHROPIC_BASE_URL", server.anthropic_base())
        }
        _ => command.env("OPENAI_API_KEY", "k").env("OPENAI_BASE_URL", server.openai_base()),
    };
    let output = command.output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
}

fn mentions_reminder(value: &Value) -> bool {
    value.to_string().contains(REMINDER)
}

#[tokio::test(flavor = "multi_thread")]
async fn anthropic_gets_the_reminder_as_a_text_block_after_the_tool_results() {
    let server = FakeLlm::start(script(), Duration::ZERO).await;
    run(&server, "anthropic");
    let bodies = server.bodies().await;
    assert_eq!(bodies.len(), 6);
    // Requests 0-3 have no reminder; request 4 (after the third read) has it; request 5 (after
    // the todo call) has exactly that one, already in the history, and no new one.
    for body in &bodies[..4] {
        assert!(!mentions_reminder(body));
    }
    let last_user = bodies[4]["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last_user["role"], "user");
    let blocks = last_user["content"].as_array().unwrap();
    assert_eq!(blocks[0]["type"], "tool_result");
    let last = blocks.last().unwrap();
    assert_eq!(
        (&last["type"], &last["text"]),
        (&json!("text"), &json!(format!("{REMINDER}\n\n{BOARD}")))
    );
    let count = |body: &Value| body.to_string().matches(REMINDER).count();
    assert_eq!(count(&bodies[5]), 1);
    let last_user = bodies[5]["messages"].as_array().unwrap().last().unwrap();
    assert!(!mentions_reminder(last_user), "no reminder right after a todo call");
}

#[tokio::test(flavor = "multi_thread")]
async fn openai_gets_the_reminder_as_a_user_message_after_the_tool_messages() {
    let server = FakeLlm::start(script(), Duration::ZERO).await;
    run(&server, "openai");
    let bodies = server.bodies().await;
    assert_eq!(bodies.len(), 6);
    for body in &bodies[..4] {
        assert!(!mentions_reminder(body));
    }
    let messages = bodies[4]["messages"].as_array().unwrap();
    let tail: Vec<&str> =
        messages[messages.len() - 3..].iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(tail, vec!["assistant", "tool", "user"]);
    assert_eq!(messages.last().unwrap()["content"], format!("{REMINDER}\n\n{BOARD}"));
    let last = bodies[5]["messages"].as_array().unwrap().last().unwrap();
    assert_eq!(last["role"], "tool", "no reminder right after a todo call");
}
