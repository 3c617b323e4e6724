//! When a turn's closing snapshot is taken: early, as the round of a command that left nothing
//! running ends, and kept when the model only reads after it; set aside, and taken again at the
//! turn's end, when a tool that changes the workspace follows. Either way undo takes back the
//! whole turn. A command that leaves a process running says so.

use crate::support::git::turns_then_undo;
use crate::support::llm::{Step, text, tool};
use keel::runtime::Workspace;
use keel::runtime::sandbox::{Mode, Policy, Sandbox};
use keel::tools::{ToolContext, Tools};
use serde_json::json;
use std::path::Path;
use tokio_util::sync::CancellationToken;

/// Runs one `keel -p` turn of `steps` in `work` with a `git` that logs its subcommands; returns
/// what git ran, then what `keel undo` said.
async fn turn_then_undo(steps: Vec<Step>, work: &Path) -> (String, String) {
    let (mut ran, said) = turns_then_undo(steps, &["Do it."], work).await;
    (ran.remove(0), said)
}

#[tokio::test(flavor = "multi_thread")]
async fn reading_after_a_command_keeps_the_early_closing_snapshot() {
    let work = tempfile::tempdir().unwrap();
    let steps = vec![
        tool("bash", json!({"command": "echo made > b.txt"})),
        tool("read_file", json!({"path": "b.txt"})),
        text("Read."),
    ];
    let (ran, said) = turn_then_undo(steps, work.path()).await;
    assert_eq!(ran, "add\nwrite-tree\n".repeat(2), "one snapshot before, one after");
    assert!(said.contains("deleted b.txt"), "{said}");
    assert!(!work.path().join("b.txt").exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_write_after_a_command_sets_the_early_snapshot_aside() {
    let work = tempfile::tempdir().unwrap();
    let steps = vec![
        tool("bash", json!({"command": "echo made > b.txt"})),
        tool("write_file", json!({"path": "c.txt", "content": "written\n"})),
        text("Written."),
    ];
    let (ran, said) = turn_then_undo(steps, work.path()).await;
    // The early one, set aside, and the one the turn's end took.
    assert_eq!(ran, "add\nwrite-tree\n".repeat(3));
    assert!(said.contains("deleted b.txt") && said.contains("deleted c.txt"), "{said}");
    assert!(!work.path().join("b.txt").exists() && !work.path().join("c.txt").exists());
}

#[tokio::test]
async fn a_command_says_whether_it_left_a_process_running() {
    keel::runtime::supervisor::set_program(crate::support::bin::program());
    let work = tempfile::tempdir().unwrap();
    for mode in [Mode::Workspace, Mode::Off] {
        let sandbox = Sandbox::probe(Policy { mode, ..Policy::default() }, None);
        let tools = Tools::new(Workspace::new(work.path()).unwrap()).with_sandbox(sandbox);
        let ctx = ToolContext {
            cancel: CancellationToken::new(),
            live_output: None,
            gate: None,
            conversation: None,
        };
        let done = tools.run("bash", &json!({ "command": "echo done" }), &ctx).await;
        assert!(!done.command.left_running, "{mode:?}: {done:?}");
        let background = json!({ "command": "sleep 2 > /dev/null 2>&1 &" });
        let left = tools.run("bash", &background, &ctx).await;
        assert!(!left.is_error && left.command.left_running, "{mode:?}: {left:?}");
    }
}
