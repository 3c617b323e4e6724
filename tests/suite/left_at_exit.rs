//! Nothing keel started outlives it: right after keel ends — a `-p` run's end, Ctrl+C, SIGTERM,
//! the TUI's quit while a command runs — no process of its sandboxed command is left, not its
//! supervisor, not bwrap, not even as a zombie waiting for init.
//!
//! Every process below keel is noted while the command runs (the supervisor, bwrap, the shell,
//! its `sleep`); the moment keel is gone, none of them may still have an entry in `/proc`.

use crate::support::bin::{self, HANG_GUARD, POLL};
use crate::support::files::outside_tmp;
use crate::support::llm::{FakeLlm, Step, text, tool};
use crate::support::tmux::{KEY_TIMEOUT, KeelPane};
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::json;
use std::collections::{BTreeSet, HashMap};
use std::process::Stdio;
use std::time::{Duration, Instant};

/// How often keel's end is looked for when keel is not this test's child: well under the
/// milliseconds a supervisor used to outlive keel.
const TIGHT_POLL: Duration = Duration::from_micros(500);

fn bash_step(command: &str) -> Step {
    tool("bash", json!({ "command": command }))
}

/// `(pid, parent)` of every process `/proc` shows, zombies included.
fn parents() -> HashMap<i32, i32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|entry| {
            let pid: i32 = entry.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(entry.path().join("stat")).ok()?;
            let parent = stat.rsplit_once(')')?.1.split_whitespace().nth(1)?.parse().ok()?;
            Some((pid, parent))
        })
        .collect()
}

/// Every process below `root`.
fn descendants(root: i32) -> BTreeSet<i32> {
    let parents = parents();
    let mut found = BTreeSet::new();
    let mut queue = vec![root];
    while let Some(pid) = queue.pop() {
        for (child, _) in parents.iter().filter(|(_, parent)| **parent == pid) {
            if found.insert(*child) {
                queue.push(*child);
            }
        }
    }
    found
}

fn command_line(pid: i32) -> String {
    let bytes = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    String::from_utf8_lossy(&bytes).replace('\0', " ")
}

/// Waits until `keel`'s command runs `marker`'s `sleep` under its supervisor, and returns every
/// process below keel then.
fn command_processes(keel: i32, marker: &str) -> BTreeSet<i32> {
    let deadline = Instant::now() + HANG_GUARD;
    loop {
        let below = descendants(keel);
        let lines: Vec<String> = below.iter().map(|pid| command_line(*pid)).collect();
        let supervised = lines.iter().any(|line| line.contains("__keel_supervise"));
        let sleeping = lines.iter().any(|line| line.starts_with("sleep") && line.contains(marker));
        if supervised && sleeping {
            return below;
        }
        assert!(Instant::now() < deadline, "the command never ran: {lines:?}");
        std::thread::sleep(POLL);
    }
}

/// Fails naming each of `noted` that still has an entry in `/proc`.
fn assert_none_left(noted: &BTreeSet<i32>, how: &str) {
    let left: Vec<String> = noted
        .iter()
        .filter_map(|pid| std::fs::read_to_string(format!("/proc/{pid}/stat")).ok())
        .collect();
    assert!(left.is_empty(), "{how}: still there right after keel ended: {left:?}");
}

/// A command that sleeps, named by `marker` so that its `sleep` can be told from others'.
fn sleeping(marker: &str, seconds: &str) -> String {
    format!("sleep {seconds}.{marker}; echo slept")
}

/// Runs `keel -p` on `steps`; `end` is called once the command's processes are noted, with
/// keel's pid; returns what was noted and keel's exit status.
fn run_p(
    steps: Vec<Step>,
    marker: &str,
    end: impl FnOnce(i32),
) -> (BTreeSet<i32>, std::process::ExitStatus) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(FakeLlm::start(steps, Duration::ZERO));
    let (home, work) = (outside_tmp(), outside_tmp());
    let mut keel = bin::keel(home.path());
    keel.args(["-p", "go", "--approval", "auto", "--workdir"])
        .arg(work.path())
        .env("ANTHROPIC_API_KEY", "sk-test")
        .env("ANTHROPIC_BASE_URL", server.anthropic_base())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut child = keel.spawn().unwrap();
    let pid = i32::try_from(child.id()).unwrap();
    let noted = command_processes(pid, marker);
    end(pid);
    // Returns the moment keel is reaped: nothing is given time to finish on its own.
    let status = child.wait().unwrap();
    (noted, status)
}

