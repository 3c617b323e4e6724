//! Where each message of the `messages` array comes from, for the inspector: it locates
//! thousands of wire messages without building them and converts only those it shows.

use super::request::{WireMessage, cached_starts, is_sent_message, wire_blocks};
use crate::llm::types::WireSpan;
use crate::message::{History, Message, Role};
use serde_json::Value;
use std::ops::Range;

/// The inspector's copy of a wire message. Serialising strings and JSON values cannot fail.
fn to_value(message: &WireMessage<'_>) -> Value {
    serde_json::to_value(message).unwrap_or_default()
}

/// Where each wire message comes from: the runs of one role in the history, messages with
/// nothing to send left out, as the request merges them (the inspector's tests hold the two
/// to each other).
pub fn wire_spans(history: &History) -> Vec<WireSpan> {
    let mut spans: Vec<(Role, Range<usize>)> = Vec::new();
    for (index, message) in
        history.iter().enumerate().filter(|(_, message)| is_sent_message(message))
    {
        match spans.last_mut() {
            Some((role, run)) if *role == message.role => run.end = index + 1,
            _ => spans.push((message.role, index..index + 1)),
        }
    }
    spans.into_iter().map(|(_, messages)| WireSpan::Messages { messages, part: 0 }).collect()
}

/// The wire message at `span`, for the inspector.
pub fn wire_message_at(history: &History, span: &WireSpan) -> Option<Value> {
    let WireSpan::Messages { messages, part: 0 } = span else {
        return None;
    };
    let sent: Vec<&Message> = messages
        .clone()
        .filter_map(|index| history.get(index))
        .filter(|message| is_sent_message(message))
        .collect();
    let role = sent.first()?.role;
    let mut message = wire_blocks(role, sent.iter().flat_map(|message| message.content.iter()));
    if cached_starts(history).contains(&messages.start) {
        message.mark_cached();
    }
    Some(to_value(&message))
}
