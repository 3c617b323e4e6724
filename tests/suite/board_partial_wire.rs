//! Partial board updates and the reminder as a provider sees them, on both wire protocols
//! (docs/board.md): `keel -p` against the loopback server, the requests read back. Every valid
//! update, whatever its kind, is answered with the whole board; a refused update is an error
//! result and leaves the board before it the newest the model reads; and the reminder stays away
//! from a model that keeps its board alongside its steps and comes once a turn with no board.

use crate::support::{bin, llm};
use bin::{keel, output_within};
use llm::{FakeLlm, Step, board, text, tool};
use serde_json::{Value, json};
use std::path::Path;
use std::time::Duration;

/// The words every reminder starts with.
const REMINDER_OPEN: &str = "<reminder>";

#[derive(Clone, Copy)]
enum Wire {
    Anthropic,
    OpenAi,
}

/// Runs `keel -p go` in `work` against `server` on `wire`.
fn run(server: &FakeLlm, wire: Wire, work: &Path) {
    let home = tempfile::tempdir().unwrap();
    let mut command = keel(home.path());
    command.args(["-p", "go", "--workdir"]).arg(work);
    match wire {
        Wire::Anthropic => {
            command.env("ANTHROPIC_API_KEY", "k").env("ANTHROPIC_BASE_URL", server.anthropic_base())
        }
        Wire::OpenAi => {
            command.env("OPENAI_API_KEY", "k").env("OPENAI_BASE_URL", server.openai_base())
        }
    };
    let output = output_within(&mut command, "keel -p");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
}

async fn serve(script: Vec<Step>, wire: Wire) -> Vec<Value> {
    let server = FakeLlm::start(script, Duration::ZERO).await;
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("notes.txt"), "hello\n").unwrap();
    run(&server, wire, work.path());
    server.bodies().await
}

/// Each tool result in the newest messages of a request, as (content, marked an error), in the
/// wire's own shape: Anthropic's `tool_result` blocks, OpenAI's `tool` messages.
fn newest_results(body: &Value, wire: Wire) -> Vec<(String, bool)> {
    let messages = body["messages"].as_array().unwrap();
    match wire {
        Wire::Anthropic => messages.last().unwrap()["content"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|block| block["type"] == "tool_result")
            .map(|block| {
                (block["content"].as_str().unwrap().to_owned(), block["is_error"] == json!(true))
            })
            .collect(),
        Wire::OpenAi => {
            let start = messages.iter().rposition(|m| m["role"] == "assistant").unwrap() + 1;
            messages[start..]
                .iter()
                .filter(|m| m["role"] == "tool")
                .map(|m| {
                    let content = m["content"].as_str().unwrap();
                    match content.strip_prefix("Error: ") {
                        Some(error) => (error.to_owned(), true),
                        None => (content.to_owned(), false),
                    }
                })
                .collect()
        }
    }
}

fn update(entries: Value) -> Value {
    json!({ "update": entries })
}

/// Reminders in the newest message(s) of each request: the ones that request added.
fn reminders(bodies: &[Value]) -> usize {
    bodies
        .iter()
        .filter(|body| {
            // Anthropic: a text block after the tool results; OpenAI: a user message after the
            // tool messages. Either way, in the newest message.
            let newest = body["messages"].as_array().unwrap().last().unwrap();
            newest["content"].to_string().contains(REMINDER_OPEN)
        })
        .count()
}

/// The newest board rendered anywhere in a request — a board answer, the reminder, keel's
/// notes — as the model would find it reading back from the end: the last text that is a
/// whole board (it ends with the progress line, or is the empty board's line).
fn newest_render(body: &Value) -> Option<String> {
    let mut texts = Vec::new();
    collect_strings(&body["messages"], &mut texts);
    texts.into_iter().rev().find_map(|text| {
        if text.ends_with("No todos.") {
            return Some("No todos.".to_owned());
        }
        if !text.ends_with(" completed)") {
            return None;
        }
        // A reminder or a note carries the board after its own words and a blank line.
        let start =
            if text.starts_with('[') { Some(0) } else { text.find("\n\n[").map(|at| at + 2) };
        start.map(|start| text[start..].to_owned())
    })
}

