//! A snapshot of a workspace just as the last snapshot left it reuses the tree that snapshot
//! wrote, and runs no git at all: after a command that only read, and at a turn's start when
//! nothing changed since. Undo is exactly as before, and a change of the same size, made at once,
//! is still seen, by git.

use crate::support::git::turns_then_undo;
use crate::support::llm::{Step, text, tool};
use serde_json::json;

/// Two turns: one makes `b.txt`, one only reads it.
fn make_then_read() -> Vec<Step> {
    vec![
        tool("bash", json!({"command": "echo made > b.txt"})),
        text("Made."),
        tool("bash", json!({"command": "cat b.txt"})),
        text("Read."),
    ]
}

#[tokio::test(flavor = "multi_thread")]
async fn a_snapshot_of_what_did_not_change_runs_no_git() {
    let work = tempfile::tempdir().unwrap();
    let prompts = ["Make b.", "Read b."];
    let (ran, said) = turns_then_undo(make_then_read(), &prompts, work.path()).await;
    assert_eq!(ran[0], "add\nwrite-tree\n".repeat(2), "the first turn changed b.txt");
    // Nothing changed since the first turn's closing snapshot, nor during the second turn.
    assert_eq!(ran[1], "", "the second turn only read");
    // The second turn changed nothing, so undo reaches past it, to the first.
    assert!(said.contains("deleted b.txt"), "{said}");
    assert!(!work.path().join("b.txt").exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_change_of_the_same_size_made_at_once_is_seen() {
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("f.txt"), "aaa\n").unwrap();
    // The rewrite follows the opening snapshot within milliseconds: its size, and likely its
    // time stamps, are those the index holds; only its content differs.
    let steps = vec![tool("bash", json!({"command": "printf 'bbb\\n' > f.txt"})), text("Done.")];
    let (ran, said) = turns_then_undo(steps, &["Rewrite f."], work.path()).await;
    assert_eq!(ran[0], "add\nwrite-tree\n".repeat(2), "the closing snapshot saw the change");
    assert!(said.contains("restored f.txt"), "{said}");
    assert_eq!(std::fs::read_to_string(work.path().join("f.txt")).unwrap(), "aaa\n");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_change_after_a_snapshot_that_ran_no_git_is_seen() {
    let work = tempfile::tempdir().unwrap();
    let mut steps = make_then_read();
    steps.extend([tool("bash", json!({"command": "echo mode > b.txt"})), text("Rewritten.")]);
    let prompts = ["Make b.", "Read b.", "Rewrite b."];
    let (ran, said) = turns_then_undo(steps, &prompts, work.path()).await;
    assert_eq!(ran[1], "", "the second turn only read");
    // The same size, written milliseconds after a snapshot that ran no git.
    assert_eq!(ran[2], "add\nwrite-tree\n", "only the closing snapshot runs git");
    assert!(said.contains("restored b.txt"), "{said}");
    assert_eq!(std::fs::read_to_string(work.path().join("b.txt")).unwrap(), "made\n");
}
