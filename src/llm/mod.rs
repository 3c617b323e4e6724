//! Talking to language models: the provider-neutral request and response, and the providers.
//!
//! The agent loop builds a [`ChatRequest`] from the history and calls [`Provider::complete`]; the
//! provider streams the answer, reporting text as it arrives through [`StreamEvent`]s, retries what
//! is worth retrying (see `retry`), and returns the finished [`Completion`]. A partial answer is never
//! returned: a stream that breaks is retried from the start or ends in an [`LlmError`].

pub mod anthropic;
pub mod error;
mod http;
pub mod openai;
pub mod retry;
pub mod scripted;
pub mod sse;
pub mod tool_input;

use crate::message::{ContentBlock, History, Usage};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::time::Duration;
use tokio::sync::mpsc::UnboundedSender;

pub use error::{LlmError, StreamError};

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
    /// JSON object carries it raw; see [`tool_input::invalid_input`].
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

impl WireFormat {
    /// The history exactly as this protocol's `messages` array carries it.
    pub fn messages(self, system: &str, history: &History) -> Vec<Value> {
        self.spans(system, history)
            .iter()
            .filter_map(|span| self.message_at(system, history, span))
            .collect()
    }

    /// Where each message of the `messages` array comes from, in order.
    pub fn spans(self, system: &str, history: &History) -> Vec<WireSpan> {
        match self {
            Self::Anthropic => anthropic::wire_spans(history),
            Self::OpenAi => openai::wire_spans(system, history),
        }
    }

    /// The wire message at `span` (one of [`WireFormat::spans`] of the same history).
    pub fn message_at(self, system: &str, history: &History, span: &WireSpan) -> Option<Value> {
        match self {
            Self::Anthropic => anthropic::wire_message_at(history, span),
            Self::OpenAi => openai::wire_message_at(system, history, span),
        }
    }
}

/// Settings every HTTP provider shares. `Debug` leaves the key out, so settings can be logged.
#[derive(Clone, PartialEq)]
pub struct HttpSettings {
    /// Base URL: for Anthropic without `/v1`, for OpenAI-compatible servers with it.
    pub base_url: String,
    pub api_key: String,
    pub model: String,
    pub connect_timeout: Duration,
    /// How long a stream may go without a byte before it counts as cut.
    pub idle_timeout: Duration,
    pub retry: retry::RetryPolicy,
}

impl std::fmt::Debug for HttpSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpSettings")
            .field("base_url", &self.base_url)
            .field("api_key", &"<hidden>")
            .field("model", &self.model)
            .field("connect_timeout", &self.connect_timeout)
            .field("idle_timeout", &self.idle_timeout)
            .field("retry", &self.retry)
            .finish()
    }
}

/// A model to talk to. An enum rather than a trait object: the set is closed and each variant is
/// tested against its real wire protocol.
#[derive(Debug)]
pub enum Provider {
    Anthropic(anthropic::AnthropicClient),
    OpenAi(openai::OpenAiClient),
    Scripted(scripted::ScriptedProvider),
}

impl Provider {
    /// Sends the request and waits for the whole answer, streaming progress to `events`.
    /// Retries are handled inside; cancelling is dropping the future.
    pub async fn complete(
        &self,
        request: &ChatRequest<'_>,
        events: &UnboundedSender<StreamEvent>,
    ) -> Result<Completion, LlmError> {
        match self {
            Self::Anthropic(client) => client.complete(request, events).await,
            Self::OpenAi(client) => client.complete(request, events).await,
            Self::Scripted(script) => script.complete(request, events).await,
        }
    }

    /// A short name for the status bar: `anthropic`, `openai` or `demo`.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Anthropic(_) => "anthropic",
            Self::OpenAi(_) => "openai",
            Self::Scripted(_) => "demo",
        }
    }

    pub fn model(&self) -> &str {
        match self {
            Self::Anthropic(client) => client.model(),
            Self::OpenAi(client) => client.model(),
            Self::Scripted(_) => "scripted",
        }
    }

    pub fn wire_format(&self) -> WireFormat {
        match self {
            Self::OpenAi(_) => WireFormat::OpenAi,
            Self::Anthropic(_) | Self::Scripted(_) => WireFormat::Anthropic,
        }
    }
}
