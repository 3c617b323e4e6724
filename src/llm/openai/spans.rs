//! Where each message of the `messages` array comes from, for the inspector: it locates
//! thousands of wire messages without building them and converts only those it shows.

use super::request::{WireMessage, push_wire_message};
use crate::llm::types::WireSpan;
use crate::message::{ContentBlock, History, Role};
use serde_json::Value;

/// The inspector's copy of a wire message. Serialising strings and JSON values cannot fail.
fn to_value(message: &WireMessage<'_>) -> Value {
    serde_json::to_value(message).unwrap_or_default()
}

/// The system prompt's message, then for each history message as many spans as it makes wire
/// messages: one for an assistant turn; for a user turn a `tool` message per result, then a
/// `user` message for its text and reminder if it has any.
pub fn wire_spans(system: &str, history: &History) -> Vec<WireSpan> {
    let mut spans = Vec::with_capacity(history.len() + 1);
    if !system.is_empty() {
        spans.push(WireSpan::System);
    }
    for (index, message) in history.iter().enumerate() {
        let parts = match message.role {
            Role::Assistant => 1,
            Role::User => {
                let results = message
                    .content
                    .iter()
                    .filter(|block| matches!(block, ContentBlock::ToolResult { .. }))
                    .count();
                let has_text = message.content.iter().any(|block| {
                    matches!(block, ContentBlock::Text { text } | ContentBlock::Reminder { text } | ContentBlock::Note { text } if !text.is_empty())
                });
                results + usize::from(has_text)
            }
        };
        spans
            .extend((0..parts).map(|part| WireSpan::Messages { messages: index..index + 1, part }));
    }
    spans
}

/// The wire message at `span`, for the inspector.
pub fn wire_message_at(system: &str, history: &History, span: &WireSpan) -> Option<Value> {
    match span {
        WireSpan::System => Some(to_value(&WireMessage::System { content: system })),
        WireSpan::Messages { messages, part } => {
            let mut out = Vec::with_capacity(1);
            push_wire_message(history.get(messages.start)?, &mut out);
            out.get(*part).map(to_value)
        }
    }
}
