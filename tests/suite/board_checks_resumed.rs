//! Checks across a crash and a resume, through `keel -p` against the loopback server: keel
//! SIGKILLed while an item's check runs leaves the item as it was — not completed, the board
//! otherwise unchanged — in the log and after `--continue`, as an interrupt (SIGTERM) does; and a
//! check that passed stays passed in the resumed session, its record kept and its item marked,
//! without running again.

use crate::support::bin::{self, HANG_GUARD, POLL, json_lines, keel, last_result, output_within};
use crate::support::llm::{FakeLlm, Step, text, tool};
use crate::support::processes::processes_with;
use keel::board::{BoardItem, Status};
use nix::sys::signal::Signal;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// While this file exists, the check removes it and sleeps (only the first time).
const HOLD_FILE: &str = "hold";

/// The check of item 1: sleeps the first time (the sleep's length marks its process), then
/// passes only once `out.txt` exists — which it never does here.
fn sleepy_check(marker: &str) -> String {
    format!("if [ -e {HOLD_FILE} ]; then rm {HOLD_FILE}; sleep {marker}; fi; test -e out.txt")
}

fn board_with(check: &str) -> Step {
    tool(
        "todo",
        json!({"items": [
            {"id": "1", "text": "Write out.txt", "status": "in_progress", "check": check},
            {"id": "2", "text": "Report", "status": "pending"}
        ]}),
    )
}

fn complete(id: &str) -> Step {
    tool("todo", json!({"update": [{"id": id, "status": "completed"}]}))
}

/// `keel` in `work` against `server` over Anthropic's wire, or the OpenAI-compatible one.
fn keel_against(server: &FakeLlm, openai: bool, home: &Path, work: &Path) -> Command {
    let mut command = keel(home);
    command.args(["--output-format", "json", "--workdir"]).arg(work);
    if openai {
        command.env("OPENAI_API_KEY", "k").env("OPENAI_BASE_URL", server.openai_base());
    } else {
        command.env("ANTHROPIC_API_KEY", "k").env("ANTHROPIC_BASE_URL", server.anthropic_base());
    }
    command
}

/// The board and the checks' records the session's log holds now.
fn saved(home: &Path, work: &Path) -> keel::agent::journal::Restored {
    let store = bin::sessions(home, work);
    let id = store.list().unwrap()[0].id.clone();
    store.peek(&id).unwrap()
}

fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + HANG_GUARD;
    while !done() {
        assert!(Instant::now() < deadline, "{what}: not within {HANG_GUARD:?}");
        std::thread::sleep(POLL);
    }
}

/// Starts `keel -p go`, waits for its item's check to start and to be sleeping, and sends keel
/// `signal`; returns how keel ended and the JSON events it printed.
fn signal_during_the_check(
    command: &mut Command,
    work: &Path,
    marker: &str,
    signal: Signal,
) -> (std::process::ExitStatus, Vec<Value>) {
    command.args(["-p", "go"]).stdout(Stdio::piped()).stderr(Stdio::null());
    let mut child = command.spawn().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (lines_tx, lines) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if lines_tx.send(line).is_err() {
                return;
            }
        }
    });
    let mut events = Vec::new();
    let deadline = Instant::now() + HANG_GUARD;
    while !events.iter().any(|event: &Value| event["type"] == "check_start") {
        let left = deadline.saturating_duration_since(Instant::now());
        let line = lines.recv_timeout(left).expect("keel never started the check");
        events.push(serde_json::from_str(&line).unwrap_or_else(|_| panic!("not JSON: {line}")));
    }
    wait_until("the check to sleep", || {
        !work.join(HOLD_FILE).exists() && !processes_with(&format!("sleep {marker}")).is_empty()
    });
    let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap());
    nix::sys::signal::kill(pid, signal).unwrap();
    let status = bin::wait_within(&mut child, HANG_GUARD, "keel after the signal");
    // The reader ends with keel's stdout: every line keel printed is in by then.
    events.extend(lines.iter().map(|line| serde_json::from_str::<Value>(&line).unwrap()));
    (status, events)
}

/// A run of the sleepy check's claim that was sent a signal while the check slept.
struct Signalled {
    server: FakeLlm,
    home: tempfile::TempDir,
    work: tempfile::TempDir,
    check: String,
    status: std::process::ExitStatus,
    events: Vec<Value>,
}

