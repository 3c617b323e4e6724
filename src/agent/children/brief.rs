//! What a child's first request holds besides keel's child system prompt: the person's request
//! for this turn (so the child knows what the work is for), the board rendered with the child's
//! own item named (so it knows where its step stands), and the prompt its parent wrote — and
//! nothing else of the parent's conversation. keel's tags in all three are defused
//! (`crate::tags`): the child reads only keel's own as keel's.

use crate::board::Board;
use crate::message::{ContentBlock, History, Role};
use crate::tags::{Tag, defuse};
use crate::tools::output::{CappedBuffer, MODEL_OUTPUT_LIMIT};

/// What marks the child's own item on the board it is shown.
const YOURS: &str = "   <- your item";

/// The person's request for the turn running now: the text of the newest message they sent
/// (keel's own notes, reminders and tool results are not theirs), capped like a tool result.
pub fn request_of(history: &History) -> Option<String> {
    let message = history.iter().rev().find(|message| {
        message.role == Role::User
            && message.content.iter().any(|block| matches!(block, ContentBlock::Text { .. }))
    })?;
    let text: Vec<&str> = message
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    let mut capped = CappedBuffer::new(MODEL_OUTPUT_LIMIT);
    capped.push(text.join("\n\n").as_bytes());
    Some(capped.render(MODEL_OUTPUT_LIMIT))
}

/// The child's first message. `board`: the parent's, when it keeps one; `item`: the child's.
pub fn first_message(
    request: Option<&str>,
    board: Option<&Board>,
    item: Option<&str>,
    prompt: &str,
) -> String {
    let mut text = String::new();
    if let Some(request) = request {
        let said =
            format!("\nThe person asked the agent that started you:\n{}\n", request.trim_end());
        text.push_str(&format!("{}\n\n", Tag::Request.wrap(&said)));
    }
    if let Some(board) = board.filter(|board| !board.is_empty()) {
        let whose = match item {
            Some(item) => format!("The agent keeps this board; your item is #{item}:"),
            None => "The agent keeps this board; you do no item of it, you look for it:".to_owned(),
        };
        let shown = format!("\n{whose}\n{}", render(board, item));
        text.push_str(&format!("{}\n\n", Tag::Board.wrap(&shown)));
    }
    // The parent model's words, carried into keel's message to the child.
    text.push_str(&defuse(prompt.trim()));
    text
}

/// The board as the `todo` tool renders it, the child's item marked.
fn render(board: &Board, item: Option<&str>) -> String {
    let mut out = String::new();
    for entry in board.items() {
        out.push_str(&board.render_item(entry));
        if item == Some(entry.id.as_str()) {
            out.push_str(YOURS);
        }
        out.push('\n');
    }
    out.push('\n');
    out.push_str(&board.progress());
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::Message;
    use serde_json::json;

    #[test]
    fn the_child_reads_the_request_its_item_on_the_board_and_the_prompt() {
        let mut board = Board::default();
        let items = json!({"items": [
            {"id": "1", "text": "Read it", "status": "completed"},
            {"id": "2", "text": "Fix it", "status": "in_progress"}
        ]});
        board.update(&items).unwrap();
        let text = first_message(Some("Fix the bug."), Some(&board), Some("2"), "Fix b.rs.\n");
        assert_eq!(
            text,
            "<parent-request>\nThe person asked the agent that started you:\nFix the bug.\n</parent-request>\n\n\
             <parent-board>\nThe agent keeps this board; your item is #2:\n[x] #1: Read it\n\
             [>] #2: Fix it   <- your item\n\n(1/2 completed)\n</parent-board>\n\nFix b.rs."
        );
        let bare = first_message(None, Some(&Board::default()), None, "Look.");
        assert_eq!(bare, "Look.", "an empty board is left out");
    }

    #[test]
    fn the_request_is_the_persons_newest_text() {
        let mut history = History::new();
        history.push_back(Message {
            role: Role::User,
            content: vec![ContentBlock::Text { text: "First.".into() }],
        });
        history.push_back(Message::assistant(vec![ContentBlock::Text { text: "Ok.".into() }]));
        history.push_back(Message {
            role: Role::User,
            content: vec![
                ContentBlock::Text { text: "Second.".into() },
                ContentBlock::Reminder { text: "<plan-mode>…</plan-mode>".into() },
            ],
        });
        history.push_back(Message {
            role: Role::User,
            content: vec![ContentBlock::ToolResult {
                tool_use_id: "t".into(),
                content: "out".into(),
                is_error: false,
            }],
        });
        assert_eq!(request_of(&history).as_deref(), Some("Second."));
        assert_eq!(request_of(&History::new()), None);
    }
}
