//! What `keel -p` tells the model about its board, seen on the wire of a loopback server:
//! repeated steps answered with when and under which item they were done, the adaptive
//! reminder's thresholds in the `reminder` event, drift in the `todo` event, and `--no-todo`
//! (no tool, no reminder, no board paragraph in the system prompt).

use crate::support::{bin, llm};
use bin::{json_lines, keel, output_within};
use llm::{FakeLlm, Step, text, tool};
use serde_json::{Value, json};
use std::path::Path;
use std::process::Output;
use std::time::Duration;

/// Runs `keel -p go` in `work` against `server`'s Anthropic endpoint.
fn run(server: &FakeLlm, work: &Path, args: &[&str]) -> Output {
    let home = tempfile::tempdir().unwrap();
    let mut command = keel(home.path());
    command
        .args(["-p", "go", "--workdir"])
        .arg(work)
        .args(args)
        .env("ANTHROPIC_API_KEY", "k")
        .env("ANTHROPIC_BASE_URL", server.anthropic_base());
    let output = output_within(&mut command, "keel -p");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    output
}

/// The tool results in the newest message of each request, in order.
fn results(bodies: &[Value]) -> Vec<String> {
    bodies
        .iter()
        .filter_map(|body| body["messages"].as_array()?.last().cloned())
        .flat_map(|message| message["content"].as_array().cloned().unwrap_or_default())
        .filter(|block| block["type"] == "tool_result")
        .map(|block| block["content"].as_str().unwrap_or_default().to_owned())
        .collect()
}

fn todo(items: Value) -> Step {
    tool("todo", json!({ "items": items }))
}

fn item(id: &str, text: &str, status: &str) -> Value {
    json!({"id": id, "text": text, "status": status})
}

#[tokio::test(flavor = "multi_thread")]
async fn a_repeated_write_or_edit_changes_nothing_and_names_the_round_and_the_item() {
    let write =
        |content: &str| tool("write_file", json!({"path": "hello.txt", "content": content}));
    let edit = |old: &str, new: &str| {
        tool("edit_file", json!({"path": "hello.txt", "old_text": old, "new_text": new}))
    };
    let script = vec![
        todo(json!([
            item("1", "Create hello.txt", "in_progress"),
            item("2", "Polish it", "pending")
        ])),
        write("hello\n"),                  // round 2
        edit("hello\n", "hello, world\n"), // round 3
        write("hello, world\n"),           // round 4: the content round 3 left
        edit("hello\n", "hello, world\n"), // round 5: the edit of round 3, already applied
        todo(json!([
            item("1", "Create hello.txt", "completed"),
            item("2", "Polish it", "in_progress")
        ])),
        write("hello\n"), // round 7: a real change, back to round 2's content
        write("hello\n"), // round 8: now a repeat of round 7, under #2
        tool("write_file", json!({"path": "before.txt", "content": "old\n"})), // as it was
        edit("nowhere", "not there either"), // not found: still an error
        text("Done."),
    ];
    let server = FakeLlm::start(script, Duration::ZERO).await;
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("before.txt"), "old\n").unwrap();
    run(&server, work.path(), &[]);

    let results = results(&server.bodies().await);
    assert_eq!(
        results[3],
        "No change: hello.txt already has exactly this content. This step was already done in \
         round 3 of this conversation, under board item #1 \"Create hello.txt\". Go on with the \
         next step."
    );
    assert_eq!(
        results[4],
        "No change: this edit is already in hello.txt (new_text is there and old_text is not). \
         This step was already done in round 3 of this conversation, under board item #1 \
         \"Create hello.txt\". Go on with the next step."
    );
    assert!(results[6].starts_with("Wrote 6 bytes to hello.txt"), "{}", results[6]);
    assert!(
        results[7]
            .contains("done in round 7 of this conversation, under board item #2 \"Polish it\""),
        "{}",
        results[7]
    );
    assert!(results[8].contains("Nothing in this conversation did it"), "{}", results[8]);
    assert!(results[9].contains("old_text was not found"), "{}", results[9]);
    assert_eq!(std::fs::read_to_string(work.path().join("hello.txt")).unwrap(), "hello\n");
}

