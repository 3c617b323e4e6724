//! Helpers shared by the tool tests: a real temporary workspace and a way to run a call.

use keel::runtime::Workspace;
use keel::tools::{ToolContext, ToolOutcome, Tools};
use serde_json::Value;
use std::time::Duration;
use tempfile::TempDir;
use tokio_util::sync::CancellationToken;

/// Generous bound for "returned promptly" on a loaded two-core machine: a hang guard only.
pub const PROMPT: Duration = Duration::from_secs(15);

/// A fresh workspace in a temporary folder, and the tools confined to it (`bash` under keel's
/// supervisor, as in the binary).
pub fn workspace() -> (TempDir, Tools) {
    keel::runtime::supervisor::set_program(crate::support::bin::program());
    let dir = tempfile::tempdir().unwrap();
    let tools = Tools::new(Workspace::new(dir.path()).unwrap());
    (dir, tools)
}

pub fn ctx() -> ToolContext<'static> {
    ToolContext {
        cancel: CancellationToken::new(),
        live_output: None,
        gate: None,
        conversation: None,
    }
}

pub async fn run(tools: &Tools, name: &str, input: Value) -> ToolOutcome {
    tools.run(name, &input, &ctx()).await
}

/// What a child process started by [`run_in_child`] reports about its one tool call.
#[derive(Debug)]
pub struct ChildOutcome {
    pub is_error: bool,
    pub for_model: String,
    pub changes: usize,
}

/// The line a child prints its outcome on, as JSON after this mark.
pub const CHILD_MARK: &str = "KEEL-CHILD-OUTCOME ";

/// Runs the ignored test `test` of the current test binary alone, in a child process with `env`
/// set and `input` on its standard input, and reads back the outcome it printed. The child may
/// change process-wide state (limits, its user) that the tests sharing this process must not see.
pub fn run_in_child(test: &str, env: &[(&str, String)], input: &str) -> ChildOutcome {
    use std::io::{Read, Write};
    use std::process::{Command, Stdio};
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args([test, "--exact", "--ignored", "--nocapture", "--test-threads=1"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (name, value) in env {
        command.env(name, value);
    }
    let mut child = command.spawn().unwrap();
    // The child reads all of it first thing, so this cannot fill the pipe and wait.
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    let until = std::time::Instant::now() + PROMPT;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if std::time::Instant::now() > until {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the child running {test} did not finish within {PROMPT:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut stdout = String::new();
    let mut stderr = String::new();
    child.stdout.take().unwrap().read_to_string(&mut stdout).unwrap();
    child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
    assert!(status.success(), "the child running {test} failed: {status}\n{stdout}\n{stderr}");
    let line = stdout
        .lines()
        .find_map(|line| line.split_once(CHILD_MARK).map(|(_, outcome)| outcome))
        .unwrap_or_else(|| {
            panic!("the child running {test} reported nothing:\n{stdout}\n{stderr}")
        });
    let outcome: Value = serde_json::from_str(line).unwrap();
    ChildOutcome {
        is_error: outcome["is_error"].as_bool().unwrap(),
        for_model: outcome["for_model"].as_str().unwrap().to_owned(),
        changes: outcome["changes"].as_u64().unwrap() as usize,
    }
}

/// The names in `folder`, sorted: to check that no temporary file was left behind.
pub fn names_in(folder: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(folder)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// A temporary folder outside `/tmp`, which a sandboxed command sees as a private, empty one: in
/// the build's own temporary folder, or in `/var/tmp` when the checkout itself lies under `/tmp`.
pub fn outside_tmp() -> tempfile::TempDir {
    let target = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
    let base = if target.starts_with("/tmp") { std::path::Path::new("/var/tmp") } else { target };
    tempfile::tempdir_in(base).unwrap()
}
