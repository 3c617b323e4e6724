//! `keel -p` SIGKILLed at every point of a round, then `keel -p --continue`: the task finishes,
//! no step that completed is done again, a call whose result was logged keeps it, a call cut off
//! is reported to the model as cut off by a crash (never "interrupted by user"), no file is left
//! half written, no command outlives keel — on both protocols.
//!
//! The model is the loopback server in `support::llm`, which is stateless: it plays the step the
//! request's history asks for, and asks again only for calls whose results say they were cut
//! short. Every bash step appends its number to `runs.log` before anything else, so a command
//! run twice shows there; `progress.log` is guarded, as a careful model's command would be.

use crate::support::{bin, llm};
use bin::{HANG_GUARD, POLL, json_lines, keel, last_result, output_within};
use llm::raw::{Hold, RawLlm};
use llm::{Step, board, text, tool};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// What `notes.txt` holds before the task, and what its first step writes over it.
const OLD_NOTES: &str = "old notes\n";
const NEW_NOTES: &str = "step 1 notes\n";
/// The task's board has this many items.
const ITEMS: usize = 3;
/// While this file exists, step 2's command removes it and then sleeps (only the first time).
const HOLD_FILE: &str = "hold";
/// How many times the kill during a write is tried: where it lands inside the write varies.
const WRITE_ATTEMPTS: usize = 3;
/// Each answer's wait, so the answers do not all arrive at once.
const PACE: Duration = Duration::from_millis(10);

/// Where in a round keel is killed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Point {
    /// The model's answer is half streamed.
    Streaming,
    /// A write was asked for and is running (or just done, its result not yet in the history).
    Writing,
    /// The round's first call finished and its result was logged; the second is running.
    ResultLogged,
    /// The round's results are logged and the next request waits for its first byte.
    BetweenRounds,
}

fn bash_step(k: usize, sleep: &str) -> Value {
    let hold = if sleep.is_empty() {
        String::new()
    } else {
        format!("; if [ -e {HOLD_FILE} ]; then rm {HOLD_FILE}; sleep {sleep}; fi")
    };
    json!({"command": format!(
        "echo {k} >> runs.log; grep -qx 'step {k}' progress.log 2>/dev/null || \
         echo 'step {k}' >> progress.log{hold}"
    )})
}

/// Three steps, nine answers. Step 2 is one round of two calls: a write, then a command.
fn task(sleep: &str) -> Vec<Step> {
    vec![
        Step { tools: vec![("todo".into(), board(0, ITEMS))], ..text("Planning.") },
        tool("write_file", json!({"path": "notes.txt", "content": NEW_NOTES})),
        tool("bash", bash_step(1, "")),
        Step {
            tools: vec![
                ("write_file".into(), json!({"path": "step_2.txt", "content": "step 2\n"})),
                ("bash".into(), bash_step(2, sleep)),
            ],
            ..text("")
        },
        tool("todo", board(2, ITEMS)),
        tool("write_file", json!({"path": "step_3.txt", "content": "step 3\n"})),
        tool("bash", bash_step(3, "")),
        tool("todo", board(3, ITEMS)),
        text("All 3 steps are done."),
    ]
}

/// The step (index into [`task`]) whose answer is held back at `point`. During the write, the
/// answer after it is held, so however late the kill lands keel cannot have got further.
fn held_step(point: Point) -> Option<(usize, Hold)> {
    match point {
        Point::Streaming => Some((5, Hold::MidStream)),
        Point::BetweenRounds => Some((4, Hold::BeforeAnswer)),
        Point::Writing => Some((2, Hold::BeforeAnswer)),
        Point::ResultLogged => None,
    }
}

fn provider_env(command: &mut std::process::Command, server: &RawLlm, provider: &str) {
    match provider {
        "anthropic" => {
            command.env("ANTHROPIC_API_KEY", "k").env("ANTHROPIC_BASE_URL", server.anthropic_base())
        }
        _ => command.env("OPENAI_API_KEY", "k").env("OPENAI_BASE_URL", server.openai_base()),
    };
}

