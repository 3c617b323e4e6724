//! The states the TUI tests draw and drive: boards, tool runs, a conversation mid-task, a
//! history as the inspector shows it. Shared by the snapshot, key and scrolling tests.

use keel::agent::{Activity, Entry, Reminder, Snapshot, ToolRun, ToolStatus};
use keel::board::Board;
use keel::message::{ContentBlock, Message, Role, Usage};
use keel::tui::view::inspector::Inspector;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The sizes the TUI is drawn at: a wide terminal and a narrow one.
pub const WIDE: (u16, u16) = (120, 40);
pub const NARROW: (u16, u16) = (60, 20);

pub fn board(items: Value) -> Arc<Board> {
    let mut board = Board::default();
    board.update(&json!({ "items": items })).unwrap();
    Arc::new(board)
}

pub fn mid_task_board() -> Arc<Board> {
    board(json!([
        {"id": "1", "text": "Read hello.py", "status": "completed"},
        {"id": "2", "text": "Add type hints to greet()", "status": "in_progress", "activeForm": "Adding type hints"},
        {"id": "3", "text": "Add docstrings", "status": "pending"},
        {"id": "4", "text": "Run the tests", "status": "pending"},
    ]))
}

pub fn finished_board() -> Arc<Board> {
    board(json!([
        {"id": "1", "text": "Read hello.py", "status": "completed"},
        {"id": "2", "text": "Add type hints to greet()", "status": "completed"},
        {"id": "3", "text": "Add docstrings", "status": "completed"},
        {"id": "4", "text": "Run the tests", "status": "completed"},
    ]))
}

pub fn long_board() -> Arc<Board> {
    let items: Vec<Value> = (1..=18)
        .map(|i| {
            let status = match i {
                1..=6 => "completed",
                7 => "in_progress",
                _ => "pending",
            };
            json!({"id": i.to_string(), "text": format!("Step {i}: update module_{i}.py and its tests"), "status": status, "activeForm": format!("Updating module_{i}.py")})
        })
        .collect();
    board(Value::Array(items))
}

pub fn run(id: &str, name: &str, summary: &str, status: ToolStatus, output: &str) -> Arc<ToolRun> {
    let finished = status != ToolStatus::Running;
    Arc::new(ToolRun {
        id: id.into(),
        name: name.into(),
        summary: summary.into(),
        status,
        exit_code: finished.then_some(if status == ToolStatus::Failed { 1 } else { 0 }),
        started: Instant::now(),
        duration: finished.then_some(Duration::from_millis(1234)),
        output: Arc::from(output),
    })
}

pub fn base_snapshot() -> Snapshot {
    Snapshot {
        seq: 1,
        provider: Arc::from("anthropic"),
        model: Arc::from("claude-sonnet-4-5"),
        reminder: Reminder::at(3, 0, 0),
        usage: Usage { input_tokens: 12_345, output_tokens: 2_048, ..Usage::default() },
        ..Snapshot::default()
    }
}

pub fn transcript(entries: Vec<Entry>) -> imbl::Vector<Entry> {
    entries.into_iter().collect()
}

pub fn user(text: &str) -> Entry {
    Entry::User { text: text.into() }
}

pub fn assistant(text: &str) -> Entry {
    Entry::Assistant { text: text.into() }
}

pub fn tool_call(id: &str, name: &str, summary: &str) -> Entry {
    Entry::ToolCall { id: id.into(), name: name.into(), summary: summary.into() }
}

pub fn mid_task_snapshot() -> Snapshot {
    Snapshot {
        transcript: transcript(vec![
            user("Add type hints and docstrings to hello.py, then run the tests."),
            assistant("I'll plan this on the board, then work through it step by step."),
            tool_call("t1", "todo", "4 items"),
            tool_call("t2", "read_file", "hello.py"),
            Entry::Reminder { text: "<reminder>Update your todos.</reminder>".into() },
            assistant("The file has one function, `greet`. Adding hints now."),
            tool_call("t3", "edit_file", "hello.py"),
            tool_call("t4", "bash", "python -m pytest -q"),
        ]),
        board: mid_task_board(),
        tools: [
            run(
                "t2",
                "read_file",
                "hello.py",
                ToolStatus::Succeeded,
                "1\tdef greet(name):\n2\t    return f\"Hello, {name}!\"",
            ),
            run("t3", "edit_file", "hello.py", ToolStatus::Succeeded, "Edited hello.py"),
            run("t4", "bash", "python -m pytest -q", ToolStatus::Running, "collecting ...\n....\n"),
        ]
        .into_iter()
        .collect(),
        activity: Activity::RunningTool { name: "bash".into() },
        reminder: Reminder::at(3, 2, 0),
        ..base_snapshot()
    }
}

pub fn sample_history() -> imbl::Vector<Message> {
    [
        Message::user_text("Add type hints to hello.py"),
        Message::assistant(vec![
            ContentBlock::Text { text: "I'll read the file first.".into() },
            ContentBlock::ToolUse {
                id: "toolu_01".into(),
                name: "read_file".into(),
                input: json!({"path": "hello.py"}),
            },
        ]),
        Message {
            role: Role::User,
            content: vec![
                ContentBlock::ToolResult {
                    tool_use_id: "toolu_01".into(),
                    content: "1\tdef greet(name):\n2\t    return f\"Hello, {name}!\"".into(),
                    is_error: false,
                },
                ContentBlock::Reminder { text: "<reminder>Update your todos.</reminder>".into() },
            ],
        },
        Message::assistant(vec![ContentBlock::Text {
            text: "`greet` takes a name and returns a greeting.".into(),
        }]),
    ]
    .into_iter()
    .collect()
}

/// The inspector on its own, opened on `sample_history` as an Anthropic session sends it.
pub fn sample_inspector() -> Inspector {
    Inspector::open(&Snapshot { history: sample_history(), ..Snapshot::default() })
}
