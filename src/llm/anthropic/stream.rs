//! Reading the Messages API's event stream: `message_start`, `content_block_start`,
//! `content_block_delta` (`text_delta`, `input_json_delta`, `thinking_delta`, `signature_delta`),
//! `content_block_stop`, `message_delta` (stop reason, usage), `message_stop`, `ping`, and
//! `error` mid-stream. Thinking and redacted-thinking blocks are kept as they came, signature
//! included, whether or not keel asked for them.

use crate::llm::error::StreamError;
use crate::llm::sse::{EventDecoder, Flow};
use crate::llm::streaming_block::{Part, invalid_json};
use crate::llm::types::{Completion, StopReason, StreamEvent};
use crate::message::Usage;
use serde::Deserialize;
use serde_json::Value;
use std::borrow::Cow;
use tokio::sync::mpsc::UnboundedSender;

/// Error kinds of a mid-stream `error` event that a retry may cure.
const RETRYABLE_ERRORS: [&str; 4] =
    ["overloaded_error", "api_error", "rate_limit_error", "timeout_error"];

/// Reads the Messages API's event stream into a [`Completion`].
#[derive(Debug, Default)]
pub struct StreamDecoder {
    /// Content blocks by the stream's `index`, in the order they started.
    parts: Vec<(u64, Part)>,
    stop_reason: Option<String>,
    usage: Usage,
}

/// The events this protocol defines; others are ignored unparsed.
const KNOWN_EVENTS: [&str; 8] = [
    "message",
    "message_start",
    "content_block_start",
    "content_block_delta",
    "content_block_stop",
    "message_delta",
    "message_stop",
    "error",
];

/// The fields of any event's data that keel reads; everything is optional so that one type
/// covers every event and unknown fields are skipped.
#[derive(Deserialize)]
struct Payload<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Cow<'a, str>,
    index: Option<u64>,
    #[serde(borrow)]
    delta: Option<Delta<'a>>,
    content_block: Option<StartBlock>,
    message: Option<StartMessage>,
    usage: Option<WireUsage>,
    error: Option<WireError>,
}

#[derive(Deserialize)]
struct Delta<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Cow<'a, str>,
    #[serde(borrow)]
    text: Option<Cow<'a, str>>,
    #[serde(borrow)]
    partial_json: Option<Cow<'a, str>>,
    #[serde(borrow)]
    thinking: Option<Cow<'a, str>>,
    #[serde(borrow)]
    signature: Option<Cow<'a, str>>,
    stop_reason: Option<String>,
}

#[derive(Deserialize)]
struct StartBlock {
    #[serde(rename = "type", default)]
    kind: String,
    id: Option<String>,
    name: Option<String>,
    text: Option<String>,
    input: Option<Value>,
    thinking: Option<String>,
    signature: Option<String>,
    data: Option<String>,
}

#[derive(Deserialize)]
struct StartMessage {
    usage: Option<WireUsage>,
}

#[derive(Deserialize, Default)]
struct WireUsage {
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    cache_creation_input_tokens: Option<u64>,
    cache_read_input_tokens: Option<u64>,
}

#[derive(Deserialize)]
struct WireError {
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default)]
    message: String,
}

impl StreamDecoder {
    fn part(&mut self, index: u64) -> Option<&mut Part> {
        self.parts.iter_mut().rev().find(|(at, _)| *at == index).map(|(_, part)| part)
    }

    fn record_usage(&mut self, usage: &WireUsage) {
        if let Some(read) = usage.cache_read_input_tokens {
            self.usage.cache_read_tokens = read;
        }
        if let Some(written) = usage.cache_creation_input_tokens {
            self.usage.cache_write_tokens = written;
        }
        if let Some(input) = usage.input_tokens {
            // Cached prompt tokens are still prompt: count them so the total reflects the context.
            self.usage.input_tokens = input
                .saturating_add(self.usage.cache_write_tokens)
                .saturating_add(self.usage.cache_read_tokens);
        }
        if let Some(output) = usage.output_tokens {
            self.usage.output_tokens = output;
        }
    }

