//! Verified items on the wire: an item's check runs before keel takes its completion, through
//! `keel -p` against a loopback server speaking each protocol. A claim before the work is
//! refused with the check's exit and output, the board as it was; the honest claim passes. Each
//! check prints its line and its JSON events; the plan `-p --plan` prints shows each item's check,
//! and plan mode completes no item that has one.

use super::hooks::{one, save_stdin};
use crate::support::{bin, llm};
use bin::{json_lines, keel, output_within};
use llm::{FakeLlm, Step, text, tool};
use serde_json::{Value, json};
use std::path::Path;
use std::process::Output;
use std::time::Duration;

/// Runs `keel -p go` in `work` against `server` over `protocol`'s endpoint.
fn run(server: &FakeLlm, work: &Path, openai: bool, args: &[&str]) -> Output {
    run_in(tempfile::tempdir().unwrap().path(), server, work, openai, args)
}

/// [`run`], with `home` as the person's home.
fn run_in(home: &Path, server: &FakeLlm, work: &Path, openai: bool, args: &[&str]) -> Output {
    let mut command = keel(home);
    command.args(["-p", "go", "--workdir"]).arg(work).args(args);
    if openai {
        command.env("OPENAI_API_KEY", "k").env("OPENAI_BASE_URL", server.openai_base());
    } else {
        command.env("ANTHROPIC_API_KEY", "k").env("ANTHROPIC_BASE_URL", server.anthropic_base());
    }
    output_within(&mut command, "keel -p")
}

/// Every tool result the model read, in order, with whether it was an error, over either wire.
fn results(bodies: &[Value]) -> Vec<(String, bool)> {
    let last = bodies.last().cloned().unwrap_or_default();
    let messages = last["messages"].as_array().cloned().unwrap_or_default();
    let mut out = Vec::new();
    for message in messages {
        if message["role"] == "tool" {
            let content = message["content"].as_str().unwrap_or_default().to_owned();
            let error = content.starts_with("Error:");
            out.push((content, error));
        }
        for block in message["content"].as_array().into_iter().flatten() {
            if block["type"] == "tool_result" {
                let content = block["content"].as_str().unwrap_or_default().to_owned();
                out.push((content, block["is_error"] == true));
            }
        }
    }
    out
}

/// The whole list of two items: `first`, in progress with `check`, and `second`, pending.
fn checked_board(first: &str, check: &str, second: &str) -> Step {
    tool(
        "todo",
        json!({"items": [
            {"id": "1", "text": first, "status": "in_progress", "check": check},
            {"id": "2", "text": second, "status": "pending"}
        ]}),
    )
}

/// The check of the lazy model's item: it fails (exit 2) until the file is written.
const LAZY_CHECK: &str = "grep -q hello out.txt";

fn lazy_script() -> Vec<Step> {
    vec![
        checked_board("Write out.txt", LAZY_CHECK, "Report"),
        tool("todo", json!({"update": [{"id": "1", "status": "completed"}]})),
        tool("write_file", json!({"path": "out.txt", "content": "hello\n"})),
        tool("todo", json!({"update": [{"id": "1", "status": "completed"}]})),
        text("Done."),
    ]
}

/// `keel -p` with `args` in a fresh workspace, against the lazy model over either wire; it
/// must succeed.
async fn lazy_run(openai: bool, args: &[&str]) -> Output {
    let server = FakeLlm::start(lazy_script(), Duration::ZERO).await;
    let work = tempfile::tempdir().unwrap();
    let output = run(&server, work.path(), openai, args);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    output
}

