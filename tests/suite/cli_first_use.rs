//! `keel` on the command line as someone coming from Claude Code or Codex types it: flags after
//! `-p`, a prompt last, the messages for a missing key, the answer printed once, a closed pipe.

use crate::support::{bin, llm};
use bin::{json_lines, keel, last_result, output_within, text};
use llm::FakeLlm;
use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread")]
async fn flags_may_come_after_p_and_the_prompt_last() {
    let server = FakeLlm::start(vec![llm::text("Hello there.")], Duration::ZERO).await;
    let (home, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mut command = keel(home.path());
    command
        .args(["-p", "--max-rounds", "3", "--output-format", "json", "--workdir"])
        .arg(work.path())
        .arg("hi")
        .env("ANTHROPIC_API_KEY", "k")
        .env("ANTHROPIC_BASE_URL", server.anthropic_base());
    let output = output_within(&mut command, "keel -p --max-rounds 3 hi");
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert_eq!(last_result(&json_lines(&output))["outcome"], "success");
    let bodies = server.bodies().await;
    assert_eq!(bodies[0]["messages"][0]["content"][0]["text"], "hi");
}

#[test]
fn two_prompts_are_a_usage_error() {
    let home = tempfile::tempdir().unwrap();
    let output = keel(home.path()).args(["-p", "one", "two"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(text(&output.stderr).contains("two prompts"), "{}", text(&output.stderr));
}

#[test]
fn zero_rounds_is_refused_from_the_flag_and_from_a_file() {
    let (home, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let output = keel(home.path()).args(["-p", "--max-rounds", "0", "hi"]).output().unwrap();
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("at least 1"), "{stderr}");

    std::fs::create_dir_all(work.path().join(".keel")).unwrap();
    std::fs::write(work.path().join(".keel/config.toml"), "max_rounds = 0\n").unwrap();
    let output = keel(home.path())
        .args(["-p", "hi", "--workdir"])
        .arg(work.path())
        .env("ANTHROPIC_API_KEY", "k")
        .output()
        .unwrap();
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("max_rounds must be at least 1"), "{stderr}");
}

#[test]
fn a_local_openai_server_without_a_key_is_told_a_placeholder_works() {
    let (home, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let output = keel(home.path())
        .args(["-p", "hi", "--workdir"])
        .arg(work.path())
        .env("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
        .output()
        .unwrap();
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("OPENAI_BASE_URL is set"), "{stderr}");
    assert!(stderr.contains("any placeholder works"), "{stderr}");
    assert!(!stderr.contains('`'), "no raw backticks: {stderr}");
}

#[test]
fn provider_openai_without_a_key_names_the_openai_variable() {
    let home = tempfile::tempdir().unwrap();
    let output = keel(home.path()).args(["-p", "hi", "--provider", "openai"]).output().unwrap();
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("OPENAI_API_KEY"), "{stderr}");
    assert!(!stderr.contains("ANTHROPIC_API_KEY"), "{stderr}");
}

#[test]
fn the_answer_is_printed_once_where_stdout_and_stderr_meet() {
    let (home, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let log = work.path().join("both.log");
    let file = std::fs::File::create(&log).unwrap();
    std::fs::create_dir_all(work.path().join("w")).unwrap();
    let mut child = keel(home.path())
        .args(["--demo", "-p", "--demo-pace-ms", "0", "--workdir"])
        .arg(work.path().join("w"))
        .stdout(Stdio::from(file.try_clone().unwrap()))
        .stderr(Stdio::from(file))
        .spawn()
        .unwrap();
    let status = bin::wait_within(&mut child, bin::HANG_GUARD, "keel --demo -p");
    let both = std::fs::read_to_string(&log).unwrap();
    assert!(status.success(), "{both}");
    assert_eq!(both.matches("## Done").count(), 1, "{both}");
    assert!(both.contains("model responses, board 6/6 done"), "{both}");
}

#[test]
fn a_reader_that_closes_the_pipe_ends_the_run_quietly_with_exit_0() {
    let (home, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mut child = keel(home.path())
        .args(["--demo", "-p", "--demo-pace-ms", "100", "--output-format", "json", "--workdir"])
        .arg(work.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // `| head -1`: one line, then the reader is gone.
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut first).unwrap();
    assert!(first.starts_with('{'), "{first}");
    let status = bin::wait_within(&mut child, bin::HANG_GUARD, "keel -p | head -1");
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert_eq!(status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("Broken pipe"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_run_that_got_no_response_says_so_in_words() {
    let output = bin::p_refused_with_401().await;
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("(no response from the model)"), "{stderr}");
    assert!(!stderr.contains("model responses"), "{stderr}");
}

#[test]
fn the_demo_says_where_it_works_and_its_answer_names_that_folder() {
    let home = tempfile::tempdir().unwrap();
    let output = keel(home.path()).args(["--demo", "-p", "--demo-pace-ms", "0"]).output().unwrap();
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
    assert!(output.status.success(), "{stderr}");
    let line = stderr.lines().find(|line| line.contains("the demo works in")).expect(&stderr);
    assert!(line.contains("removed when keel exits"), "{line}");
    let folder = line.split("works in ").nth(1).unwrap().split(',').next().unwrap();
    assert!(folder.contains("keel-demo-"), "{line}");
    // keel -p exits as it prints this: no "try it before you quit", but how to keep the files.
    assert!(stdout.contains(&format!("It ran in {folder}, which keel removes as it exits")));
    assert!(stdout.contains("keel --demo -p --workdir DIR") && !stdout.contains("before you quit"));
    assert!(!std::path::Path::new(folder).exists(), "the temporary folder is gone");
}