    fn start_block(&mut self, index: u64, block: StartBlock, out: &UnboundedSender<StreamEvent>) {
        let part = match block.kind.as_str() {
            "text" => {
                let text = block.text.unwrap_or_default();
                if !text.is_empty() {
                    let _ = out.send(StreamEvent::TextDelta(text.clone()));
                }
                Part::Text(text)
            }
            "tool_use" => {
                let id = block.id.unwrap_or_default();
                let name = block.name.unwrap_or_default();
                let whole = block
                    .input
                    .filter(|input| input.as_object().is_some_and(|object| !object.is_empty()));
                Part::Tool { id, name, json: String::new(), whole }
            }
            "thinking" => Part::Thinking {
                thinking: block.thinking.unwrap_or_default(),
                signature: block.signature.filter(|signature| !signature.is_empty()),
            },
            "redacted_thinking" => Part::Redacted(block.data.unwrap_or_default()),
            _ => Part::Ignored,
        };
        self.parts.push((index, part));
    }

    fn delta(&mut self, index: u64, delta: Delta<'_>, out: &UnboundedSender<StreamEvent>) {
        match (self.part(index), delta.kind.as_ref()) {
            (Some(Part::Text(text)), "text_delta") => {
                if let Some(more) = delta.text.filter(|more| !more.is_empty()) {
                    text.push_str(&more);
                    let _ = out.send(StreamEvent::TextDelta(more.into_owned()));
                }
            }
            (Some(Part::Tool { json, .. }), "input_json_delta") => {
                if let Some(more) = delta.partial_json {
                    json.push_str(&more);
                }
            }
            (Some(Part::Thinking { thinking, .. }), "thinking_delta") => {
                if let Some(more) = delta.thinking {
                    thinking.push_str(&more);
                }
            }
            (Some(Part::Thinking { signature, .. }), "signature_delta") => {
                if let Some(more) = delta.signature {
                    signature.get_or_insert_with(String::new).push_str(&more);
                }
            }
            _ => {}
        }
    }
}

impl EventDecoder for StreamDecoder {
    fn event(
        &mut self,
        name: &str,
        data: &str,
        out: &UnboundedSender<StreamEvent>,
    ) -> Result<Flow, StreamError> {
        if !KNOWN_EVENTS.contains(&name) {
            return Ok(Flow::Continue);
        }
        let payload: Payload<'_> =
            serde_json::from_str(data).map_err(|error| invalid_json(&error, data))?;
        match payload.kind.as_ref() {
            "message_start" => {
                if let Some(usage) = payload.message.and_then(|message| message.usage) {
                    self.record_usage(&usage);
                }
            }
            "content_block_start" => {
                if let Some(block) = payload.content_block {
                    let index = payload.index.unwrap_or(self.parts.len() as u64);
                    self.start_block(index, block, out);
                }
            }
            "content_block_delta" => {
                if let (Some(index), Some(delta)) = (payload.index, payload.delta) {
                    self.delta(index, delta, out);
                }
            }
            "message_delta" => {
                if let Some(reason) = payload.delta.and_then(|delta| delta.stop_reason) {
                    self.stop_reason = Some(reason);
                }
                if let Some(usage) = payload.usage {
                    self.record_usage(&usage);
                }
            }
            "message_stop" => return Ok(Flow::Done),
            "error" => {
                let error = payload
                    .error
                    .unwrap_or(WireError { kind: "error".to_owned(), message: String::new() });
                return Err(StreamError::Server {
                    retryable: RETRYABLE_ERRORS.contains(&error.kind.as_str()),
                    kind: error.kind,
                    message: error.message,
                });
            }
            _ => {}
        }
        Ok(Flow::Continue)
    }

    fn finish(self, ended: bool) -> Result<Completion, StreamError> {
        if !ended {
            return Err(StreamError::Cut { expected: "message_stop" });
        }
        Ok(Completion {
            content: self.parts.into_iter().filter_map(|(_, part)| part.into_block()).collect(),
            stop_reason: self
                .stop_reason
                .as_deref()
                .map_or_else(StopReason::default, StopReason::from_wire),
            usage: self.usage,
        })
    }
}
