//! Child agents as `keel -p` prints them — progress lines under each child's id, every JSON
//! event of a child carrying its `agent` id between `agent_start` and `agent_end` — and as the
//! session keeps them: the child's conversation journaled with the session, and a crash in the
//! middle of a child resumed with its `task` call answered as cut off and its item still in
//! progress; a child started after a resume numbered after those the log holds.

use crate::support::bin::{self, HANG_GUARD, POLL, json_lines, keel, last_result, output_within};
use crate::support::llm::family::{ChildScript, FamilyLlm, child};
use crate::support::llm::{Step, text, tool};
use serde_json::{Value, json};
use std::process::Stdio;
use std::time::{Duration, Instant};

fn parent() -> Vec<Step> {
    vec![
        tool("todo", json!({"items": [{"id": "1", "text": "Count files", "status": "pending"}]})),
        tool(
            "task",
            json!({"prompt": "COUNTER: count the files", "item": "1", "description": "Count"}),
        ),
        text("Counted."),
    ]
}

fn counter(delay: Duration) -> ChildScript {
    child("COUNTER", vec![tool("bash", json!({"command": "ls | wc -l"})), text("Report: 0 files.")])
        .slow(delay)
}

fn p(
    server: &FamilyLlm,
    home: &std::path::Path,
    work: &std::path::Path,
    args: &[&str],
) -> std::process::Command {
    let mut command = keel(home);
    command
        .arg("-p")
        .args(args)
        .args(["--approval", "auto", "--sandbox", "off", "--workdir"])
        .arg(work)
        .env("ANTHROPIC_API_KEY", "k")
        .env("ANTHROPIC_BASE_URL", server.anthropic_base());
    command
}