fn collect_strings(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(text) => out.push(text.clone()),
        Value::Array(items) => items.iter().for_each(|item| collect_strings(item, out)),
        Value::Object(fields) => fields.values().for_each(|item| collect_strings(item, out)),
        _ => {}
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn every_valid_update_is_answered_with_the_whole_board_on_both_wires() {
    // Every kind of update, one a response (the first beside a command); the fourth is refused.
    let updates = [
        ("the first plan, with ids", board(0, 3)),
        (
            "update of a status",
            update(json!([
                {"id": "1", "status": "completed"},
                {"id": "2", "status": "in_progress", "activeForm": "Doing step 2"}
            ])),
        ),
        ("a rename", update(json!([{"id": "3", "text": "Step three"}]))),
        ("an added item", update(json!([{"id": "4", "text": "Step 4"}]))),
        ("refused", update(json!([{"id": "9", "status": "completed"}]))),
        (
            "a whole list without ids",
            json!({"items": [
                {"text": "Step 1", "status": "completed"}, {"text": "Step 2", "status": "completed"},
                {"text": "Step three", "status": "in_progress"}, {"text": "Step 4"}
            ]}),
        ),
        ("a whole list with ids", board(3, 4)),
        (
            "replace",
            json!({"replace": true, "items": [{"id": "a", "text": "New plan", "status": "pending"}]}),
        ),
        ("an emptied board", json!({"replace": true, "items": []})),
    ];
    let mut script: Vec<Step> =
        updates.iter().map(|(_, input)| tool("todo", input.clone())).collect();
    script[1].tools.insert(0, ("bash".into(), json!({"command": "cat notes.txt"})));
    script.push(text("Done."));
    for wire in [Wire::Anthropic, Wire::OpenAi] {
        let bodies = serve(script.clone(), wire).await;
        assert_eq!(bodies.len(), updates.len() + 1);
        let mut board = keel::board::Board::default();
        for (n, (kind, input)) in updates.iter().enumerate() {
            let results = newest_results(&bodies[n + 1], wire);
            let (answer, is_error) = results.last().unwrap().clone();
            match board.update(input) {
                Ok(expected) => {
                    assert!(!is_error, "{kind}");
                    assert_eq!(answer, expected, "{kind}: the whole board");
                    assert_eq!(newest_render(&bodies[n + 1]).as_deref(), Some(answer.as_str()));
                }
                Err(err) => {
                    assert!(is_error, "{kind}");
                    assert_eq!(answer, err.to_string());
                    assert_eq!(answer, "Update: no item '9' on the board; give a text to add it");
                    // The valid board before it is still the newest one the model can read.
                    assert_eq!(newest_render(&bodies[n + 1]), Some(board.render()), "{kind}");
                }
            }
        }
        let added = newest_results(&bodies[4], wire);
        assert_eq!(
            added[0].0,
            "[x] #1: Step 1\n[>] #2: Step 2  <- Doing step 2\n[ ] #3: Step three\n[ ] #4: Step 4\n\n\
             (1/4 completed)",
            "a new item: the whole board, as docs/board.md draws it"
        );
        let step = newest_results(&bodies[2], wire);
        assert!(step[0].0.contains("hello"), "{step:?}");
        // The tool's schema offers both forms and stays small.
        let tools = bodies[0]["tools"].as_array().unwrap();
        let todo = tools
            .iter()
            .find(|tool| tool["name"] == "todo" || tool["function"]["name"] == "todo")
            .unwrap();
        let schema = todo.get("input_schema").unwrap_or(&todo["function"]["parameters"]);
        assert!(
            schema["properties"]["update"].is_object() && schema["properties"]["items"].is_object()
        );
        assert!(todo.to_string().len() < 800, "{}", todo.to_string().len());
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_whole_list_that_drops_an_unfinished_item_is_refused_on_both_wires() {
    for wire in [Wire::Anthropic, Wire::OpenAi] {
        let script = vec![
            tool("todo", board(0, 3)),
            tool("todo", board(1, 2)),
            tool(
                "todo",
                json!({"replace": true, "items": [{"id": "a", "text": "New plan", "status": "pending"}]}),
            ),
            text("Done."),
        ];
        let bodies = serve(script, wire).await;
        let (refusal, is_error) = newest_results(&bodies[2], wire).remove(0);
        assert!(is_error);
        assert_eq!(
            refusal,
            "The list leaves out an item not completed: #3 \"Step 3\". Nothing was changed. Send \
             them too (as completed if they are done), or send \"replace\": true with the list \
             to start a new plan."
        );
        let replaced = newest_results(&bodies[3], wire);
        assert_eq!(replaced, [("[ ] #a: New plan\n\n(0/1 completed)".to_owned(), false)]);
    }
}

/// `n` rounds that each read a file and say nothing of the board.
fn silent(n: usize) -> Vec<Step> {
    (0..n).map(|_| tool("read_file", json!({"path": "notes.txt"}))).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn with_no_board_the_reminder_comes_at_most_once_in_nine_silent_rounds() {
    for wire in [Wire::Anthropic, Wire::OpenAi] {
        let mut script = silent(9);
        script.push(text("Done."));
        let bodies = serve(script, wire).await;
        assert_eq!(bodies.len(), 10);
        assert_eq!(reminders(&bodies), 1, "once in the turn, after the third round");
        assert!(bodies[3].to_string().contains(REMINDER_OPEN));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_model_that_updates_alongside_its_steps_is_never_reminded() {
    // Ten steps of three rounds — read, write, then the step's command with the board's
    // update beside it — as the system prompt teaches.
    const STEPS: usize = 10;
    for wire in [Wire::Anthropic, Wire::OpenAi] {
        let mut script = vec![tool("todo", board(0, STEPS))];
        for k in 1..=STEPS {
            script.push(tool("read_file", json!({"path": "notes.txt"})));
            script.push(tool(
                "write_file",
                json!({"path": format!("step_{k}.txt"), "content": format!("step {k}\n")}),
            ));
            let mut entries = vec![json!({"id": k.to_string(), "status": "completed"})];
            if k < STEPS {
                entries.push(json!({"id": (k + 1).to_string(), "status": "in_progress"}));
            }
            script.push(Step {
                tools: vec![
                    ("bash".into(), json!({"command": format!("cat step_{k}.txt")})),
                    ("todo".into(), update(json!(entries))),
                ],
                ..text("")
            });
        }
        script.push(text("All done."));
        let bodies = serve(script, wire).await;
        assert_eq!(bodies.len(), 2 + 3 * STEPS);
        assert_eq!(reminders(&bodies), 0);
        let last = newest_results(bodies.last().unwrap(), wire);
        let every: String = (1..=STEPS).map(|k| format!("[x] #{k}: Step {k}\n")).collect();
        assert_eq!(last[1].0, format!("{every}\n(10/10 completed)"), "the whole board, closed");
    }
}
