//! A command held at its gate while undo's snapshot is taken: it runs only once the gate opens,
//! never when it does not, through the real sandbox (`bwrap`, held at keel's last step inside
//! it) and unconfined alike; and through the keel binary, the snapshot before a command is
//! written before the command runs, however slow git is.

use crate::support::bin::{keel, output_within};
use crate::support::git::path_with_git_doing;
use crate::support::llm::{FakeLlm, text, tool};
use crate::support::processes::processes_with;
use keel::runtime::Workspace;
use keel::runtime::gate::{self, Gate};
use keel::runtime::sandbox::{Availability, KeelFolders, Mode, Policy, Sandbox};
use keel::tools::{ToolContext, ToolOutcome, Tools};
use serde_json::json;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How long a test keeps the gate closed before it looks.
const HOLD: Duration = Duration::from_millis(400);
/// How many commands that end at once run through the sandbox, to catch their end outrunning
/// the sandbox's word that it came up.
const SHORT_COMMANDS: usize = 20;

/// Tools whose commands run in the workspace sandbox (which must be available), or unconfined.
fn tools(root: &Path, confined: bool) -> Tools {
    keel::runtime::supervisor::set_program(crate::support::bin::program());
    let mode = if confined { Mode::Workspace } else { Mode::Off };
    let sandbox = Sandbox::probe(Policy { mode, ..Policy::default() }, None);
    if confined {
        assert!(
            matches!(sandbox.availability, Availability::Ready { .. }),
            "these tests need bwrap (package bubblewrap): {:?}",
            sandbox.availability
        );
    }
    Tools::new(Workspace::new(root).unwrap()).with_sandbox(sandbox)
}

/// Runs `command` behind `gate` on a task of its own.
fn run_behind(
    tools: &Tools,
    command: &str,
    gate: Gate,
    cancel: &CancellationToken,
) -> tokio::task::JoinHandle<ToolOutcome> {
    let (tools, input) = (tools.clone(), json!({ "command": command }));
    let ctx = ToolContext {
        cancel: cancel.clone(),
        live_output: None,
        gate: Some(gate),
        conversation: None,
    };
    tokio::spawn(async move { tools.run("bash", &input, &ctx).await })
}

#[tokio::test]
async fn a_held_command_runs_only_once_its_gate_opens() {
    for confined in [true, false] {
        let work = tempfile::tempdir().unwrap();
        let tools = tools(work.path(), confined);
        let (opener, gate) = gate::closed();
        let running = run_behind(&tools, "echo ran > ran.txt", gate, &CancellationToken::new());
        tokio::time::sleep(HOLD).await;
        assert!(!work.path().join("ran.txt").exists(), "confined {confined}: ran before its gate");
        opener.open();
        let outcome = running.await.unwrap();
        assert!(!outcome.is_error, "confined {confined}: {}", outcome.for_model);
        assert!(work.path().join("ran.txt").exists(), "confined {confined}: never ran");
        if confined {
            // Set up meanwhile, the sandbox waited ready at the gate: that wait is keel's time.
            assert!(
                outcome.command.held > Duration::ZERO && outcome.command.held < HOLD,
                "{:?}",
                outcome.command.held
            );
        } else {
            assert_eq!(
                outcome.command.held,
                Duration::ZERO,
                "unconfined, nothing starts before the gate"
            );
        }
    }
}

#[tokio::test]
async fn a_command_whose_gate_never_opens_never_runs_and_leaves_nothing_behind() {
    for (confined, interrupted) in [(true, false), (true, true), (false, false), (false, true)] {
        let work = tempfile::tempdir().unwrap();
        let tools = tools(work.path(), confined);
        let (opener, gate) = gate::closed();
        let cancel = CancellationToken::new();
        let marker = format!("held-{}-{confined}-{interrupted}", std::process::id());
        let command = format!("echo ran > ran.txt # {marker}");
        let running = run_behind(&tools, &command, gate, &cancel);
        tokio::time::sleep(HOLD).await;
        if interrupted {
            cancel.cancel();
        } else {
            drop(opener);
        }
        let outcome = running.await.unwrap();
        let case = format!("confined {confined}, interrupted {interrupted}");
        assert!(
            outcome.is_error && outcome.for_model.contains("not started"),
            "{case}: {outcome:?}"
        );
        tokio::time::sleep(HOLD).await;
        assert!(!work.path().join("ran.txt").exists(), "{case}: it ran after all");
        assert_eq!(processes_with(&marker), Vec::<i32>::new(), "{case}: left running");
    }
}