#[test]
fn nothing_is_left_when_a_p_run_ends() {
    let marker = "41";
    let steps = vec![bash_step(&sleeping(marker, "1")), text("Done.")];
    let (noted, status) = run_p(steps, marker, |_| {});
    assert!(status.success(), "{status:?}");
    assert_none_left(&noted, "the run's end");
}

#[test]
fn nothing_is_left_when_a_p_run_ends_with_a_job_still_running() {
    let marker = "45";
    let job = format!("sleep 30.{marker} > /dev/null 2>&1 & echo started");
    let steps = vec![bash_step(&job), text("Done.")];
    let (noted, status) = run_p(steps, marker, |_| {});
    assert!(status.success(), "{status:?}");
    assert_none_left(&noted, "the run's end, a job left running");
}

#[test]
fn nothing_is_left_when_a_p_run_is_interrupted_or_terminated() {
    for (signal, marker) in [(Signal::SIGINT, "42"), (Signal::SIGTERM, "43")] {
        let steps = vec![bash_step(&sleeping(marker, "30")), text("Done.")];
        let (noted, _status) = run_p(steps, marker, |keel| {
            kill(Pid::from_raw(keel), signal).unwrap();
        });
        assert_none_left(&noted, &format!("{signal:?}"));
    }
}

#[test]
fn nothing_is_left_when_the_tui_quits_while_a_command_runs() {
    let test = "nothing_is_left_when_the_tui_quits_while_a_command_runs";
    let marker = "44";
    let (home, work) = (outside_tmp(), outside_tmp());
    let Some(pane) = KeelPane::start(test, home.path()) else { return };
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let steps = vec![bash_step(&sleeping(marker, "30")), text("Done.")];
    let server = runtime.block_on(FakeLlm::start(steps, Duration::ZERO));
    let env = format!("ANTHROPIC_API_KEY=sk-test ANTHROPIC_BASE_URL='{}'", server.anthropic_base());
    pane.launch(&env, &format!("--approval auto --workdir '{}'", work.path().display()));
    pane.wait_for("keel's prompt", KEY_TIMEOUT, |_| pane.alternate_screen());
    pane.type_line("go");
    let keel = wait_for_keel(&pane, &work.path().display().to_string());
    let noted = command_processes(keel, marker);
    // Not Ctrl+C, which would interrupt the command first: keel leaves with it running.
    pane.type_line("/quit");
    // keel is the pane shell's child: its end is seen as its entry turning into a zombie, or
    // going, looked at far more often than a supervisor used to outlive it.
    let deadline = Instant::now() + HANG_GUARD;
    while std::fs::read_to_string(format!("/proc/{keel}/stat"))
        .is_ok_and(|stat| !stat.rsplit_once(')').is_some_and(|(_, rest)| rest.starts_with(" Z")))
    {
        assert!(Instant::now() < deadline, "keel did not end");
        std::thread::sleep(TIGHT_POLL);
    }
    assert_none_left(&noted, "the TUI's quit");
}

/// keel's pid: the process running the built binary on `workspace`.
fn wait_for_keel(pane: &KeelPane, workspace: &str) -> i32 {
    let program = bin::program().to_string_lossy().into_owned();
    let deadline = Instant::now() + HANG_GUARD;
    loop {
        let keel = parents().keys().copied().find(|pid| {
            let line = command_line(*pid);
            line.starts_with(&program) && !line.contains("__keel") && line.contains(workspace)
        });
        if let Some(keel) = keel {
            return keel;
        }
        assert!(Instant::now() < deadline, "keel never started: {}", pane.screen());
        std::thread::sleep(POLL);
    }
}
