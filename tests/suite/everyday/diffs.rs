//! Diffs read after the fact: an applied edit is one folded line in the conversation
//! (`▸ edit_file app.py +2 −1`) that Ctrl+O unfolds, numbered and coloured; Ctrl+G shows it
//! whole in the pager; `-p`'s `tool_end` carries it; `/diff` shows what the last prompt changed
//! in the workspace — bash's changes too — which is what undo would revert.

use crate::support::agent::{WAIT, Wire, start, until_result};
use crate::support::bin::{json_lines, keel, output_within};
use crate::support::llm::{FakeLlm, text, tool};
use crate::support::screens::{base_snapshot, run, tool_call, transcript, user};
use crate::support::tui::{ctrl, draw, new_app, screen_text};
use keel::agent::journal::SessionStore;
use keel::agent::{
    AgentConfig, AgentEvent, Command, Entry, Sessions, Snapshot, ToolStatus, TurnDiff,
};
use keel::runtime::change::FileDiff;
use keel::tui::TuiOptions;
use ratatui::style::Color;
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;

const BEFORE: &str = "import os\n\ndef main():\n    print('hi')\n\nmain()\n";
const AFTER: &str =
    "import os\nimport sys\n\ndef main():\n    print('hello', file=sys.stderr)\n\nmain()\n";

/// A conversation in which the model edited app.py.
fn edited() -> Snapshot {
    let diff = FileDiff::new("app.py", Some(BEFORE.as_bytes()), Some(AFTER.as_bytes()));
    let output = "Replaced 1 occurrence in app.py.";
    Snapshot {
        transcript: transcript(vec![
            user("Print to stderr."),
            tool_call("e1", "edit_file", "app.py"),
            Entry::Assistant { text: "Done.".into() },
        ]),
        tools: [run("e1", "edit_file", "app.py", ToolStatus::Succeeded, output)]
            .into_iter()
            .collect(),
        call_diffs: [("e1".to_owned(), Arc::new(diff))].into_iter().collect(),
        ..base_snapshot()
    }
}

/// The row of `screen` holding `needle`, and the colour of its first cell from `at`.
fn colour_at(terminal: &ratatui::Terminal<ratatui::backend::TestBackend>, needle: &str) -> Color {
    let buffer = terminal.backend().buffer();
    let text = screen_text(terminal);
    let (row, line) =
        text.lines().enumerate().find(|(_, line)| line.contains(needle)).expect("drawn");
    let column = line[..line.find(needle).unwrap()].chars().count();
    buffer[(u16::try_from(column).unwrap(), u16::try_from(row).unwrap())].fg
}

#[test]
fn an_edit_is_one_folded_line_that_unfolds_numbered_and_coloured() {
    let (mut app, _rx) = new_app(TuiOptions::default());
    app.apply_snapshot(edited());
    let folded = screen_text(&draw(&mut app, (80, 20)));
    insta::assert_snapshot!("diff_folded_80x20", folded);
    assert!(folded.contains("▸ edit_file app.py +2 −1"), "{folded}");
    assert!(!folded.contains("sys.stderr"), "folded: no diff lines");

    app.handle_key(ctrl('o'));
    let terminal = draw(&mut app, (80, 24));
    let unfolded = screen_text(&terminal);
    insta::assert_snapshot!("diff_unfolded_80x24", unfolded);
    assert!(unfolded.contains("  4     │-    print('hi')"), "{unfolded}");
    assert!(unfolded.contains("      5 │+    print('hello', file=sys.stderr)"), "{unfolded}");
    assert_eq!(colour_at(&terminal, "+2"), Color::Green);
    assert_eq!(colour_at(&terminal, "−1"), Color::Red);
    assert_eq!(colour_at(&terminal, "  4     │-"), Color::Red);
    assert_eq!(colour_at(&terminal, "      5 │+"), Color::Green);
}

#[test]
fn the_pager_shows_the_whole_diff_after_the_calls_answer() {
    let (mut app, _rx) = new_app(TuiOptions::default());
    app.apply_snapshot(edited());
    app.handle_key(ctrl('g'));
    let terminal = draw(&mut app, (80, 20));
    let whole = screen_text(&terminal);
    insta::assert_snapshot!("diff_pager_80x20", whole);
    for line in ["Replaced 1 occurrence", "--- a/app.py", "+++ b/app.py", "@@ -1,6 +1,7 @@"] {
        assert!(whole.contains(line), "{line}:\n{whole}");
    }
    assert!(whole.contains("  1   1 │ import os"), "{whole}");
    assert_eq!(colour_at(&terminal, "      2 │+import sys"), Color::Green);
}

