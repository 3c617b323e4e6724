//! A file-size limit (`prlimit --fsize`, standing in for a full disk) against the real binary:
//! keel is never killed by `SIGXFSZ`; a session log it cannot write is said on stderr by `-p`
//! (what is lost: undo and `--continue`) and fails the run; a file too large for the limit is
//! refused with a clear error and the file is left as it was.

use crate::support::{bin, llm};
use bin::output_within;
use llm::{FakeLlm, Step, text, tool};
use serde_json::json;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

/// The largest file keel may write in these tests, in bytes.
const FILE_SIZE_LIMIT: usize = 16 * 1024;

/// `keel -p PROMPT` under the file-size limit, against a server playing `steps`.
async fn limited(steps: Vec<Step>, home: &Path, work: &Path, prompt: &str) -> Output {
    let server = FakeLlm::start(steps, Duration::ZERO).await;
    let keel = bin::keel(home);
    let mut command = Command::new("prlimit");
    command
        .arg(format!("--fsize={FILE_SIZE_LIMIT}"))
        .arg(keel.get_program())
        .arg("--workdir")
        .arg(work)
        .args(["-p", prompt])
        .env("HOME", home)
        .env_remove("XDG_STATE_HOME")
        .env_remove("XDG_CONFIG_HOME")
        .env("ANTHROPIC_API_KEY", "k")
        .env("ANTHROPIC_BASE_URL", server.anthropic_base())
        .stdin(Stdio::null());
    output_within(&mut command, "keel -p under a file-size limit")
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_session_log_that_cannot_be_written_is_said_and_fails_the_run() {
    let (home, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    // The prompt's record alone is past the limit.
    let prompt = format!("Write a.txt. {}", "context ".repeat(FILE_SIZE_LIMIT / 4));
    let steps =
        vec![tool("write_file", json!({"path": "a.txt", "content": "new\n"})), text("Done.")];
    let output = limited(steps, home.path(), work.path(), &prompt).await;
    let said = stderr(&output);
    assert!(output.status.code().is_some(), "keel was killed by a signal: {said}");
    assert_ne!(output.status.code(), Some(0), "a run that saved nothing fails: {said}");
    assert!(said.contains("no longer being saved"), "{said}");
    assert!(said.contains("keel undo") && said.contains("--continue"), "{said}");
    assert_eq!(std::fs::read_to_string(work.path().join("a.txt")).unwrap(), "new\n");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_write_past_the_size_limit_is_refused_and_leaves_the_file_as_it_was() {
    let (home, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    std::fs::write(work.path().join("big.txt"), "old\n").unwrap();
    let content = "x".repeat(FILE_SIZE_LIMIT * 2);
    let steps =
        vec![tool("write_file", json!({"path": "big.txt", "content": content})), text("Done.")];
    let output = limited(steps, home.path(), work.path(), "Grow big.txt.").await;
    let said = stderr(&output);
    assert!(output.status.code().is_some(), "keel was killed by a signal: {said}");
    assert!(said.contains("would exceed the size limit"), "{said}");
    assert_eq!(std::fs::read_to_string(work.path().join("big.txt")).unwrap(), "old\n");
    let names: Vec<_> =
        std::fs::read_dir(work.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names.len(), 1, "no temporary file is left: {names:?}");
}
