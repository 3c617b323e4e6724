//! What the person is told of the Landlock sandbox: `keel sandbox` and `keel -p` name it, the status
//! bar names it, and a command started before the probe finishes runs under it when bwrap cannot.

use super::{LABEL, NO_BWRAP, bash_step, landlocked, without_bwrap};
use crate::support::files::outside_tmp;
use crate::support::keel_as::{User, keel_p};
use crate::support::llm::text;
use crate::support::{bin, tmux};
use std::os::unix::fs::PermissionsExt;

#[test]
fn keel_sandbox_and_keel_p_name_the_sandbox_in_force() {
    let (home, work) = (outside_tmp(), outside_tmp());
    let mut command = bin::keel(home.path());
    command.args(["sandbox", "--workdir"]).arg(work.path());
    without_bwrap(&mut command);
    let output = bin::output_within(&mut command, "keel sandbox");
    let report = bin::text(&output.stdout);
    assert!(output.status.success(), "{report}{}", bin::text(&output.stderr));
    assert!(report.contains(&format!("Commands: {LABEL}.")), "{report}");
    assert!(report.contains("bwrap cannot run here"), "{report}");
    assert!(report.contains("Landlock (version "), "{report}");

    // `-p` says it once on stderr, and the model's commands run under it.
    let run = landlocked(User::Root, home.path(), work.path(), &["echo ran"], &[]);
    let stderr = run.stderr();
    assert_eq!(stderr.matches("keel: confines commands with Landlock").count(), 1, "{stderr}");
    assert!(stderr.contains(NO_BWRAP), "why bwrap cannot run: {stderr}");
    assert!(!stderr.contains("cannot sandbox commands"), "{stderr}");
    assert!(run.results[0].contains("ran"), "{}", run.results[0]);
}

#[test]
fn the_status_bar_names_landlock() {
    let (dir, work) = (outside_tmp(), outside_tmp());
    let test = "the_status_bar_names_landlock";
    let Some(pane) = tmux::KeelPane::start_sized(test, dir.path(), (160, 30)) else { return };
    pane.launch(
        &format!("KEEL_BWRAP={NO_BWRAP} ANTHROPIC_API_KEY=sk-test"),
        &format!("--workdir '{}'", work.path().display()),
    );
    let screen = pane.wait_for("the status bar", tmux::KEY_TIMEOUT, |screen| {
        screen.contains(LABEL) || tmux::exit_line(screen).is_some()
    });
    assert!(screen.contains(LABEL), "{screen}");
    assert!(screen.contains("confines commands with Landlock"), "the notice: {screen}");
    pane.send(&["C-c"]);
}

/// A `bwrap` that takes a second to fail, whatever it is asked: the probe's answer comes after a
/// command has started in the sandbox assumed meanwhile.
const SLOW_BROKEN_BWRAP: &str =
    "#!/bin/sh\nsleep 1\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n";

#[test]
fn a_command_started_before_the_probe_runs_under_landlock_when_bwrap_cannot() {
    let (home, work, bin_dir) = (outside_tmp(), outside_tmp(), outside_tmp());
    std::fs::create_dir(work.path().join("src")).unwrap();
    let bwrap = bin_dir.path().join("bwrap");
    std::fs::write(&bwrap, SLOW_BROKEN_BWRAP).unwrap();
    std::fs::set_permissions(&bwrap, std::fs::Permissions::from_mode(0o755)).unwrap();
    let steps = vec![bash_step("touch src/ran.txt && echo RAN"), text("Done.")];
    let run = keel_p(User::Root, steps, home.path(), work.path(), &[], |command| {
        command.env("KEEL_BWRAP", &bwrap);
    });
    assert_eq!(run.output.status.code(), Some(0), "{}", run.stderr());
    assert!(run.results[0].contains("RAN"), "{}", run.results[0]);
    assert!(!run.results[0].contains("No permissions"), "{}", run.results[0]);
    assert!(work.path().join("src/ran.txt").exists());
    assert!(run.stderr().contains("No permissions to create new namespace"), "{}", run.stderr());
}