#[tokio::test]
async fn every_json_event_of_a_child_carries_its_agent_id() {
    let server = FamilyLlm::start(parent(), vec![counter(Duration::ZERO)]).await;
    let (home, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let output = output_within(
        &mut p(&server, home.path(), work.path(), &["Count.", "--output-format", "json"]),
        "keel -p",
    );
    assert!(output.status.success(), "{}", bin::text(&output.stderr));
    let events = json_lines(&output);
    let start = events.iter().position(|event| event["type"] == "agent_start").unwrap();
    let end = events.iter().position(|event| event["type"] == "agent_end").unwrap();
    assert_eq!(
        (
            &events[start]["agent"],
            &events[start]["kind"],
            &events[start]["item"],
            &events[start]["label"]
        ),
        (&json!("a1"), &json!("general"), &json!("1"), &json!("Count"))
    );
    assert_eq!((&events[end]["agent"], &events[end]["status"]), (&json!("a1"), &json!("done")));
    let own: Vec<&Value> = events[start + 1..end].iter().collect();
    let kinds: Vec<&str> = own.iter().filter_map(|event| event["type"].as_str()).collect();
    for kind in ["prompt", "tool_start", "tool_end", "usage", "assistant_text", "result"] {
        assert!(kinds.contains(&kind), "{kind} missing from {kinds:?}");
    }
    for event in &own {
        assert_eq!(event["agent"], "a1", "{event}");
    }
    for event in events[..start].iter().chain(&events[end + 1..]) {
        if event["type"] != "agent_end" {
            assert!(event.get("agent").is_none() || event["type"] == "agent_start", "{event}");
        }
    }
    let result = last_result(&events);
    assert_eq!((result["done"].as_u64(), result["total"].as_u64()), (Some(1), Some(1)));
}

#[tokio::test]
async fn text_progress_shows_a_childs_lines_under_its_id() {
    let server = FamilyLlm::start(parent(), vec![counter(Duration::ZERO)]).await;
    let (home, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let output = output_within(&mut p(&server, home.path(), work.path(), &["Count."]), "keel -p");
    let err = bin::text(&output.stderr);
    assert!(output.status.success(), "{err}");
    let lines: Vec<&str> = err.lines().collect();
    let at = |needle: &str| {
        lines
            .iter()
            .position(|line| line.starts_with(needle))
            .unwrap_or_else(|| panic!("{needle}: {err}"))
    };
    let started = at("▸ a1 item #1: Count");
    let command = at("  a1│ → bash: ls | wc -l");
    let answer = at("  a1│ Report: 0 files.");
    let ended = at("◂ a1 done (2 model responses");
    assert!(started < command && command < answer && answer < ended, "{err}");
    assert!(err.contains("(and 2 by child agents)"), "{err}");
    assert_eq!(bin::text(&output.stdout), "Counted.\n");
}

#[tokio::test]
async fn a_crash_during_a_child_resumes_with_its_call_cut_off_and_its_item_in_progress() {
    let slow = FamilyLlm::start(parent(), vec![counter(Duration::from_secs(60))]).await;
    let (home, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mut running = p(&slow, home.path(), work.path(), &["Count.", "--output-format", "json"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + HANG_GUARD;
    while slow.child("COUNTER").is_empty() {
        assert!(Instant::now() < deadline, "the child never asked its model");
        std::thread::sleep(POLL);
    }
    std::thread::sleep(Duration::from_millis(300));
    running.kill().unwrap(); // SIGKILL: no chance to clean up.
    running.wait().unwrap();

    let store = bin::sessions(home.path(), work.path());
    let id = store.list().unwrap()[0].id.clone();
    let restored = store.peek(&id).unwrap();
    assert_eq!(restored.board.items()[0].status, keel::board::Status::InProgress);
    let log = std::fs::read_to_string(store.sessions_dir().join(format!("{id}.jsonl"))).unwrap();
    let child_records: Vec<Value> = log
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|record| record["type"] == "agent" && record["agent"] == "a1")
        .collect();
    assert!(
        child_records.iter().any(|record| record["record"]["type"] == "message"),
        "the child's conversation is journaled with the session: {log}"
    );

    let fast = FamilyLlm::start(parent(), vec![counter(Duration::ZERO)]).await;
    let output = output_within(
        &mut p(&fast, home.path(), work.path(), &["--continue", "--output-format", "json"]),
        "keel -p --continue",
    );
    assert!(output.status.success(), "{}", bin::text(&output.stderr));
    let resumed = fast.parent()[0].to_string();
    assert!(resumed.contains(keel::agent::journal::CUT_OFF), "the task call is cut off: {resumed}");
    let events = json_lines(&output);
    let result = last_result(&events);
    assert_eq!((result["done"].as_u64(), result["total"].as_u64()), (Some(1), Some(1)));
    assert_eq!(result["text"], "Counted.");
}

#[tokio::test]
async fn a_child_started_after_a_resume_takes_an_id_of_its_own() {
    let mut steps = parent();
    steps.push(tool("task", json!({"prompt": "COUNTER: count them again", "kind": "explore"})));
    steps.push(text("Counted again."));
    let server = FamilyLlm::start(steps, vec![counter(Duration::ZERO)]).await;
    let (home, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let first = output_within(&mut p(&server, home.path(), work.path(), &["Count."]), "keel -p");
    assert!(first.status.success(), "{}", bin::text(&first.stderr));

    let args = ["--continue", "Count again.", "--output-format", "json"];
    let output = output_within(&mut p(&server, home.path(), work.path(), &args), "keel -p");
    assert!(output.status.success(), "{}", bin::text(&output.stderr));
    let events = json_lines(&output);
    let started: Vec<&Value> =
        events.iter().filter(|event| event["type"] == "agent_start").map(|e| &e["agent"]).collect();
    assert_eq!(started, [&json!("a2")], "a1 is the first run's child");
    assert_eq!(last_result(&events)["text"], "Counted again.");

    // Each child's records stay its own in the session's log.
    let store = bin::sessions(home.path(), work.path());
    let id = store.list().unwrap()[0].id.clone();
    let log = std::fs::read_to_string(store.sessions_dir().join(format!("{id}.jsonl"))).unwrap();
    let prompts: Vec<String> = log
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|record| record["type"] == "agent" && record["record"]["type"] == "message")
        .filter(|record| record["record"]["message"]["role"] == "user")
        .map(|record| format!("{} {}", record["agent"], record["record"]["message"]))
        .filter(|line| line.contains("COUNTER"))
        .collect();
    assert_eq!(prompts.len(), 2, "{prompts:?}");
    assert!(prompts[0].starts_with("\"a1\"") && prompts[0].contains("count the files"));
    assert!(prompts[1].starts_with("\"a2\"") && prompts[1].contains("count them again"));
}
