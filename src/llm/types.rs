//! What goes to a model and what comes back, whatever the protocol: the request, the events an
//! answer streams as, the finished answer, and which wire protocol a provider speaks.

use crate::message::{ContentBlock, History, Usage};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::time::Duration;

/// A tool as the model is told about it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    pub input_schema: Value,
}

/// Everything one request to the model carries.
#[derive(Debug, Clone, Copy)]
pub struct ChatRequest<'a> {
    pub system: &'a str,
    pub messages: &'a History,
    pub tools: &'a [ToolSpec],
    pub max_tokens: u32,
}

/// What the provider reports while an answer streams in, for the person to watch.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamEvent {
    /// More of the assistant's text.
    TextDelta(String),
    /// The attempt failed and will be tried again after `delay`. Anything streamed so far by this
    /// attempt is void.
    Retrying { attempt: u32, delay: Duration, reason: String },
}

/// A finished answer from the model.
#[derive(Debug, Clone, PartialEq)]
pub struct Completion {
    /// Text and tool calls in the order the model gave them. A tool call whose input was not a
    /// JSON object carries it raw; see [`crate::llm::tool_input::invalid_input`].
    pub content: Vec<ContentBlock>,
    /// The provider's own word for why it stopped (`end_turn`, `tool_use`, `stop`, `tool_calls`, …).
    pub stop_reason: Option<String>,
    pub usage: Usage,
}

/// Which wire protocol a provider speaks; decides how the history is shown in the inspector.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WireFormat {
    #[default]
    Anthropic,
    OpenAi,
}

/// Where one message of a protocol's `messages` array comes from, found without building it:
/// a front end can count and locate thousands of wire messages and convert only those it shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WireSpan {
    /// The system prompt, sent as the first message (OpenAI-compatible).
    System,
    /// The `part`-th wire message made from the history messages in `messages`: Anthropic
    /// merges a run of one role into one; OpenAI splits a user turn into a message per result.
    Messages { messages: std::ops::Range<usize>, part: usize },
}