#[tokio::test(flavor = "multi_thread")]
async fn a_claim_before_the_work_is_refused_and_the_honest_one_passes_on_both_wires() {
    for openai in [false, true] {
        let server = FakeLlm::start(lazy_script(), Duration::ZERO).await;
        let work = tempfile::tempdir().unwrap();
        let output = run(&server, work.path(), openai, &["--output-format", "json"]);
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        let results = results(&server.bodies().await);
        let (early, refused) = &results[1];
        assert!(*refused, "{results:?}");
        assert!(
            early.contains("Item 1: its check failed (exit 2): grep -q hello out.txt"),
            "{early}"
        );
        let (honest, failed) = &results[3];
        assert!(!failed, "{results:?}");
        assert!(honest.contains("[x] #1: Write out.txt  (check passed)"), "{honest}");
        assert!(honest.contains("(1/2 completed)"), "{honest}");
        let events = json_lines(&output);
        let ends: Vec<&Value> =
            events.iter().filter(|event| event["type"] == "check_end").collect();
        assert_eq!(ends.len(), 2, "{events:?}");
        assert_eq!(
            (ends[0]["passed"].clone(), ends[0]["exit_code"].clone()),
            (json!(false), json!(2))
        );
        assert_eq!(
            (ends[1]["passed"].clone(), ends[1]["exit_code"].clone()),
            (json!(true), json!(0))
        );
        assert_eq!(ends[1]["item"], "1");
        assert_eq!(events.iter().filter(|event| event["type"] == "check_start").count(), 2);
    }
}

