//! The demo follows what really happened, in a real terminal (`support::tmux`): without a sandbox
//! (`KEEL_BWRAP` naming a program that does not exist, as a machine without bubblewrap has none,
//! and Landlock turned off)
//! it says what to install and offers to run with the sandbox off in its own folder — declined,
//! keel refuses its commands and the scripted model says the work stopped, marking nothing done;
//! accepted, it runs unconfined to the end. In plan mode it reads, leaves a plan to approve and
//! changes nothing until approved.

use crate::support::tmux::{KEY_TIMEOUT, KeelPane, board_count, exit_line};
use std::path::Path;
use std::time::Duration;

/// The demo is scripted but runs real tools; on a loaded machine it can take a while.
const DEMO_TIMEOUT: Duration = Duration::from_secs(60);
/// The environment of a machine where no sandbox can be set up.
const NO_BWRAP: &str = "KEEL_BWRAP=/nonexistent/bwrap KEEL_LANDLOCK=off";
/// What the demo asks where it has no sandbox.
const OFFER: &str = "would run these commands with the sandbox off";
/// A pause longer than the approval box's guard against type-ahead.
const PAUSE: Duration = Duration::from_millis(1200);

/// The demo launched in `workdir` with `env` before keel and `args` after it, on a quick pace.
fn launch(tmux: &KeelPane, env: &str, workdir: &Path, args: &str) {
    tmux.launch(
        env,
        &format!("--demo --demo-pace-ms 150 --workdir '{}' {args}", workdir.display()),
    );
}

fn answer_offer(tmux: &KeelPane, key: &str) {
    let screen = tmux.wait_for("the offer to run unconfined", DEMO_TIMEOUT, |screen| {
        screen.contains(OFFER) || exit_line(screen).is_some()
    });
    assert!(screen.contains("apt-get install bubblewrap"), "what to install:\n{screen}");
    assert!(screen.contains("bash test_greet.sh"), "the commands that would run:\n{screen}");
    std::thread::sleep(PAUSE);
    tmux.send(&[key]);
}

#[test]
fn without_bwrap_the_demo_says_what_to_install_and_declined_stops_without_claiming_success() {
    let (home, workdir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let test =
        "without_bwrap_the_demo_says_what_to_install_and_declined_stops_without_claiming_success";
    let Some(tmux) = KeelPane::start(test, home.path()) else {
        return;
    };
    launch(&tmux, NO_BWRAP, workdir.path(), "");
    answer_offer(&tmux, "n");
    let screen = tmux.wait_for("the demo to stop", DEMO_TIMEOUT, |screen| {
        screen.contains("I stop here") && screen.contains("│ idle │")
    });
    assert!(screen.contains("bash pwd && ls -la ⊘ refused: no sandbox"), "{screen}");
    assert!(screen.contains("did not succeed"), "{screen}");
    assert!(!screen.contains("All six steps are complete"), "no success claimed:\n{screen}");
    assert!(!screen.contains("passing"), "{screen}");
    assert_eq!(board_count(&screen), Some((0, 6)), "nothing marked done:\n{screen}");
    assert!(!workdir.path().join("greet.sh").exists(), "the work stopped at the refusal");

    // Ctrl+T shows a request that was sent, not a preview.
    tmux.send(&["C-t"]);
    let screen = tmux.wait_for("the inspector", KEY_TIMEOUT, |screen| screen.contains("\"role\""));
    assert!(screen.contains("Request · sent"), "{screen}");
    tmux.send(&["Escape"]);
    tmux.quit();
}

#[test]
fn without_bwrap_the_demo_offered_the_sandbox_off_runs_to_the_end_in_its_folder() {
    let (home, workdir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let test = "without_bwrap_the_demo_offered_the_sandbox_off_runs_to_the_end_in_its_folder";
    let Some(tmux) = KeelPane::start(test, home.path()) else {
        return;
    };
    launch(&tmux, NO_BWRAP, workdir.path(), "");
    answer_offer(&tmux, "y");
    let screen = tmux.wait_for("the demo's last answer", DEMO_TIMEOUT, |screen| {
        screen.contains("All six steps are complete") && screen.contains("│ idle │")
    });
    assert_eq!(board_count(&screen), Some((6, 6)), "{screen}");
    assert!(screen.contains("sandbox: off (demo)"), "the bar says so:\n{screen}");
    assert!(workdir.path().join("greet.sh").exists());
    tmux.quit();
}

#[test]
fn in_plan_mode_the_demo_reads_leaves_a_plan_and_changes_nothing_until_approved() {
    let (home, workdir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let test = "in_plan_mode_the_demo_reads_leaves_a_plan_and_changes_nothing_until_approved";
    let Some(tmux) = KeelPane::start(test, home.path()) else {
        return;
    };
    launch(&tmux, "", workdir.path(), "--plan");
    let screen = tmux.wait_for("the plan", DEMO_TIMEOUT, |screen| {
        screen.contains("plan ready: /approve runs it") || exit_line(screen).is_some()
    });
    assert_eq!(board_count(&screen), Some((0, 6)), "a plan, nothing done:\n{screen}");
    assert!(screen.contains("bash pwd && ls -la"), "it read first:\n{screen}");
    assert!(!screen.contains("write_file"), "it wrote nothing:\n{screen}");
    assert!(std::fs::read_dir(workdir.path()).unwrap().next().is_none(), "nothing changed");

    tmux.type_line("/approve");
    let screen = tmux.wait_for("the work to be done", DEMO_TIMEOUT, |screen| {
        screen.contains("All six steps are complete") && screen.contains("│ idle │")
    });
    assert_eq!(board_count(&screen), Some((6, 6)), "{screen}");
    assert!(workdir.path().join("greet.sh").exists());
    tmux.quit();
}

#[test]
fn in_plan_mode_without_bwrap_a_refused_read_leaves_no_plan_claimed() {
    let (home, workdir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let test = "in_plan_mode_without_bwrap_a_refused_read_leaves_no_plan_claimed";
    let Some(tmux) = KeelPane::start(test, home.path()) else {
        return;
    };
    launch(&tmux, NO_BWRAP, workdir.path(), "--plan");
    answer_offer(&tmux, "n");
    let screen = tmux.wait_for("the demo to stop", DEMO_TIMEOUT, |screen| {
        screen.contains("I stop here") && screen.contains(" idle ")
    });
    assert!(screen.contains("refused: no sandbox"), "{screen}");
    assert!(!screen.contains("plan ready"), "no plan to approve:\n{screen}");
    assert!(screen.contains("No plan yet."), "{screen}");
    tmux.quit();
}