/// A `git` that takes its time over `add`, so that a command not held would run meanwhile.
fn path_with_slow_git(bin: &Path) -> String {
    let prelude = format!("[ \"$1\" = add ] && sleep {}", HOLD.as_secs_f64());
    path_with_git_doing(bin, &prelude)
}

#[tokio::test(flavor = "multi_thread")]
async fn the_snapshot_before_a_command_is_written_before_the_command_runs() {
    let (home, work, bin) =
        (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let w = work.path();
    std::fs::write(w.join("a.txt"), "before\n").unwrap();
    let path = path_with_slow_git(bin.path());
    let steps = vec![
        tool("bash", json!({"command": "echo changed > a.txt; echo new > b.txt"})),
        text("Ran."),
    ];
    let server = FakeLlm::start(steps, Duration::ZERO).await;
    let mut command = keel(home.path());
    command
        .args(["--workdir"])
        .arg(w)
        .args(["-p", "Run it."])
        .env("PATH", &path)
        .env("ANTHROPIC_API_KEY", "k")
        .env("ANTHROPIC_BASE_URL", server.anthropic_base());
    let output = output_within(&mut command, "keel -p with a slow git");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(std::fs::read_to_string(w.join("a.txt")).unwrap(), "changed\n");

    let mut command = keel(home.path());
    command.args(["undo", "--workdir"]).arg(w).env("PATH", &path);
    let said =
        String::from_utf8_lossy(&output_within(&mut command, "keel undo").stdout).into_owned();
    assert_eq!(std::fs::read_to_string(w.join("a.txt")).unwrap(), "before\n", "{said}");
    assert!(!w.join("b.txt").exists(), "{said}");
}

#[tokio::test]
async fn a_sandbox_that_came_up_says_so_before_its_command_can_end() {
    let work = tempfile::tempdir().unwrap();
    let tools = tools(work.path(), true);
    let ctx = ToolContext {
        cancel: CancellationToken::new(),
        live_output: None,
        gate: None,
        conversation: None,
    };
    for run in 0..SHORT_COMMANDS {
        let outcome = tools.run("bash", &json!({ "command": "true" }), &ctx).await;
        assert!(!outcome.is_error && !outcome.command.sandbox_down, "run {run}: {outcome:?}");
    }
}

#[tokio::test]
async fn a_sandbox_that_cannot_be_set_up_runs_nothing_and_says_so() {
    let (work, bin) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    keel::runtime::supervisor::set_program(crate::support::bin::program());
    // What `bwrap` does where it may not make namespaces: a complaint, and nothing started.
    let broken = bin.path().join("bwrap");
    std::fs::write(
        &broken,
        "#!/bin/sh\necho 'bwrap: No permissions to create a new namespace' >&2\nexit 1\n",
    )
    .unwrap();
    std::fs::set_permissions(&broken, std::fs::Permissions::from_mode(0o755)).unwrap();
    let sandbox = Sandbox {
        availability: Availability::Ready { bwrap: broken },
        ..Sandbox::assumed_for_commands(Policy::default(), work.path(), KeelFolders::default())
    };
    let tools = Tools::new(Workspace::new(work.path()).unwrap()).with_sandbox(sandbox);
    let ctx = ToolContext {
        cancel: CancellationToken::new(),
        live_output: None,
        gate: None,
        conversation: None,
    };
    let outcome = tools.run("bash", &json!({ "command": "touch ran.txt" }), &ctx).await;
    assert!(outcome.is_error && outcome.command.sandbox_down, "{outcome:?}");
    assert!(
        outcome.for_model.contains("No permissions"),
        "bwrap's own words: {}",
        outcome.for_model
    );
    assert!(!work.path().join("ran.txt").exists());
}
