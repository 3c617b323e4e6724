//! `keel` run as a process: exit codes, the stdout/stderr split, JSON lines, configuration
//! errors, and whole tasks against a scripted LLM server on 127.0.0.1.

use crate::support::{bin, llm};
use bin::{HANG_GUARD, POLL, json_lines, keel, last_result, output_within, text, wait_within};
use llm::FakeLlm;
use serde_json::Value;
use std::io::Write;
use std::path::Path;
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

#[test]
fn version_is_printed() {
    let home = tempfile::tempdir().unwrap();
    let output = keel(home.path()).arg("--version").output().unwrap();
    assert!(output.status.success());
    assert!(text(&output.stdout).starts_with("keel "));
}

#[test]
fn help_says_headless_runs_tools_without_asking() {
    let home = tempfile::tempdir().unwrap();
    let output = keel(home.path()).arg("--help").output().unwrap();
    assert!(output.status.success());
    assert!(text(&output.stdout).contains("without asking"));
}

#[test]
fn the_demo_finishes_its_board_headless() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let output = keel(home.path())
        .args(["--demo", "-p", "--demo-pace-ms", "0", "--workdir"])
        .arg(work.path())
        .output()
        .unwrap();
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
    assert!(output.status.success(), "{stderr}");
    assert!(stdout.starts_with("## Done"), "the answer alone goes to stdout: {stdout}");
    assert!(!stdout.contains("todo:"), "progress stays off stdout");
    assert!(stderr.contains("(6/6 completed)"), "{stderr}");
    assert!(stderr.contains(keel::agent::DEFAULT_NAG_MESSAGE), "{stderr}");
    // Its test step carries a check, which ran before the step was marked done.
    assert!(stderr.contains("✓ check #5 bash test_greet.sh · "), "{stderr}");
    assert!(stderr.contains("[x] #5: Run the test  (check passed)"), "{stderr}");
    // The demo's tools really ran.
    let greeting = std::fs::read_to_string(work.path().join("greet.sh")).unwrap();
    assert!(greeting.contains("Hello"));
    assert!(work.path().join("README.md").exists());
}

#[test]
fn json_output_is_one_event_per_line() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let output = keel(home.path())
        .args(["--demo", "-p", "--demo-pace-ms", "0", "--output-format", "json", "--workdir"])
        .arg(work.path())
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output.stderr));
    let events = json_lines(&output);
    for kind in ["todo", "tool_start", "tool_end", "reminder", "assistant_text", "usage", "result"]
    {
        assert!(events.iter().any(|event| event["type"] == kind), "no {kind} event");
    }
    // The same happenings the screen shows: the prompt first, each call started and ended.
    assert_eq!(events[0]["type"], "prompt", "{:?}", events[0]);
    let count = |kind: &str| events.iter().filter(|event| event["type"] == kind).count();
    assert_eq!(count("tool_start"), count("tool_end"));
    let result = last_result(&events);
    assert_eq!(
        (result["outcome"].as_str(), result["done"].as_u64(), result["total"].as_u64()),
        (Some("success"), Some(6), Some(6))
    );
    let todo = events.iter().rev().find(|event| event["type"] == "todo").unwrap();
    assert_eq!(todo["items"].as_array().unwrap().len(), 6);
    assert!(todo["items"].as_array().unwrap().iter().all(|item| item["status"] == "completed"));
    let tool_end =
        events.iter().find(|event| event["type"] == "tool_end" && event["name"] == "bash").unwrap();
    assert_eq!(tool_end["exit_code"], 0);
    // Its time in both units, the finer one agreeing with the coarser.
    let (ms, us) = (tool_end["duration_ms"].as_u64().unwrap(), tool_end["duration_us"].as_u64());
    assert_eq!(us.map(|us| us / 1_000), Some(ms), "{tool_end}");
}

#[test]
fn no_key_is_a_configuration_error() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let output =
        keel(home.path()).args(["-p", "hello", "--workdir"]).arg(work.path()).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(text(&output.stderr).contains("ANTHROPIC_API_KEY"), "{}", text(&output.stderr));
    assert!(!work.path().join(".keel").exists(), "a run that never started leaves no session");
}

