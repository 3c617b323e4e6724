//! Plan mode end to end against the loopback server: the model may read (`read_file`, commands
//! in the read-only sandbox) and change nothing; `keel -p --plan` prints the planned board and
//! exits 0 with the workspace untouched; in the TUI's agent the person edits the plan, approves
//! it, and the approved board drives the work.

use crate::support::{agent, bin, llm};
use agent::{WAIT, Wire, edit, start, until_result, wait_for};
use bin::{json_lines, keel, output_within};
use keel::agent::{AgentConfig, ApprovalMode, Command, Sessions};
use llm::{FakeLlm, Step, text, tool};
use serde_json::{Value, json};
use std::path::Path;
use std::process::Output;
use std::time::Duration;

const NOTES: &str = "the notes, as they were\n";

fn plan() -> Value {
    json!({"items": [
        {"id": "1", "text": "Edit notes.txt", "status": "pending"},
        {"id": "2", "text": "Check the result", "status": "pending", "blocked_by": ["1"]},
    ]})
}

/// A model that tries everything before it plans.
fn tries_everything() -> Vec<Step> {
    let bash = |command: &str| tool("bash", json!({ "command": command }));
    vec![
        tool("read_file", json!({"path": "notes.txt"})),
        bash("ls && cat notes.txt | wc -l"),
        bash("echo hacked > notes.txt"),
        tool("write_file", json!({"path": "new.txt", "content": "x"})),
        tool("edit_file", json!({"path": "notes.txt", "old_text": "notes", "new_text": "NOTES"})),
        bash("rm notes.txt"),
        bash("cat notes.txt | tee copy.txt"),
        bash("find . -name '*.txt' -delete"),
        tool("todo", plan()),
        text("Here is the plan."),
    ]
}

fn workspace() -> tempfile::TempDir {
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("notes.txt"), NOTES).unwrap();
    work
}

fn run_plan(server: &FakeLlm, work: &Path, args: &[&str]) -> Output {
    let home = tempfile::tempdir().unwrap();
    let mut command = keel(home.path());
    command
        .args(["-p", "make a plan", "--plan", "--workdir"])
        .arg(work)
        .args(args)
        .env("ANTHROPIC_API_KEY", "k")
        .env("ANTHROPIC_BASE_URL", server.anthropic_base());
    output_within(&mut command, "keel -p --plan")
}

/// Every file in `dir` but keel's own folder, with its content.
fn files(dir: &Path) -> Vec<(String, String)> {
    let mut files: Vec<(String, String)> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter(|entry| entry.file_name() != ".keel")
        .map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            (name, std::fs::read_to_string(entry.path()).unwrap_or_default())
        })
        .collect();
    files.sort();
    files
}