/// Claims item 1, whose check sleeps marked by `marker`, over either wire, and sends keel `signal`
/// while the check sleeps.
async fn signalled(openai: bool, marker: &str, signal: Signal) -> Signalled {
    let check = sleepy_check(marker);
    let script = vec![board_with(&check), complete("1"), text("Done.")];
    let server = FakeLlm::start(script, Duration::ZERO).await;
    let (home, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    std::fs::write(work.path().join(HOLD_FILE), "").unwrap();
    let mut command = keel_against(&server, openai, home.path(), work.path());
    let (status, events) = signal_during_the_check(&mut command, work.path(), marker, signal);
    Signalled { server, home, work, check, status, events }
}

#[tokio::test(flavor = "multi_thread")]
async fn killed_while_a_check_runs_the_item_stays_as_it_was_and_after_continue() {
    for (openai, marker) in [(false, "60.7341"), (true, "60.7342")] {
        // SIGKILL: no chance to clean up.
        let Signalled { server, home, work, check, .. } =
            signalled(openai, marker, Signal::SIGKILL).await;
        wait_until("the check to die with keel", || {
            processes_with(&format!("sleep {marker}")).is_empty()
        });

        // The log: the board as the whole list left it, and no check recorded as passed.
        let before = saved(home.path(), work.path());
        let items: Vec<BoardItem> = before.board.items().to_vec();
        let statuses: Vec<Status> = items.iter().map(|item| item.status).collect();
        assert_eq!(statuses, [Status::InProgress, Status::Pending], "{items:?}");
        assert_eq!(items[0].check.as_deref(), Some(check.as_str()));
        assert!(!items[0].check_passed, "{items:?}");
        assert!(
            before.checks.get("1").is_none_or(|record| !record.passed()),
            "{:?}",
            before.checks
        );

        // Continued: the model asks again for the call the crash cut off; the check runs again,
        // quickly now, and still fails: the item stays open, the board as it was.
        let mut command = keel_against(&server, openai, home.path(), work.path());
        command.args(["-p", "--continue"]);
        let output = output_within(&mut command, "keel -p --continue");
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        let events = json_lines(&output);
        let result = last_result(&events);
        assert_eq!((result["done"].as_u64(), result["total"].as_u64()), (Some(0), Some(2)));
        let ends: Vec<&Value> =
            events.iter().filter(|event| event["type"] == "check_end").collect();
        assert_eq!(ends.len(), 1, "{events:?}");
        assert_eq!((&ends[0]["passed"], &ends[0]["exit_code"]), (&json!(false), &json!(1)));
        let after = saved(home.path(), work.path());
        assert_eq!(after.board.items(), items.as_slice(), "the board changed");
        let sent = server.bodies().await;
        let resumed = sent.last().map(Value::to_string).unwrap_or_default();
        assert!(resumed.contains("Item 1: its check failed (exit 1)"), "{resumed}");
        let told: String = sent.iter().map(Value::to_string).collect();
        assert!(told.contains("the keel process stopped while this ran"), "{told}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_passed_check_stays_passed_in_the_resumed_session() {
    const CHECK: &str = "test -e out.txt";
    let script = vec![
        board_with(CHECK),
        complete("1"),
        text("The first step is done."),
        complete("2"),
        text("All done."),
    ];
    let server = FakeLlm::start(script, Duration::ZERO).await;
    let (home, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    std::fs::write(work.path().join("out.txt"), "hello\n").unwrap();
    let mut first = keel_against(&server, false, home.path(), work.path());
    first.args(["-p", "go"]);
    let output = output_within(&mut first, "keel -p");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let passed = |restored: &keel::agent::journal::Restored| {
        let record =
            restored.checks.get("1").map(|record| (record.command.clone(), record.passed()));
        let item = restored.board.items().first().map(|item| item.check_passed);
        (record, item)
    };
    let expected = (Some((CHECK.to_owned(), true)), Some(true));
    assert_eq!(passed(&saved(home.path(), work.path())), expected);

    let mut again = keel_against(&server, false, home.path(), work.path());
    again.args(["-p", "Go on.", "--continue"]);
    let output = output_within(&mut again, "keel -p --continue");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let events = json_lines(&output);
    assert!(!events.iter().any(|event| event["type"] == "check_start"), "ran again: {events:?}");
    let result = last_result(&events);
    assert_eq!((result["done"].as_u64(), result["total"].as_u64()), (Some(2), Some(2)));
    // The board the model read after the resume still marks the check passed.
    let sent = server.bodies().await;
    let board = sent.last().map(Value::to_string).unwrap_or_default();
    assert!(board.contains("[x] #1: Write out.txt  (check passed)"), "{board}");
    assert_eq!(passed(&saved(home.path(), work.path())), expected);
}

#[tokio::test(flavor = "multi_thread")]
async fn interrupted_while_a_check_runs_the_item_stays_as_it_was() {
    const MARKER: &str = "60.7343";
    let Signalled { home, work, status, events, .. } =
        signalled(false, MARKER, Signal::SIGTERM).await;
    // The check is stopped with the turn, and the item is not taken.
    assert_eq!(status.code(), Some(1), "{events:?}");
    // Its sleep would last past the wait: it is gone only if it was stopped.
    wait_until("the check to stop", || processes_with(&format!("sleep {MARKER}")).is_empty());
    let result = last_result(&events);
    assert_eq!(result["outcome"], "interrupted", "{result}");
    assert_eq!((result["done"].as_u64(), result["total"].as_u64()), (Some(0), Some(2)));
    let ends: Vec<&Value> = events.iter().filter(|event| event["type"] == "check_end").collect();
    assert_eq!(ends.len(), 1, "{events:?}");
    assert_eq!(ends[0]["passed"], false, "{}", ends[0]);
    assert!(ends[0]["exit_code"].is_null(), "stopped, it did not exit: {}", ends[0]);
    let saved = saved(home.path(), work.path());
    let statuses: Vec<Status> = saved.board.items().iter().map(|item| item.status).collect();
    assert_eq!(statuses, [Status::InProgress, Status::Pending]);
    assert!(!saved.board.items()[0].check_passed);
}
