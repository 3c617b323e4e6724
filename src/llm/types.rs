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
    /// Tokens the model may spend thinking before it answers (Anthropic extended thinking);
    /// `None` leaves it off. Protocols without it ignore it.
    pub thinking_budget: Option<u32>,
}

/// What every request of a session carries besides the system prompt and the history: the
/// model named on the wire, the tools and the parameters. With them a front end encodes the very
/// body a request sends (`WireFormat::encode`, the encoding `HttpClient` sends).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RequestShape {
    pub model: std::sync::Arc<str>,
    pub tools: std::sync::Arc<[ToolSpec]>,
    pub max_tokens: u32,
    pub thinking_budget: Option<u32>,
}

impl RequestShape {
    /// The request for `history` under `system`.
    pub fn request<'a>(&'a self, system: &'a str, history: &'a History) -> ChatRequest<'a> {
        ChatRequest {
            system,
            messages: history,
            tools: &self.tools,
            max_tokens: self.max_tokens,
            thinking_budget: self.thinking_budget,
        }
    }
}

/// What the provider reports while an answer streams in, for the person to watch.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamEvent {
    /// More of the assistant's text.
    TextDelta(String),
    /// The attempt failed and will be tried again after `delay`. Anything streamed so far by this
    /// attempt is void.
    Retrying { attempt: u32, delay: Duration, reason: String },
    /// A request went on the wire (sent again with every retry): what the inspector shows.
    Sent(SentRequest),
}

/// A request body exactly as it went on the wire, and when. Cheap to clone: the bytes are shared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SentRequest {
    /// The bytes of the body, as sent.
    pub body: bytes::Bytes,
    /// When the attempt that sent them began.
    pub at: std::time::SystemTime,
    /// The protocol the body speaks.
    pub format: WireFormat,
}

/// A finished answer from the model.
#[derive(Debug, Clone, PartialEq)]
pub struct Completion {
    /// Text and tool calls in the order the model gave them. A tool call whose input was not a
    /// JSON object carries it raw; see [`crate::llm::tool_input::invalid_input`].
    pub content: Vec<ContentBlock>,
    /// Why the model stopped, whatever the protocol called it.
    pub stop_reason: StopReason,
    pub usage: Usage,
}

/// Why the model stopped, in one vocabulary for every protocol. What matters to keel is whether
/// the answer is whole: [`StopReason::MaxTokens`] means it was cut at the output limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The model finished its answer (`end_turn`, `stop`, `stop_sequence`).
    EndTurn,
    /// The model asks for tools (`tool_use`, `tool_calls`, `function_call`).
    ToolUse,
    /// The answer was cut at the output limit (`max_tokens`, `length`).
    MaxTokens,
    /// The model or the server's filter refused to go on (`refusal`, `content_filter`).
    Refusal,
    /// The server gave no reason, or one keel does not know.
    #[default]
    Other,
}

impl StopReason {
    /// The reason a server gave, in either protocol's words (and those of the servers that
    /// imitate them).
    pub fn from_wire(reason: &str) -> Self {
        match reason.trim() {
            "end_turn" | "stop" | "stop_sequence" | "eos_token" => Self::EndTurn,
            "tool_use" | "tool_calls" | "function_call" => Self::ToolUse,
            "max_tokens" | "length" => Self::MaxTokens,
            "refusal" | "content_filter" => Self::Refusal,
            _ => Self::Other,
        }
    }

    /// The name the JSON events use.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::EndTurn => "end_turn",
            Self::ToolUse => "tool_use",
            Self::MaxTokens => "max_tokens",
            Self::Refusal => "refusal",
            Self::Other => "other",
        }
    }
}

/// Which wire protocol a provider speaks: what `--provider` and `provider = …` name, how the
/// request is encoded, and how the inspector shows the history. The one enum for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum WireFormat {
    /// Anthropic Messages API.
    #[default]
    Anthropic,
    /// OpenAI-compatible Chat Completions (OpenAI, DeepSeek, Doubao, Ollama, vLLM, …).
    #[value(name = "openai")]
    #[serde(rename = "openai")]
    OpenAi,
}

impl WireFormat {
    /// Both protocols, in the order keel looks for a key.
    pub const ALL: [Self; 2] = [Self::Anthropic, Self::OpenAi];

    /// The environment variable holding this protocol's key, as the protocol names it; commands and
    /// servers keel starts never see it.
    pub const fn key_variable(self) -> &'static str {
        match self {
            Self::Anthropic => "ANTHROPIC_API_KEY",
            Self::OpenAi => "OPENAI_API_KEY",
        }
    }

    /// The environment variable holding this protocol's base URL.
    pub const fn base_url_variable(self) -> &'static str {
        match self {
            Self::Anthropic => "ANTHROPIC_BASE_URL",
            Self::OpenAi => "OPENAI_BASE_URL",
        }
    }

    /// A protocol named in text (`KEEL_PROVIDER`), in any case.
    pub fn parse(text: &str) -> Option<Self> {
        match text.trim().to_lowercase().as_str() {
            "anthropic" => Some(Self::Anthropic),
            "openai" => Some(Self::OpenAi),
            _ => None,
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_protocols_stop_reasons_have_one_name() {
        let cases = [
            ("end_turn", StopReason::EndTurn),
            ("stop", StopReason::EndTurn),
            ("stop_sequence", StopReason::EndTurn),
            ("tool_use", StopReason::ToolUse),
            ("tool_calls", StopReason::ToolUse),
            ("function_call", StopReason::ToolUse),
            ("max_tokens", StopReason::MaxTokens),
            ("length", StopReason::MaxTokens),
            ("refusal", StopReason::Refusal),
            ("content_filter", StopReason::Refusal),
            ("pause_turn", StopReason::Other),
            ("", StopReason::Other),
        ];
        for (wire, reason) in cases {
            assert_eq!(StopReason::from_wire(wire), reason, "{wire}");
            let json = serde_json::to_value(reason).unwrap();
            assert_eq!(json, reason.as_str(), "{wire}");
        }
    }
}