/// Starts `keel -p` on the task; its stdout lines arrive on the receiver.
fn start(
    server: &RawLlm,
    provider: &str,
    home: &Path,
    work: &Path,
) -> (Child, mpsc::Receiver<String>) {
    let mut command = keel(home);
    command
        .args(["-p", "Do the three steps.", "--output-format", "json", "--workdir"])
        .arg(work)
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    provider_env(&mut command, server, provider);
    let mut child = command.spawn().unwrap();
    let (lines_tx, lines) = mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if lines_tx.send(line).is_err() {
                return;
            }
        }
    });
    (child, lines)
}

/// Waits for a `tool_start` event whose input mentions `needle`.
fn wait_for_tool_start(lines: &mpsc::Receiver<String>, needle: &str) {
    let deadline = Instant::now() + HANG_GUARD;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let line = lines.recv_timeout(left).expect("keel never started that tool call");
        if line.contains("\"tool_start\"") && line.contains(needle) {
            return;
        }
    }
}

/// The pids of processes whose command line holds `marker` (the command's bash, its `sleep`),
/// or with `only_program`, of those that run that program.
fn processes_with(marker: &str, only_program: Option<&str>) -> Vec<i32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|entry| {
            let pid: i32 = entry.file_name().to_str()?.parse().ok()?;
            let cmdline = std::fs::read(entry.path().join("cmdline")).ok()?;
            let cmdline = String::from_utf8_lossy(&cmdline).into_owned();
            let program = cmdline.split('\0').next().unwrap_or_default().to_owned();
            let runs = only_program.is_none_or(|wanted| program == wanted);
            (runs && cmdline.contains(marker)).then_some(pid)
        })
        .collect()
}

fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + HANG_GUARD;
    while !done() {
        assert!(Instant::now() < deadline, "{what}: not within {HANG_GUARD:?}");
        std::thread::sleep(POLL);
    }
}

fn lines_of(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path).unwrap_or_default().lines().map(str::to_owned).collect()
}

/// Files keel's atomic writer left behind (`.NAME.keel-….tmp`), anywhere in `dir`.
fn leftovers(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|name| name.contains(".keel-") || name == ".keel")
        .collect()
}

/// Every tool call in a request body has exactly one result after it.
fn assert_wire_calls_answered(body: &Value) {
    let messages = body["messages"].as_array().unwrap();
    let mut calls = Vec::new();
    let mut results = Vec::new();
    for message in messages {
        for block in message["content"].as_array().into_iter().flatten() {
            match block["type"].as_str() {
                Some("tool_use") => calls.push(block["id"].as_str().unwrap().to_owned()),
                Some("tool_result") => {
                    results.push(block["tool_use_id"].as_str().unwrap().to_owned())
                }
                _ => {}
            }
        }
        for call in message["tool_calls"].as_array().into_iter().flatten() {
            calls.push(call["id"].as_str().unwrap().to_owned());
        }
        if let Some(id) = message["tool_call_id"].as_str() {
            results.push(id.to_owned());
        }
    }
    for call in &calls {
        let answers = results.iter().filter(|result| *result == call).count();
        assert_eq!(answers, 1, "tool call {call} has {answers} results in a request");
    }
    assert_eq!(calls.len(), results.len(), "a result without its call was sent");
}