#[test]
fn slash_diff_opens_the_pager_on_the_prompts_changes() {
    let (mut app, mut rx) = new_app(TuiOptions::default());
    app.apply_snapshot(base_snapshot());
    crate::support::tui::type_text(&mut app, "/diff");
    app.handle_key(crate::support::tui::key(ratatui::crossterm::event::KeyCode::Enter));
    assert_eq!(crate::support::tui::sent(&mut rx), [Command::ShowDiff]);
    let changes = TurnDiff {
        asked: 1,
        diffs: vec![
            FileDiff::new("app.py", Some(BEFORE.as_bytes()), Some(AFTER.as_bytes())),
            FileDiff::new("gone.txt", Some(b"bye\n"), None),
        ],
        notes: Vec::new(),
    };
    app.apply_snapshot(Snapshot { turn_diff: Some(Arc::new(changes)), ..base_snapshot() });
    let screen = screen_text(&draw(&mut app, (80, 30)));
    assert!(screen.contains("/diff 2 files"), "{screen}");
    assert!(screen.contains("+++ /dev/null"), "a file bash deleted: {screen}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_turns_changes_bash_included_are_what_slash_diff_shows() {
    let steps = vec![
        tool("edit_file", json!({"path": "app.py", "old_text": "'hi'", "new_text": "'hello'"})),
        tool("bash", json!({"command": "rm gone.txt && echo new > made.txt"})),
        text("Done."),
    ];
    let server = FakeLlm::start(steps, Duration::ZERO).await;
    let (dir, state) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    std::fs::write(dir.path().join("app.py"), BEFORE).unwrap();
    std::fs::write(dir.path().join("gone.txt"), "bye\n").unwrap();
    let store = SessionStore::new(state.path(), &dir.path().canonicalize().unwrap());
    let mut handle =
        start(&server, Wire::Anthropic, dir.path(), AgentConfig::default(), Sessions::New(store));
    handle.commands.send(Command::Submit("Change things.".into())).unwrap();
    let events = until_result(&mut handle).await;
    let diff = events.iter().find_map(|event| match event {
        AgentEvent::ToolEnd { name, diff, .. } if name == "edit_file" => diff.clone(),
        _ => None,
    });
    let diff = diff.expect("the edit's tool_end carries its diff");
    assert_eq!((diff.path.as_str(), diff.added, diff.removed), ("app.py", 1, 1));

    handle.commands.send(Command::ShowDiff).unwrap();
    let shown = tokio::time::timeout(WAIT, async {
        loop {
            let snapshot = handle.snapshots.recv().await.unwrap();
            if let Some(shown) = snapshot.turn_diff.clone() {
                return (snapshot, shown);
            }
        }
    })
    .await
    .unwrap();
    let (snapshot, changes) = shown;
    let files: Vec<(&str, usize, usize)> =
        changes.diffs.iter().map(|diff| (diff.path.as_str(), diff.added, diff.removed)).collect();
    assert_eq!(files, vec![("app.py", 1, 1), ("gone.txt", 0, 1), ("made.txt", 1, 0)]);
    let listed = snapshot.transcript.iter().rev().find_map(|entry| match entry {
        Entry::Notice { text } => Some(text.clone()),
        _ => None,
    });
    let listed = listed.unwrap();
    assert!(listed.contains("app.py +1 −1") && listed.contains("gone.txt +0 −1"), "{listed}");
    handle.commands.send(Command::Quit).unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn tool_end_carries_the_diff_in_json() {
    let steps =
        vec![tool("write_file", json!({"path": "n.txt", "content": "one\ntwo\n"})), text("Done.")];
    let server = FakeLlm::start(steps, Duration::ZERO).await;
    let (home, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mut command = keel(home.path());
    command
        .args(["-p", "go", "--output-format", "json", "--workdir"])
        .arg(work.path())
        .env("ANTHROPIC_API_KEY", "k")
        .env("ANTHROPIC_BASE_URL", server.anthropic_base());
    let output = output_within(&mut command, "keel -p");
    assert!(output.status.success());
    let end = json_lines(&output).into_iter().find(|event| event["type"] == "tool_end").unwrap();
    assert_eq!(end["diff"]["path"], "n.txt");
    assert_eq!(
        (end["diff"]["added"].as_u64(), end["diff"]["removed"].as_u64()),
        (Some(2), Some(0))
    );
    assert!(end["diff"]["unified"].as_str().unwrap().starts_with("--- /dev/null\n+++ b/n.txt\n"));
}

#[test]
fn a_click_on_the_line_unfolds_that_diff_alone_and_folds_it_again() {
    use ratatui::crossterm::event::{KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
    let (mut app, _rx) = new_app(TuiOptions::default());
    app.apply_snapshot(edited());
    let folded = screen_text(&draw(&mut app, (80, 24)));
    let row = folded.lines().position(|line| line.contains("edit_file app.py +2 −1")).unwrap();
    let click = MouseEvent {
        kind: MouseEventKind::Down(MouseButton::Left),
        column: 10,
        row: u16::try_from(row).unwrap(),
        modifiers: KeyModifiers::NONE,
    };
    app.handle_mouse(click);
    let unfolded = screen_text(&draw(&mut app, (80, 24)));
    assert!(unfolded.contains("│+    print('hello', file=sys.stderr)"), "{unfolded}");
    let row = unfolded.lines().position(|line| line.contains("edit_file app.py +2 −1")).unwrap();
    app.handle_mouse(MouseEvent { row: u16::try_from(row).unwrap(), ..click });
    let again = screen_text(&draw(&mut app, (80, 24)));
    assert!(!again.contains("sys.stderr"), "{again}");
}