#[test]
fn a_broken_config_file_names_file_line_and_key() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(work.path().join(".keel")).unwrap();
    std::fs::write(
        work.path().join(".keel/config.toml"),
        "model = \"m\"\nnag_threshold = \"often\"\n",
    )
    .unwrap();
    let output = keel(home.path())
        .args(["-p", "hello", "--workdir"])
        .arg(work.path())
        .env("ANTHROPIC_API_KEY", "k")
        .output()
        .unwrap();
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("config.toml:2:"), "{stderr}");
    assert!(stderr.contains("nag_threshold"), "{stderr}");
}

#[test]
fn a_bad_flag_is_a_usage_error() {
    let home = tempfile::tempdir().unwrap();
    let output = keel(home.path()).args(["--nag-threshold", "lots"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
}

/// Runs `keel -p` against the fake server in `work`, with `args` added.
fn run_against(
    server: &FakeLlm,
    provider: &str,
    work: &Path,
    home: &Path,
    args: &[&str],
) -> Output {
    let mut command = keel(home);
    command.args(["--output-format", "json", "--workdir"]).arg(work).args(args);
    match provider {
        "anthropic" => command
            .env("ANTHROPIC_API_KEY", "test-key")
            .env("ANTHROPIC_BASE_URL", server.anthropic_base()),
        _ => command.env("OPENAI_API_KEY", "test-key").env("OPENAI_BASE_URL", server.openai_base()),
    };
    output_within(&mut command, "keel -p against the fake server")
}

async fn ten_steps_to_ten_of_ten(provider: &str) {
    let server = FakeLlm::start(llm::ten_step_task(), Duration::ZERO).await;
    let (home, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let output =
        run_against(&server, provider, work.path(), home.path(), &["-p", "Do the ten steps."]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let events = json_lines(&output);
    let result = last_result(&events);
    assert_eq!((result["done"].as_u64(), result["total"].as_u64()), (Some(10), Some(10)));
    assert_eq!(result["text"], "All 10 steps are done.");
    let progress = std::fs::read_to_string(work.path().join("progress.log")).unwrap();
    let expected: Vec<String> = (1..=10).map(|k| format!("step {k}")).collect();
    assert_eq!(progress.lines().collect::<Vec<_>>(), expected);
    assert_eq!(server.bodies().await.len(), 32);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_ten_step_task_reaches_ten_of_ten_over_anthropic() {
    ten_steps_to_ten_of_ten("anthropic").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_ten_step_task_reaches_ten_of_ten_over_openai() {
    ten_steps_to_ten_of_ten("openai").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_prompt_can_come_from_stdin() {
    let server = FakeLlm::start(vec![llm::text("hi")], Duration::ZERO).await;
    let (home, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mut child = keel(home.path())
        .args(["-p", "-", "--workdir"])
        .arg(work.path())
        .env("ANTHROPIC_API_KEY", "k")
        .env("ANTHROPIC_BASE_URL", server.anthropic_base())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(b"a prompt from a pipe\n").unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert_eq!(text(&output.stdout).trim(), "hi");
    let bodies = server.bodies().await;
    assert_eq!(bodies[0]["messages"][0]["content"][0]["text"], "a prompt from a pipe");
}

#[tokio::test(flavor = "multi_thread")]
async fn unauthorized_fails_the_run_and_names_the_variable() {
    let output = bin::p_refused_with_401().await;
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("ANTHROPIC_API_KEY"), "{stderr}");
    assert!(stderr.contains("401"), "{stderr}");
    assert!(text(&output.stdout).is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn killed_mid_task_then_continued_finishes_with_no_step_done_twice() {
    const STEP_DELAY: Duration = Duration::from_millis(120);
    let server = FakeLlm::start(llm::ten_step_task(), STEP_DELAY).await;
    let (home, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mut child = keel(home.path())
        .args(["-p", "Do the ten steps.", "--output-format", "json", "--workdir"])
        .arg(work.path())
        .env("ANTHROPIC_API_KEY", "k")
        .env("ANTHROPIC_BASE_URL", server.anthropic_base())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let progress = work.path().join("progress.log");
    let deadline = Instant::now() + 2 * HANG_GUARD;
    while std::fs::read_to_string(&progress).map_or(0, |text| text.lines().count()) < 4 {
        assert!(Instant::now() < deadline, "the task never got going");
        assert!(child.try_wait().unwrap().is_none(), "keel ended before it was killed");
        std::thread::sleep(POLL);
    }
    child.kill().unwrap(); // SIGKILL: no chance to clean up.
    child.wait().unwrap();
    let done_before = std::fs::read_to_string(&progress).unwrap().lines().count();
    assert!(done_before < 10);

    let output = run_against(&server, "anthropic", work.path(), home.path(), &["-p", "--continue"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let events = json_lines(&output);
    let result = last_result(&events);
    assert_eq!((result["done"].as_u64(), result["total"].as_u64()), (Some(10), Some(10)));
    let expected: Vec<String> = (1..=10).map(|k| format!("step {k}")).collect();
    assert_eq!(std::fs::read_to_string(&progress).unwrap().lines().collect::<Vec<_>>(), expected);

    // The session list shows the finished board.
    let listing =
        keel(home.path()).args(["sessions", "--workdir"]).arg(work.path()).output().unwrap();
    assert!(text(&listing.stdout).contains("10/10"), "{}", text(&listing.stdout));
}

#[test]
fn undo_restores_what_the_last_turn_wrote() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let output = keel(home.path())
        .args(["--demo", "-p", "--demo-pace-ms", "0", "--workdir"])
        .arg(work.path())
        .output()
        .unwrap();
    assert!(output.status.success());
    assert!(work.path().join("greet.sh").exists());
    let output = keel(home.path()).args(["undo", "--workdir"]).arg(work.path()).output().unwrap();
    let stdout = text(&output.stdout);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(stdout.contains("deleted greet.sh"), "{stdout}");
    assert!(!work.path().join("greet.sh").exists(), "files the turn created are removed");
    assert!(!work.path().join("README.md").exists());
    assert!(stdout.contains("deleted test_greet.sh"), "{stdout}");
    assert_eq!(std::fs::read_dir(work.path()).unwrap().count(), 0, "the workspace is as it was");
    let again = keel(home.path()).args(["undo", "--workdir"]).arg(work.path()).output().unwrap();
    assert!(text(&again.stdout).contains("Nothing to undo"));
}

#[tokio::test(flavor = "multi_thread")]
async fn sigterm_interrupts_cleanly_and_the_session_keeps_every_result() {
    use std::io::{BufRead, BufReader};
    let steps = vec![
        llm::tool("bash", serde_json::json!({"command": "sleep 60"})),
        llm::text("unreachable"),
    ];
    let server = FakeLlm::start(steps, Duration::ZERO).await;
    let (home, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mut child = keel(home.path())
        .args(["-p", "go", "--output-format", "json", "--workdir"])
        .arg(work.path())
        .env("ANTHROPIC_API_KEY", "k")
        .env("ANTHROPIC_BASE_URL", server.anthropic_base())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    loop {
        let line = lines.next().expect("keel ended early").unwrap();
        if line.contains("\"tool_start\"") {
            break;
        }
    }
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap()),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    // The command sleeps a minute; keel must kill it rather than wait for it.
    let status = wait_within(&mut child, HANG_GUARD, "keel after SIGTERM");
    let rest: Vec<Value> =
        lines.map(|line| serde_json::from_str(&line.unwrap()).unwrap()).collect();
    assert_eq!(status.code(), Some(1));
    assert_eq!(last_result(&rest)["outcome"], "interrupted");

    // The saved session answers the interrupted call.
    let store = bin::sessions(home.path(), work.path());
    let (_, restored) = store.open(&store.list().unwrap()[0].id).unwrap();
    let last = restored.history.last().unwrap();
    assert!(serde_json::to_string(last).unwrap().contains("interrupted by user"));
}
