//! A long session as the TUI would hold it: a transcript and history of mixed Markdown, a full
//! board and a busy tool pane. Shared by the rendering benchmark.
#![allow(dead_code)]

use keel::agent::{Activity, Entry, Reminder, Snapshot, ToolRun, ToolStatus};
use keel::board::{Board, MAX_ITEMS};
use keel::message::{ContentBlock, Message, Role, Usage};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Tool runs kept in the tool pane's snapshot.
const TOOL_RUNS: usize = 50;

/// Assistant answers of the kinds a model writes: prose, lists, code, headings.
fn markdown(index: usize) -> String {
    match index % 4 {
        0 => format!(
            "Step {index} is done. I changed **three** files and kept the _public_ API as it was; \
             the `parse_config` helper now returns a `Result` instead of panicking on bad input."
        ),
        1 => format!(
            "## Plan for step {index}\n\n- read `src/lib.rs`\n- move the parser into its own module\n\
             - run the tests\n\n1. first the types\n2. then the call sites"
        ),
        2 => format!(
            "Here is the new function (step {index}):\n\n```rust\nfn greet(name: &str) -> String {{\n    \
             format!(\"Hello, {{name}}!\")\n}}\n```\n\nIt is covered by `tests/greet.rs`."
        ),
        _ => format!("Ran `cargo test`: all green after step {index}. Moving on to the next item."),
    }
}

/// A transcript and a history of `messages` messages each, alternating person and model, with a
/// tool call in every model turn.
pub fn long_session(messages: usize) -> Snapshot {
    let mut transcript = imbl::Vector::new();
    let mut history = imbl::Vector::new();
    for index in 0..messages {
        if index % 2 == 0 {
            let text = format!("Please do step {index} of the refactor and keep the tests green.");
            transcript.push_back(Entry::User { text: text.clone() });
            history.push_back(Message {
                role: Role::User,
                content: vec![
                    ContentBlock::ToolResult {
                        tool_use_id: format!("toolu_{index}"),
                        content: "1\tfn main() {\n2\t    println!(\"hi\");\n3\t}".into(),
                        is_error: false,
                    },
                    ContentBlock::Text { text },
                ],
            });
        } else {
            let text = markdown(index);
            transcript.push_back(Entry::Assistant { text: text.clone() });
            transcript.push_back(Entry::ToolCall {
                id: format!("toolu_{index}"),
                name: "read_file".into(),
                summary: "src/main.rs".into(),
            });
            history.push_back(Message::assistant(vec![
                ContentBlock::Text { text },
                ContentBlock::ToolUse {
                    id: format!("toolu_{}", index + 1),
                    name: "read_file".into(),
                    input: json!({"path": "src/main.rs"}),
                },
            ]));
        }
    }
    Snapshot {
        seq: 1,
        history,
        transcript,
        board: Arc::new(full_board()),
        tools: (0..TOOL_RUNS).map(tool_run).collect(),
        activity: Activity::RunningTool { name: "bash".into() },
        usage: Usage { input_tokens: 1_234_567, output_tokens: 89_012, ..Usage::default() },
        reminder: Reminder::at(3, 1, 0),
        provider: Arc::from("anthropic"),
        model: Arc::from("claude-sonnet-4-5"),
        ..Snapshot::default()
    }
}

/// A board of the most items allowed, a third of them done and one in progress.
fn full_board() -> Board {
    let items: Vec<Value> = (1..=MAX_ITEMS)
        .map(|i| {
            let status = match i {
                _ if i <= MAX_ITEMS / 3 => "completed",
                _ if i == MAX_ITEMS / 3 + 1 => "in_progress",
                _ => "pending",
            };
            json!({"id": i.to_string(), "text": format!("Update module_{i}.rs and its tests"),
                   "status": status, "activeForm": format!("Updating module_{i}.rs")})
        })
        .collect();
    let mut board = Board::default();
    board.update(&json!({ "items": items })).expect("a valid board");
    board
}

fn tool_run(index: usize) -> Arc<ToolRun> {
    let running = index + 1 == TOOL_RUNS;
    let output: String =
        (0..40).map(|line| format!("test module_{index}::case_{line} ... ok\n")).collect();
    Arc::new(ToolRun {
        id: format!("toolu_{index}"),
        name: "bash".into(),
        summary: "cargo test --quiet".into(),
        status: if running { ToolStatus::Running } else { ToolStatus::Succeeded },
        exit_code: (!running).then_some(0),
        started: Instant::now(),
        duration: (!running).then_some(Duration::from_millis(1_250)),
        output: Arc::from(output),
    })
}