fn tool_results(bodies: &[Value]) -> Vec<String> {
    bodies
        .iter()
        .filter_map(|body| body["messages"].as_array()?.last().cloned())
        .flat_map(|message| message["content"].as_array().cloned().unwrap_or_default())
        .filter(|block| block["type"] == "tool_result")
        .map(|block| block["content"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn print_plan_reads_refuses_every_change_prints_the_board_and_exits_0() {
    let server = FakeLlm::start(tries_everything(), Duration::ZERO).await;
    let work = workspace();
    let output = run_plan(&server, work.path(), &[]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "[ ] #1: Edit notes.txt\n[ ] #2: Check the result  (blocked by #1)\n\n(0/2 completed)\n"
    );
    assert!(stderr.contains("Here is the plan."), "the model's words go to stderr: {stderr}");
    assert_eq!(stderr.matches("Here is the plan.").count(), 1, "said once: {stderr}");
    assert_eq!(files(work.path()), [("notes.txt".to_owned(), NOTES.to_owned())], "nothing changed");

    let bodies = server.bodies().await;
    let first = bodies[0]["messages"][0]["content"].to_string();
    assert!(first.contains("<plan-mode>Plan mode: read what you need"), "{first}");
    let results = tool_results(&bodies);
    assert!(results[0].contains("the notes, as they were"), "read_file runs: {}", results[0]);
    assert!(results[1].contains("notes.txt"), "a read-only command runs: {}", results[1]);
    for (index, why) in [(3, "`write_file` is not allowed"), (4, "`edit_file` is not allowed")] {
        assert!(results[index].starts_with("Plan mode:"), "{}", results[index]);
        assert!(results[index].contains(why), "{}", results[index]);
    }
    // Commands run, in the read-only sandbox: each write fails.
    for index in [2, 5, 6, 7] {
        assert!(results[index].contains("Read-only file system"), "{}", results[index]);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn print_plan_in_json_ends_with_the_plan_as_a_todo_event() {
    let server = FakeLlm::start(tries_everything(), Duration::ZERO).await;
    let work = workspace();
    let output = run_plan(&server, work.path(), &["--output-format", "json"]);
    assert_eq!(output.status.code(), Some(0));
    let events = json_lines(&output);
    let [.., plan_event, result] = events.as_slice() else { panic!("too few events") };
    assert_eq!(result["type"], "result");
    assert_eq!(result["outcome"], "success");
    assert_eq!(plan_event["type"], "todo");
    assert_eq!(plan_event["total"], 2);
    assert_eq!(plan_event["items"][1]["blocked_by"], json!(["1"]));
    assert_eq!(files(work.path()), [("notes.txt".to_owned(), NOTES.to_owned())]);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_person_edits_and_approves_the_plan_and_the_approved_board_drives_the_work() {
    let script = vec![
        tool("todo", plan()),
        text("Here is the plan."),
        // After the approval: the change plan mode refused is allowed now.
        tool("write_file", json!({"path": "notes.txt", "content": "edited\n"})),
        text("Done."),
    ];
    let server = FakeLlm::start(script, Duration::ZERO).await;
    let work = workspace();
    let config = AgentConfig { plan: true, ..AgentConfig::default() };
    let mut handle = start(&server, Wire::Anthropic, work.path(), config, Sessions::Off);
    let mut seen = 0;
    handle.commands.send(Command::Submit("make a plan".into())).unwrap();
    until_result(&mut handle).await;
    // The plan waits for the person.
    wait_for(&mut handle, |snapshot| snapshot.plan_mode && snapshot.plan_ready).await;

    edit(&mut handle, &mut seen, "add Tell the person").await;
    handle.commands.send(Command::ApprovePlan).unwrap();
    until_result(&mut handle).await;
    let working = wait_for(&mut handle, |snapshot| !snapshot.plan_mode).await;
    assert!(!working.plan_ready, "approval ends plan mode");
    assert_eq!(working.board.total(), 3);
    assert_eq!(std::fs::read_to_string(work.path().join("notes.txt")).unwrap(), "edited\n");

    let bodies = server.bodies().await;
    let approval = bodies[2]["messages"].as_array().unwrap().last().unwrap().to_string();
    assert!(approval.contains("The plan is approved. Carry it out step by step"), "{approval}");
    assert!(approval.contains("[ ] #3: Tell the person"), "the board as edited: {approval}");
    assert!(!approval.contains("<plan-mode>"), "no longer in plan mode");
}

#[tokio::test(flavor = "multi_thread")]
async fn plan_mode_still_asks_before_a_read_only_command_in_ask_mode() {
    let script = vec![tool("bash", json!({"command": "ls"})), tool("todo", plan()), text("Plan.")];
    let server = FakeLlm::start(script, Duration::ZERO).await;
    let work = workspace();
    let config = AgentConfig { plan: true, approval: ApprovalMode::Ask, ..AgentConfig::default() };
    let mut handle = start(&server, Wire::Anthropic, work.path(), config, Sessions::Off);
    handle.commands.send(Command::Submit("plan".into())).unwrap();
    let asked = tokio::time::timeout(WAIT, async {
        loop {
            let snapshot = handle.snapshots.recv().await.unwrap();
            if let Some(request) = &snapshot.pending_approval {
                return request.detail.clone();
            }
        }
    })
    .await
    .expect("plan mode did not ask");
    assert_eq!(asked, "ls");
}

#[test]
fn approving_with_no_plan_is_refused() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let server = FakeLlm::start(vec![text("Nothing to plan.")], Duration::ZERO).await;
        let work = workspace();
        let config = AgentConfig { plan: true, ..AgentConfig::default() };
        let mut handle = start(&server, Wire::Anthropic, work.path(), config, Sessions::Off);
        handle.commands.send(Command::Submit("plan".into())).unwrap();
        until_result(&mut handle).await;
        handle.commands.send(Command::ApprovePlan).unwrap();
        let refused = tokio::time::timeout(WAIT, async {
            loop {
                let snapshot = handle.snapshots.recv().await.unwrap();
                if let Some(keel::agent::Entry::Error { text }) = snapshot.transcript.last() {
                    return text.clone();
                }
            }
        })
        .await
        .unwrap();
        assert!(refused.contains("no plan to approve"), "{refused}");
        assert_eq!(server.bodies().await.len(), 1, "no turn started");
    });
}

/// With `--sandbox off` the guard's read-only proof is all that stands, and it reads options as
/// the program will: a prefix of `--output`, a bundled `-o` and `--compress-program` are refused.
#[tokio::test(flavor = "multi_thread")]
async fn without_the_sandbox_plan_mode_reads_options_as_the_program_will() {
    let bash = |command: &str| tool("bash", json!({ "command": command }));
    let script = vec![
        bash("sort --outp=sorted.txt notes.txt"),
        bash("sort -uo sorted.txt notes.txt"),
        bash("sort --comp=sh notes.txt"),
        bash("sort -r notes.txt"),
        tool("todo", plan()),
        text("Here is the plan."),
    ];
    let server = FakeLlm::start(script, Duration::ZERO).await;
    let work = workspace();
    let output = run_plan(&server, work.path(), &["--sandbox", "off"]);
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    let results = tool_results(&server.bodies().await);
    for (index, why) in [
        (0, "`sort --outp=sorted.txt` is `--output`, which writes files or runs another program"),
        (1, "`sort -o` (in `-uo`) writes files or runs another program"),
        (2, "`sort --comp=sh` is `--compress-program`"),
    ] {
        assert!(results[index].starts_with("Plan mode: only commands that just read"), "{index}");
        assert!(results[index].contains(why), "{}", results[index]);
    }
    assert!(results[3].contains("the notes, as they were"), "sort -r runs: {}", results[3]);
    assert_eq!(files(work.path()), [("notes.txt".to_owned(), NOTES.to_owned())], "nothing written");
}