/// Whether `line` is `✓ check #ID COMMAND · S.Ts` (`NNms` below a second), or with `exit`
/// `✗ check #ID COMMAND · EXIT · S.Ts`: the shape of `-p`'s line for a check, whatever the time
/// it took.
fn is_check_line(line: &str, id: &str, command: &str, exit: Option<&str>) -> bool {
    let head = match exit {
        None => format!("✓ check #{id} {command} · "),
        Some(exit) => format!("✗ check #{id} {command} · {exit} · "),
    };
    let digits = |text: &str| !text.is_empty() && text.chars().all(|c| c.is_ascii_digit());
    let Some(took) = line.strip_prefix(&head) else { return false };
    if took.strip_suffix("ms").is_some_and(digits) {
        return true;
    }
    took.strip_suffix('s').is_some_and(|took| {
        took.split_once('.')
            .is_some_and(|(whole, tenth)| digits(whole) && digits(tenth) && tenth.len() == 1)
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn print_says_each_check_on_a_line_of_its_own_on_both_wires() {
    for openai in [false, true] {
        let output = lazy_run(openai, &[]).await;
        let stderr = String::from_utf8_lossy(&output.stderr);
        let checks: Vec<&str> = stderr.lines().filter(|line| line.contains("check #")).collect();
        assert_eq!(checks.len(), 2, "one line per check: {stderr}");
        assert!(is_check_line(checks[0], "1", LAZY_CHECK, Some("exit 2")), "{stderr}");
        assert!(is_check_line(checks[1], "1", LAZY_CHECK, None), "{stderr}");
        // The failure comes before the write, the pass after it.
        let write = stderr.find("→ write_file").unwrap_or_else(|| panic!("{stderr}"));
        assert!(stderr.find(checks[0]) < Some(write), "{stderr}");
        assert!(stderr.rfind(checks[1]) > Some(write), "{stderr}");
        assert!(String::from_utf8_lossy(&output.stdout).contains("Done."));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_json_check_events_carry_the_item_command_exit_time_and_output_on_both_wires() {
    for openai in [false, true] {
        let output = lazy_run(openai, &["--output-format", "json"]).await;
        let events = json_lines(&output);
        let checks: Vec<&Value> = events
            .iter()
            .filter(|event| event["type"] == "check_start" || event["type"] == "check_end")
            .collect();
        let kinds: Vec<&str> = checks.iter().filter_map(|event| event["type"].as_str()).collect();
        assert_eq!(kinds, ["check_start", "check_end", "check_start", "check_end"]);
        for start in [checks[0], checks[2]] {
            assert_eq!(start, &json!({"type": "check_start", "item": "1", "command": LAZY_CHECK}));
        }
        let (failed, passed) = (checks[1], checks[3]);
        for (end, ok, code, exit, failures) in
            [(failed, false, 2, "exit 2", 1), (passed, true, 0, "exit 0", 0)]
        {
            assert_eq!(end["item"], "1", "{end}");
            assert_eq!(end["command"], LAZY_CHECK, "{end}");
            assert_eq!(end["passed"], ok, "{end}");
            assert_eq!(end["exit_code"], code, "{end}");
            assert_eq!(end["exit"], exit, "{end}");
            assert_eq!(end["failures_in_row"], failures, "{end}");
            assert!(end["duration_ms"].is_u64(), "{end}");
        }
        // What grep said of the missing file is the failure's output; the pass printed nothing.
        let said = failed["output"].as_str().unwrap_or_default();
        assert!(said.contains("out.txt") && said.contains("No such file"), "{failed}");
        assert_eq!(passed["output"], "(no output)", "{passed}");
        // The first check ends before the write's call starts, the second after it ended.
        let at = |wanted: &Value| events.iter().position(|event| event == wanted);
        let write = events
            .iter()
            .position(|event| event["type"] == "tool_start" && event["name"] == "write_file");
        assert!(at(failed) < write && write < at(passed), "{events:?}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn print_plan_shows_each_items_check_and_completes_none_with_a_check() {
    let steps = vec![
        checked_board("Fix the parser", "cargo test -q parser", "Update the notes"),
        tool("todo", json!({"update": [{"id": "1", "status": "completed"}]})),
        text("Here is the plan."),
    ];
    for openai in [false, true] {
        let server = FakeLlm::start(steps.clone(), Duration::ZERO).await;
        let work = tempfile::tempdir().unwrap();
        let output = run(&server, work.path(), openai, &["--plan"]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(0), "{stderr}");
        assert_eq!(
            String::from_utf8_lossy(&output.stdout),
            "[>] #1: Fix the parser  (check)\n      check: cargo test -q parser\n\
             [ ] #2: Update the notes\n\n(0/2 completed)\n"
        );
        let results = results(&server.bodies().await);
        let (claim, refused) = &results[1];
        assert!(*refused, "{results:?}");
        assert!(
            claim.contains(
                "Item 1: cannot be completed: its check (cargo test -q parser) does not run in \
                 plan mode"
            ),
            "{claim}"
        );
        assert!(!stderr.contains("check #"), "no check ran: {stderr}");
        // In JSON the plan is the last todo event: its items carry their checks.
        let output = run(&server, work.path(), openai, &["--plan", "--output-format", "json"]);
        let events = json_lines(&output);
        let [.., plan, _] = events.as_slice() else { panic!("too few events: {events:?}") };
        assert_eq!(plan["type"], "todo", "{events:?}");
        assert_eq!(plan["items"][0]["check"], "cargo test -q parser", "{plan}");
        assert!(plan["items"][1].get("check").is_none(), "{plan}");
        assert!(!events.iter().any(|event| event["type"] == "check_start"), "{events:?}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_task_completed_hook_reads_the_check_that_passed_on_both_wires() {
    const CHECK: &str = "test -e out.txt";
    let steps = vec![
        checked_board("Write out.txt", CHECK, "Report"),
        tool(
            "todo",
            json!({"update": [{"id": "1", "status": "completed"}, {"id": "2", "status": "completed"}]}),
        ),
        text("Done."),
    ];
    for openai in [false, true] {
        let server = FakeLlm::start(steps.clone(), Duration::ZERO).await;
        let (home, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        std::fs::write(work.path().join("out.txt"), "hello\n").unwrap();
        let seen = work.path().join("seen.jsonl");
        let config = home.path().join(".config/keel/config.toml");
        std::fs::create_dir_all(config.parent().unwrap()).unwrap();
        std::fs::write(&config, one("TaskCompleted", None, &save_stdin(&seen), None)).unwrap();
        let output = run_in(home.path(), &server, work.path(), openai, &[]);
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        let inputs: Vec<Value> = std::fs::read_to_string(&seen)
            .unwrap_or_default()
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect();
        let by_item = |id: &str| inputs.iter().find(|input| input["task_id"] == id).cloned();
        let (checked, plain) = (by_item("1"), by_item("2"));
        let check = checked.map(|input| input["check"].clone()).unwrap_or_default();
        assert_eq!(check["command"], CHECK, "{inputs:?}");
        assert_eq!((&check["passed"], &check["exit_code"]), (&json!(true), &json!(0)), "{check}");
        assert!(check["duration_ms"].is_u64() && check["output"].is_string(), "{check}");
        let plain = plain.unwrap_or_else(|| panic!("no hook for #2: {inputs:?}"));
        assert!(plain.get("check").is_none(), "an item without a check: {plain}");
    }
}
