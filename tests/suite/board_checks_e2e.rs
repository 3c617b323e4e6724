//! An item's check in the real binary in a real terminal (`support::tmux`): in `ask` mode the
//! model's claim of an item brings up the box for its check, which says whose completion waits
//! for it; the person's yes runs it, and the board pane marks the item — ✗ with the time while
//! the file is missing, ✓ once the honest claim passes.

use crate::support::llm::{FakeLlm, text, tool};
use crate::support::tmux::{KeelPane, board_count, exit_line};
use serde_json::json;
use std::thread::sleep;
use std::time::Duration;

/// A scripted round trip with keel's own work, on a loaded machine.
const STEP_TIMEOUT: Duration = Duration::from_secs(30);

/// What only a check's box says.
const CHECK_BOX: &str = "runs its check first";

/// Waits for the next approval box, and answers it yes once a person could have read it.
fn approve(tmux: &KeelPane, what: &str, shown: &str) -> String {
    let screen = tmux.wait_for(what, STEP_TIMEOUT, |screen| {
        (screen.contains("Approval needed") && screen.contains(shown))
            || exit_line(screen).is_some()
    });
    sleep(keel::tui::type_ahead::GRACE_PERIOD);
    tmux.send(&["y"]);
    screen
}

#[test]
fn the_box_names_the_item_its_check_completes_and_the_pane_marks_how_it_ended() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let claim = || tool("todo", json!({"update": [{"id": "1", "status": "completed"}]}));
    let script = vec![
        tool(
            "todo",
            json!({"items": [{"id": "1", "text": "Write out.txt", "status": "in_progress",
                "check": "grep -q hello out.txt"}]}),
        ),
        claim(),
        tool("write_file", json!({"path": "out.txt", "content": "hello\n"})),
        claim(),
        text("The file says hello."),
    ];
    let server = runtime.block_on(FakeLlm::start(script, Duration::ZERO));
    let home = tempfile::tempdir().unwrap();
    let workdir = tempfile::tempdir().unwrap();
    let test = "the_box_names_the_item_its_check_completes_and_the_pane_marks_how_it_ended";
    let Some(tmux) = KeelPane::start(test, home.path()) else { return };
    let env = format!("ANTHROPIC_API_KEY=k ANTHROPIC_BASE_URL='{}'", server.anthropic_base());
    tmux.launch(&env, &format!("--approval ask --workdir '{}'", workdir.path().display()));
    tmux.wait_for("keel to start", STEP_TIMEOUT, |screen| {
        screen.contains("Welcome to keel") || exit_line(screen).is_some()
    });
    tmux.type_line("Write the file.");

    let screen = approve(&tmux, "the box for the early claim's check", CHECK_BOX);
    assert!(screen.contains("Completing #1 Write out.txt runs its check first"), "{screen}");
    assert!(screen.contains("bash wants to run:"), "{screen}");
    approve(&tmux, "the box for the write", "wants to change");
    let screen = tmux.wait_for("the failed check's mark", STEP_TIMEOUT, |screen| {
        screen.contains("✗ ") || exit_line(screen).is_some()
    });
    assert!(screen.contains("✗ check #1 grep -q hello out.txt · exit 2"), "{screen}");
    assert_eq!(board_count(&screen), Some((0, 1)), "the early claim completed nothing");

    // The same check again: asked again, since "y" allowed it once.
    // The box before it may still be on screen for a moment: this one is told by its reason.
    approve(&tmux, "the box for the honest claim's check", CHECK_BOX);
    let screen = tmux.wait_for("the model's last words", STEP_TIMEOUT, |screen| {
        screen.contains("The file says hello.") || exit_line(screen).is_some()
    });
    assert!(screen.contains("✓ check #1 grep -q hello out.txt"), "{screen}");
    assert_eq!(board_count(&screen), Some((1, 1)), "the honest claim passed:\n{screen}");
    tmux.quit();
}
