//! The `bash` tool against a real temporary workspace and real `bash` processes: exit codes and
//! output, timeouts and interrupts that kill the whole process tree (children that left the
//! session too), no terminal, capped output, live output, and commands the guard refuses.

use crate::support::files::{PROMPT, ctx, run, workspace};
use crate::support::processes::{is_dead, read_pids};
use keel::tools::output::{DISPLAY_OUTPUT_LIMIT, MODEL_OUTPUT_LIMIT};
use keel::tools::{ToolContext, ToolOutcome};
use serde_json::json;
use std::path::Path;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// Runs `call`, failing with `what` if it has not ended within [`PROMPT`].
async fn within<T>(what: &str, call: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(PROMPT, call).await.unwrap_or_else(|_| panic!("{what} hung"))
}

/// Waits up to `within` for every pid to be dead.
async fn all_dead(pids: &[i32], within: Duration) -> bool {
    let until = Instant::now() + within;
    loop {
        if pids.iter().all(|pid| is_dead(*pid)) {
            return true;
        }
        if Instant::now() > until {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A command that leaves three long sleepers (one in a nested shell) and records their pids.
const SLEEPERS: &str = "sleep 1000 & echo $! >> pids; \
     bash -c 'sleep 1000 & echo $! >> pids; wait' & echo $! >> pids; \
     sleep 1000";

/// Waits until the command has written `count` pids.
async fn wait_for_pids(path: &Path, count: usize) -> Vec<i32> {
    let until = Instant::now() + PROMPT;
    loop {
        let pids = read_pids(path);
        if pids.len() >= count || Instant::now() > until {
            return pids;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn reports_exit_code_stdout_and_stderr() {
    let (_dir, tools) = workspace();
    let outcome =
        run(&tools, "bash", json!({"command": "echo to-out; echo to-err >&2; exit 3"})).await;
    assert_eq!(outcome.exit_code, Some(3));
    assert!(outcome.is_error);
    assert!(outcome.for_model.starts_with("Exit code 3"), "{}", outcome.for_model);
    assert!(outcome.for_model.contains("--- stdout ---\nto-out\n"));
    assert!(outcome.for_model.contains("--- stderr ---\nto-err\n"));

    let outcome = run(&tools, "bash", json!({"command": "true"})).await;
    assert_eq!(outcome.exit_code, Some(0));
    assert!(!outcome.is_error);
    assert!(outcome.for_model.contains("(no output)"));
}

#[tokio::test]
async fn runs_in_the_workspace_root() {
    let (_dir, tools) = workspace();
    let outcome = run(&tools, "bash", json!({"command": "pwd -P"})).await;
    let root = tools.workspace().root().display().to_string();
    assert!(outcome.for_model.contains(&root), "{}", outcome.for_model);
}

#[tokio::test]
async fn timeout_kills_the_whole_process_tree_promptly() {
    let (dir, tools) = workspace();
    let call = run(&tools, "bash", json!({"command": SLEEPERS, "timeout_ms": 1500}));
    let outcome = within("a command past its timeout", call).await;
    assert!(outcome.is_error);
    assert!(outcome.for_model.contains("timed out after 1.5 s"), "{}", outcome.for_model);
    let pids = read_pids(&dir.path().join("pids"));
    assert_eq!(pids.len(), 3, "the command did not start its children in time");
    assert!(all_dead(&pids, PROMPT).await, "survivors among {pids:?}");
}

#[tokio::test]
async fn cancellation_kills_the_tree_and_says_so() {
    let (outcome, pids) = interrupted_once_running(SLEEPERS).await;
    assert!(outcome.is_error);
    assert!(outcome.for_model.contains("interrupted by user"), "{}", outcome.for_model);
    assert!(all_dead(&pids, PROMPT).await, "survivors among {pids:?}");
}

/// Runs `command` (which writes its three processes' pids to `pids`) and interrupts it once they
/// run; how it ended, and the pids.
async fn interrupted_once_running(command: &str) -> (ToolOutcome, Vec<i32>) {
    let (dir, tools) = workspace();
    let context = ctx();
    let cancel = context.cancel.clone();
    let pid_file = dir.path().join("pids");
    let canceller = tokio::spawn(async move {
        wait_for_pids(&pid_file, 3).await;
        cancel.cancel();
    });
    let input = json!({ "command": command });
    let call = tools.run("bash", &input, &context);
    let outcome = within("a cancelled command", call).await;
    canceller.await.unwrap();
    (outcome, read_pids(&dir.path().join("pids")))
}

#[tokio::test]
async fn dropping_the_call_kills_the_tree() {
    dropping_the_call_kills_every_process_of(SLEEPERS).await;
}

/// Starts `command` (which writes its three processes' pids to `pids`), drops the call once they
/// run, and checks that every one of them is gone.
async fn dropping_the_call_kills_every_process_of(command: &str) {
    let (dir, tools) = workspace();
    let context = ctx();
    let pid_file = dir.path().join("pids");
    let input = json!({ "command": command });
    let call = tools.run("bash", &input, &context);
    tokio::select! {
        _ = call => panic!("the sleepers finished"),
        _ = wait_for_pids(&pid_file, 3) => {}
    }
    let pids = read_pids(&pid_file);
    assert_eq!(pids.len(), 3);
    assert!(all_dead(&pids, PROMPT).await, "survivors among {pids:?}");
}

/// Children that leave the process group and the session: a plain `setsid`, and a `setsid`
/// shell whose parent has already exited (an orphan, adopted by the supervisor).
const ESCAPERS: &str = "setsid sleep 1000 > /dev/null 2>&1 & echo $! >> pids; \
     (setsid bash -c 'echo $$ >> pids; sleep 1000 & echo $! >> pids; wait' \
       > /dev/null 2>&1 &); \
     sleep 1000";

#[tokio::test]
async fn timeout_kills_children_that_left_the_session_and_says_so_truly() {
    let (dir, tools) = workspace();
    let outcome = run(&tools, "bash", json!({"command": ESCAPERS, "timeout_ms": 1500})).await;
    assert!(outcome.is_error);
    assert!(
        outcome.for_model.contains("timed out after 1.5 s; it was killed with every process"),
        "{}",
        outcome.for_model
    );
    let pids = read_pids(&dir.path().join("pids"));
    assert_eq!(pids.len(), 3, "the command did not start its children in time");
    assert!(all_dead(&pids, PROMPT).await, "survivors among {pids:?}");
}

#[tokio::test]
async fn interrupt_kills_children_that_left_the_session() {
    let (outcome, pids) = interrupted_once_running(ESCAPERS).await;
    assert!(outcome.for_model.contains("killed with every process"), "{}", outcome.for_model);
    assert_eq!(pids.len(), 3);
    assert!(all_dead(&pids, PROMPT).await, "survivors among {pids:?}");
}

#[tokio::test]
async fn dropping_the_call_kills_children_that_left_the_session() {
    dropping_the_call_kills_every_process_of(ESCAPERS).await;
}

#[tokio::test]
async fn commands_have_no_terminal_and_a_session_of_their_own() {
    let (_dir, tools) = workspace();
    // Fields 6 and 7 of the shell's stat line: its session and its controlling terminal.
    let outcome = run(&tools, "bash", json!({"command": "cut -d' ' -f6,7 /proc/$$/stat"})).await;
    assert_eq!(outcome.exit_code, Some(0), "{}", outcome.for_model);
    let line = outcome.for_model.split("--- stdout ---\n").nth(1).unwrap().trim().to_owned();
    let (session, tty) = line.split_once(' ').unwrap();
    assert_eq!(tty, "0", "the command has a controlling terminal");
    let ours = nix::unistd::getsid(None).unwrap().as_raw();
    assert_ne!(session.parse::<i32>().unwrap(), ours, "the command shares keel's session");

    let outcome = run(
        &tools,
        "bash",
        json!({"command": "printf '\\e]0;pwned\\a' > /dev/tty && echo reached"}),
    )
    .await;
    assert!(outcome.is_error, "{}", outcome.for_model);
    assert!(!outcome.for_model.contains("reached"), "{}", outcome.for_model);
    assert!(outcome.for_model.contains("/dev/tty"), "{}", outcome.for_model);
}

#[tokio::test]
async fn commands_start_with_no_signal_blocked() {
    let (_dir, tools) = workspace();
    let outcome = run(&tools, "bash", json!({"command": "grep SigBlk /proc/self/status"})).await;
    assert!(outcome.for_model.contains("SigBlk:\t0000000000000000"), "{}", outcome.for_model);
}

#[tokio::test]
async fn commands_reading_stdin_get_end_of_file() {
    let (_dir, tools) = workspace();
    let call = run(
        &tools,
        "bash",
        json!({"command": "cat; read line; echo \"read=$?\"", "timeout_ms": 60000}),
    );
    let outcome = within("a command reading stdin", call).await;
    assert_eq!(outcome.exit_code, Some(0), "{}", outcome.for_model);
    assert!(outcome.for_model.contains("read=1"), "{}", outcome.for_model);
}

#[tokio::test]
async fn children_holding_the_pipes_do_not_hang_the_tool() {
    let (dir, tools) = workspace();
    let call = run(&tools, "bash", json!({"command": "sleep 1000 & echo $! > pids; echo started"}));
    let outcome = within("a command whose child holds the pipes", call).await;
    assert_eq!(outcome.exit_code, Some(0));
    assert!(outcome.for_model.contains("started"));
    assert!(outcome.for_model.contains("background processes"), "{}", outcome.for_model);
    let pids = read_pids(&dir.path().join("pids"));
    assert!(all_dead(&pids, PROMPT).await);
}

#[tokio::test]
async fn background_jobs_with_their_own_output_keep_running() {
    let (dir, tools) = workspace();
    let outcome =
        run(&tools, "bash", json!({"command": "sleep 60 > /dev/null 2>&1 & echo $! > pids"})).await;
    assert_eq!(outcome.exit_code, Some(0), "{}", outcome.for_model);
    let pids = read_pids(&dir.path().join("pids"));
    assert_eq!(pids.len(), 1);
    // Long enough for a supervisor that wrongly took the call's end as keel's death to act.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let alive = !is_dead(pids[0]);
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pids[0]),
        nix::sys::signal::Signal::SIGKILL,
    );
    assert!(alive, "a detached background job was killed: {}", outcome.for_model);
}

/// The peak resident memory of this process, in bytes.
fn peak_memory() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|line| line.starts_with("VmHWM:")).unwrap();
    let kib: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kib * 1024
}

#[tokio::test]
async fn huge_output_is_capped_and_memory_stays_flat() {
    const PRODUCED: u64 = 200_000_000;
    const MEMORY_ALLOWANCE: u64 = 100 * 1024 * 1024;
    let (_dir, tools) = workspace();
    let before = peak_memory();
    let outcome =
        run(&tools, "bash", json!({"command": format!("yes | head -c {PRODUCED}")})).await;
    let after = peak_memory();
    assert_eq!(outcome.exit_code, Some(0));
    assert!(outcome.for_model.len() <= MODEL_OUTPUT_LIMIT, "{}", outcome.for_model.len());
    assert!(outcome.for_display.len() <= DISPLAY_OUTPUT_LIMIT);
    assert!(outcome.for_display.len() > MODEL_OUTPUT_LIMIT);
    let omitted: u64 = outcome
        .for_model
        .split("… ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .unwrap()
        .parse()
        .unwrap();
    assert!(omitted >= PRODUCED - MODEL_OUTPUT_LIMIT as u64, "{omitted}");
    assert!(omitted < PRODUCED);
    assert!(outcome.for_model.trim_end().ends_with('y'));
    assert!(after < before + MEMORY_ALLOWANCE, "peak memory grew from {before} to {after}");
}

#[tokio::test]
async fn non_utf8_output_is_shown_lossily() {
    let (_dir, tools) = workspace();
    let outcome = run(&tools, "bash", json!({"command": r"printf 'ok\377\376end\n'"})).await;
    assert_eq!(outcome.exit_code, Some(0));
    assert!(outcome.for_model.contains("ok\u{FFFD}\u{FFFD}end"), "{}", outcome.for_model);
}

#[tokio::test]
async fn live_output_arrives_while_the_command_runs() {
    let (_dir, tools) = workspace();
    let (sender, mut receiver) = tokio::sync::mpsc::unbounded_channel();
    let context = ToolContext {
        cancel: CancellationToken::new(),
        live_output: Some(sender),
        gate: None,
        conversation: None,
    };
    // The command waits for a file the test creates only after the first chunk arrived:
    // that chunk cannot have come with the end of the command.
    let gate = tools.workspace().root().join("go-on");
    let command = "echo first; while [ ! -e go-on ]; do sleep 0.02; done; echo second";
    let task =
        tokio::spawn(
            async move { tools.run("bash", &json!({"command": command}), &context).await },
        );
    let first = within("the first chunk", receiver.recv()).await.unwrap();
    assert!(first.contains("first"), "{first}");
    assert!(!first.contains("second"), "{first}");
    std::fs::write(gate, "").unwrap();
    let outcome = within("the gated command", task).await.unwrap();
    let mut rest = String::new();
    while let Ok(chunk) = receiver.try_recv() {
        rest.push_str(&chunk);
    }
    assert!(rest.contains("second"), "{rest}");
    assert!(outcome.for_display.contains("first\nsecond"));
}

#[tokio::test]
async fn an_already_interrupted_call_starts_nothing() {
    let (dir, tools) = workspace();
    let context = ctx();
    context.cancel.cancel();
    let outcome = tools.run("bash", &json!({"command": "touch marker"}), &context).await;
    assert!(outcome.is_error);
    assert!(outcome.for_model.contains("interrupted"));
    assert!(!dir.path().join("marker").exists());
}

#[tokio::test]
async fn refused_commands_never_run() {
    let (dir, tools) = workspace();
    let outcome = run(&tools, "bash", json!({"command": "touch marker && sudo ls"})).await;
    assert!(outcome.is_error);
    assert!(outcome.for_model.contains("Refused"), "{}", outcome.for_model);
    assert!(outcome.for_model.contains("sudo"));
    assert!(!dir.path().join("marker").exists());
}