/// A script of rounds: `T` updates the board (item 1 stays in progress), `.` reads a file.
fn rhythm(pattern: &str) -> Vec<Step> {
    let mut steps: Vec<Step> = pattern
        .chars()
        .map(|round| match round {
            'T' => todo(json!([
                item("1", "Keep going", "in_progress"),
                item("2", "Then this", "pending")
            ])),
            _ => tool("read_file", json!({"path": "notes.txt"})),
        })
        .collect();
    steps.push(text("Done."));
    steps
}

fn events_of(output: &Output, kind: &str) -> Vec<Value> {
    json_lines(output).into_iter().filter(|event| event["type"] == kind).collect()
}

async fn reminders(pattern: &str, threshold: &str) -> (Vec<Value>, Vec<Value>) {
    let server = FakeLlm::start(rhythm(pattern), Duration::ZERO).await;
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("notes.txt"), "hello\n").unwrap();
    let output =
        run(&server, work.path(), &["--output-format", "json", "--nag-threshold", threshold]);
    (events_of(&output, "reminder"), events_of(&output, "todo"))
}

#[tokio::test(flavor = "multi_thread")]
async fn auto_leaves_a_steady_rhythm_alone_and_reminds_one_round_past_it() {
    // Gaps of four silent rounds, twice; then the model falls silent.
    let (reminders, todos) = reminders("T....T....T..........", "auto").await;
    let seen: Vec<(u64, u64)> = reminders
        .iter()
        .map(|r| (r["rounds_since_todo"].as_u64().unwrap(), r["threshold"].as_u64().unwrap()))
        .collect();
    // Before the rhythm shows twice the default applies (once in each gap); after it, the
    // reminder waits for five silent rounds, and comes again five later.
    assert_eq!(seen, [(3, 3), (3, 3), (5, 5), (5, 5)]);
    assert!(reminders.iter().all(|r| r["text"] == "<reminder>Update your todos in the same response as your next step's tool call, not in a response of its own.</reminder>"));
    // The same item stays in progress: the drift count runs on through the updates.
    let drift: Vec<u64> = todos.iter().map(|t| t["rounds_in_progress"].as_u64().unwrap()).collect();
    assert_eq!(drift, [0, 4, 9]);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_fixed_threshold_reminds_at_it_whatever_the_rhythm() {
    let (reminders, _) = reminders("T....T....T..........", "3").await;
    assert!(reminders.iter().all(|r| r["threshold"] == 3 && r["rounds_since_todo"] == 3));
    assert_eq!(reminders.len(), 2 + 3, "one in each gap, then every three silent rounds");
}

#[tokio::test(flavor = "multi_thread")]
async fn no_todo_takes_the_tool_and_the_reminder_away() {
    let mut script = rhythm(".....");
    script.insert(0, todo(json!([item("1", "a", "pending")])));
    let server = FakeLlm::start(script, Duration::ZERO).await;
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("notes.txt"), "hello\n").unwrap();
    let output = run(&server, work.path(), &["--output-format", "json", "--no-todo"]);
    let bodies = server.bodies().await;
    let names: Vec<&str> = bodies[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["bash", "read_file", "write_file", "edit_file", "grep", "glob", "task"]);
    // Nor does the system prompt tell the model to keep a board it has no tool for.
    let system = bodies[0]["system"].to_string();
    assert!(system.contains("You are keel") && !system.contains("todo"), "{system}");
    assert!(events_of(&output, "reminder").is_empty());
    assert!(!bodies.iter().any(|body| body.to_string().contains("<reminder>")));
    let results = results(&bodies);
    assert!(results[0].starts_with("Unknown tool `todo`. Available tools: bash"), "{}", results[0]);
    assert!(events_of(&output, "todo").is_empty(), "the board never changes");
}

#[test]
fn bad_board_flags_are_usage_errors() {
    let home = tempfile::tempdir().unwrap();
    for args in
        [&["-p", "x", "--plan", "--no-todo"][..], &["-p", "x", "--nag-threshold", "soon"][..]]
    {
        let output = output_within(keel(home.path()).args(args), "keel with bad flags");
        assert_eq!(output.status.code(), Some(2), "{args:?}");
    }
}