/// Kills keel at `point`, continues, and checks that the task finished with nothing lost and
/// no completed step done twice. Returns whether the call running at the kill had its result
/// logged already (for the kill during a write, where that varies).
async fn kill_at_then_continue(provider: &str, point: Point, marker: &str) -> bool {
    let sleep = if point == Point::ResultLogged { marker } else { "" };
    let mut server = RawLlm::start(task(sleep), PACE).await;
    let (home, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    std::fs::write(work.path().join("notes.txt"), OLD_NOTES).unwrap();
    if point == Point::ResultLogged {
        std::fs::write(work.path().join(HOLD_FILE), "").unwrap();
    }
    if let Some((step, how)) = held_step(point) {
        server.hold(step, how);
    }
    let (mut child, lines) = start(&server, provider, home.path(), work.path());
    match point {
        Point::Streaming | Point::BetweenRounds => server.wait_until_holding(HANG_GUARD).await,
        Point::Writing => wait_for_tool_start(&lines, "notes.txt"),
        Point::ResultLogged => {
            wait_for_tool_start(&lines, "echo 2 >> runs.log");
            wait_until("the command to start sleeping", || {
                !processes_with(marker, Some("sleep")).is_empty()
            });
        }
    }
    child.kill().unwrap(); // SIGKILL: no chance to clean up.
    child.wait().unwrap();
    server.cancel_hold();

    // Killed: no file half written, and nothing the command started still running.
    let notes = std::fs::read_to_string(work.path().join("notes.txt")).unwrap();
    assert!(notes == OLD_NOTES || notes == NEW_NOTES, "notes.txt half written: {notes:?}");
    if point == Point::ResultLogged {
        wait_until("the command to die with keel", || processes_with(marker, None).is_empty());
    }
    let store = bin::sessions(home.path(), work.path());
    let id = store.list().unwrap()[0].id.clone();
    let before = store.peek(&id).unwrap();
    let saved = serde_json::to_string(&(&before.history, &before.answered)).unwrap();
    let logged = saved.contains("bytes to notes.txt");
    let requests_before = server.bodies().len();

    let mut command = keel(home.path());
    command.args(["-p", "--continue", "--output-format", "json", "--workdir"]).arg(work.path());
    provider_env(&mut command, &server, provider);
    let output = output_within(&mut command, "keel -p --continue");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{point:?}: {stderr}");
    let events = json_lines(&output);
    let result = last_result(&events);
    assert_eq!(result["text"], "All 3 steps are done.", "{point:?}: {stderr}");
    assert_eq!((result["done"].as_u64(), result["total"].as_u64()), (Some(3), Some(3)));

    // Every step done once; only a command cut off mid-run ran again (it said so in runs.log).
    let expected_progress: Vec<String> = (1..=ITEMS).map(|k| format!("step {k}")).collect();
    assert_eq!(lines_of(&work.path().join("progress.log")), expected_progress, "{point:?}");
    let expected_runs: &[&str] =
        if point == Point::ResultLogged { &["1", "2", "2", "3"] } else { &["1", "2", "3"] };
    assert_eq!(lines_of(&work.path().join("runs.log")), expected_runs, "{point:?}");
    assert_eq!(std::fs::read_to_string(work.path().join("notes.txt")).unwrap(), NEW_NOTES);
    assert_eq!(std::fs::read_to_string(work.path().join("step_2.txt")).unwrap(), "step 2\n");
    assert_eq!(std::fs::read_to_string(work.path().join("step_3.txt")).unwrap(), "step 3\n");
    assert_eq!(leftovers(work.path()), Vec::<String>::new(), "{point:?}");

    // What the model was told after the crash.
    let bodies = server.bodies();
    for body in &bodies {
        assert_wire_calls_answered(body);
        assert!(!body.to_string().contains("interrupted by user"), "{point:?}: {body}");
    }
    let resumed = bodies[requests_before].to_string();
    if point == Point::ResultLogged {
        assert!(resumed.contains("Wrote 7 bytes to step_2.txt"), "the logged result is kept");
        assert!(resumed.contains(keel::agent::journal::CUT_OFF), "the running call is cut off");
    }
    logged
}

/// The cases of one protocol; returns how many were tried.
async fn every_point(provider: &str, marker_base: u32) -> usize {
    let mut tried = 0;
    for (n, point) in
        [Point::Streaming, Point::ResultLogged, Point::BetweenRounds].into_iter().enumerate()
    {
        let marker = format!("{marker_base}{n}.25");
        kill_at_then_continue(provider, point, &marker).await;
        tried += 1;
    }
    for attempt in 0..WRITE_ATTEMPTS {
        let marker = format!("{marker_base}9{attempt}.25");
        let logged = kill_at_then_continue(provider, Point::Writing, &marker).await;
        eprintln!(
            "{provider}: killed during the write, its result {}logged",
            if logged { "" } else { "not " }
        );
        tried += 1;
    }
    tried
}

#[tokio::test(flavor = "multi_thread")]
async fn killed_at_every_point_of_a_round_then_continued_over_anthropic() {
    let tried = every_point("anthropic", 61).await;
    assert_eq!(tried, 3 + WRITE_ATTEMPTS);
}

#[tokio::test(flavor = "multi_thread")]
async fn killed_at_every_point_of_a_round_then_continued_over_openai() {
    let tried = every_point("openai", 62).await;
    assert_eq!(tried, 3 + WRITE_ATTEMPTS);
}
