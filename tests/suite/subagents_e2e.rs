//! A child agent's approval in the real binary in a real terminal (`support::tmux`): in `ask`
//! mode the box names the child and its item above the call, the board row shows the child at
//! work meanwhile, and the person's answer reaches the child, which finishes its item.

use crate::support::llm::family::{FamilyLlm, child};
use crate::support::llm::{text, tool};
use crate::support::tmux::{KeelPane, board_count, exit_line};
use serde_json::json;
use std::thread::sleep;
use std::time::Duration;

/// A child's round trip through the scripted server, with keel's own work, on a loaded machine.
const CHILD_TIMEOUT: Duration = Duration::from_secs(30);

#[test]
fn a_childs_approval_names_it_and_the_answer_reaches_it() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let parent = vec![
        tool("todo", json!({"items": [{"id": "1", "text": "Make the file", "status": "pending"}]})),
        tool(
            "task",
            json!({"prompt": "MAKER: make made.txt", "item": "1", "description": "Make it"}),
        ),
        text("The file is made."),
    ];
    let maker = child(
        "MAKER",
        vec![tool("bash", json!({"command": "touch made.txt"})), text("Report: made made.txt.")],
    );
    let server = runtime.block_on(FamilyLlm::start(parent, vec![maker]));
    let home = tempfile::tempdir().unwrap();
    let workdir = tempfile::tempdir().unwrap();
    let Some(tmux) =
        KeelPane::start("a_childs_approval_names_it_and_the_answer_reaches_it", home.path())
    else {
        return;
    };
    let env = format!("ANTHROPIC_API_KEY=k ANTHROPIC_BASE_URL='{}'", server.anthropic_base());
    tmux.launch(&env, &format!("--approval ask --workdir '{}'", workdir.path().display()));
    tmux.wait_for("keel to start", CHILD_TIMEOUT, |screen| {
        screen.contains("Welcome to keel") || exit_line(screen).is_some()
    });
    tmux.type_line("Make the file.");
    let screen = tmux.wait_for("the child's approval request", CHILD_TIMEOUT, |screen| {
        screen.contains("Approval needed") || exit_line(screen).is_some()
    });
    assert!(screen.contains("child a1 · Make it · item #1 asks:"), "{screen}");
    assert!(screen.contains("bash wants to run:") && screen.contains("touch made.txt"), "{screen}");
    assert!(screen.contains("1 agent"), "the status bar counts it:\n{screen}");
    assert!(!workdir.path().join("made.txt").exists(), "nothing ran before the answer");
    sleep(keel::tui::type_ahead::GRACE_PERIOD);
    tmux.send(&["y"]);
    let screen = tmux.wait_for("the parent's last words", CHILD_TIMEOUT, |screen| {
        screen.contains("The file is made.")
    });
    assert!(workdir.path().join("made.txt").exists(), "the answer reached the child");
    assert_eq!(board_count(&screen), Some((1, 1)), "the child's success completed its item");
    tmux.type_line("/agents");
    let screen = tmux.wait_for("the child's conversation", CHILD_TIMEOUT, |screen| {
        screen.contains("child a1 · Make it · item #1 — done")
    });
    assert!(screen.contains("▸ bash touch made.txt"), "drawn like the conversation:\n{screen}");
    assert!(screen.contains("Report: made made.txt."), "{screen}");
    tmux.send(&["Escape"]);
    tmux.wait_for("the view to close", CHILD_TIMEOUT, |screen| !screen.contains("Esc close ╯"));
    tmux.quit();
}

#[test]
fn esc_stops_a_child_at_work_and_its_item_stays_in_progress() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let parent = vec![
        tool("todo", json!({"items": [{"id": "1", "text": "Wait a while", "status": "pending"}]})),
        tool("task", json!({"prompt": "SLEEPER: wait", "item": "1", "description": "Wait"})),
        text("Never shown."),
    ];
    let sleeper =
        child("SLEEPER", vec![tool("bash", json!({"command": "sleep 60"})), text("Slept.")]);
    let server = runtime.block_on(FamilyLlm::start(parent, vec![sleeper]));
    let home = tempfile::tempdir().unwrap();
    let workdir = tempfile::tempdir().unwrap();
    let Some(tmux) =
        KeelPane::start("esc_stops_a_child_at_work_and_its_item_stays_in_progress", home.path())
    else {
        return;
    };
    let env = format!("ANTHROPIC_API_KEY=k ANTHROPIC_BASE_URL='{}'", server.anthropic_base());
    tmux.launch(&env, &format!("--approval auto --workdir '{}'", workdir.path().display()));
    tmux.wait_for("keel to start", CHILD_TIMEOUT, |screen| screen.contains("Welcome to keel"));
    tmux.type_line("Wait.");
    let screen = tmux.wait_for("the child at work on the board", CHILD_TIMEOUT, |screen| {
        screen.contains("a1 · bash sleep") || exit_line(screen).is_some()
    });
    assert!(screen.contains("1 agent"), "{screen}");
    let pressed = std::time::Instant::now();
    tmux.send(&["Escape"]);
    let screen = tmux.wait_for("the turn to stop", CHILD_TIMEOUT, |screen| {
        screen.contains("Interrupted.") && screen.contains("idle")
    });
    assert!(pressed.elapsed() < CHILD_TIMEOUT, "the child's command was stopped before it ended");
    assert!(screen.contains("[>] #1 Wait a while"), "its item stays in progress:\n{screen}");
    assert!(!screen.contains("1 agent"), "no child runs any more:\n{screen}");
    assert!(!screen.contains("Never shown."));
    tmux.quit();
}
