//! Histories for compaction's unit tests: a long task with a board, and the rounds it is made of.

use crate::board::Board;
use crate::message::{ContentBlock, History, Message, Role};
use serde_json::{Value, json};

/// What a big command printed: several kilobytes, so masking saves much.
pub fn big_output() -> String {
    format!("Exit code 1\n{}", "failing test output\n".repeat(200))
}

/// One round: a call and its answer.
pub fn round(id: &str, name: &str, input: Value, result: &str, is_error: bool) -> [Message; 2] {
    [
        Message::assistant(vec![ContentBlock::ToolUse { id: id.into(), name: name.into(), input }]),
        Message {
            role: Role::User,
            content: vec![ContentBlock::ToolResult {
                tool_use_id: id.into(),
                content: result.into(),
                is_error,
            }],
        },
    ]
}

/// The answer of a tool call in `history`.
pub fn result_of<'a>(history: &'a History, id: &str) -> Option<&'a str> {
    history.iter().flat_map(|message| &message.content).find_map(|block| match block {
        ContentBlock::ToolResult { tool_use_id, content, .. } if tool_use_id == id => {
            Some(content.as_str())
        }
        _ => None,
    })
}

/// A board update of `items` items, the first `done` of them completed.
pub fn board_input(items: usize, done: usize) -> Value {
    let items: Vec<Value> = (1..=items)
        .map(|i| {
            json!({"id": i.to_string(), "text": format!("Step number {i} of the plan"),
                "status": if i <= done { "completed" } else { "pending" }})
        })
        .collect();
    json!({ "items": items })
}

/// A task: the person's request, the plan on the board (`plan`), a big command, the board
/// updated (`update`, the current board), then `commands` more big commands (`c1`, `c2`, …).
/// Returns the history and the board it ends with.
pub fn long_task(commands: usize) -> (History, Board) {
    let mut board = Board::default();
    let mut history = vec![Message::user_text("Make the tests pass.")];
    for (id, done) in [("plan", 0), ("update", 1)] {
        let input = board_input(4, done);
        let answer = board.update(&input).unwrap();
        history.extend(round(id, "todo", input, &answer, false));
        if id == "plan" {
            history.extend(round("c0", "bash", json!({"command": "pytest"}), &big_output(), false));
        }
    }
    for n in 1..=commands {
        let command = json!({ "command": format!("pytest -k case{n}") });
        history.extend(round(&format!("c{n}"), "bash", command, &big_output(), false));
    }
    (history.into_iter().collect(), board)
}
