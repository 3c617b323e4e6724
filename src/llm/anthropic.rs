//! The Anthropic Messages API: the request, the history as its `messages` array, and the reading
//! of its event stream.
//!
//! Wire rules kept here (DESIGN §3, §4): user and assistant turns alternate, so consecutive
//! messages of one role are merged; in a user message the `tool_result` blocks come first and the
//! reminder is a `text` block after them; empty text blocks, which the API refuses, are left out.
//! The stream is complete only at `message_stop`; an `error` event mid-stream (`overloaded_error`,
//! `api_error`) fails the attempt so it is retried.

use super::error::StreamError;
use super::http::{self, Endpoint};
use super::sse::{EventDecoder, Flow, Part, invalid_json};
use super::{ChatRequest, Completion, HttpSettings, LlmError, StreamEvent, WireFormat};
use crate::message::{ContentBlock, History, Message, Role, Usage};
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use std::borrow::Cow;
use std::fmt;
use tokio::sync::mpsc::UnboundedSender;

/// The API version keel speaks.
pub const API_VERSION: &str = "2023-06-01";
const KEY_VAR: &str = "ANTHROPIC_API_KEY";
const BASE_VAR: &str = "ANTHROPIC_BASE_URL";
const MESSAGES_PATH: &str = "/v1/messages";
/// Error kinds of a mid-stream `error` event that a retry may cure.
const RETRYABLE_ERRORS: [&str; 4] =
    ["overloaded_error", "api_error", "rate_limit_error", "timeout_error"];

/// A client for one model behind the Anthropic Messages API.
pub struct AnthropicClient {
    settings: HttpSettings,
    http: reqwest::Client,
    endpoint: Endpoint,
    headers: HeaderMap,
}

impl fmt::Debug for AnthropicClient {
    // By hand, so the key never reaches a log.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AnthropicClient")
            .field("url", &self.endpoint.url)
            .field("model", &self.settings.model)
            .finish_non_exhaustive()
    }
}

impl AnthropicClient {
    pub fn new(settings: HttpSettings) -> Result<Self, LlmError> {
        let url = http::join_url(&settings.base_url, MESSAGES_PATH, BASE_VAR)?;
        let not_found_hint = if settings.base_url.trim_end_matches('/').ends_with("/v1") {
            format!("; {BASE_VAR} should not end in /v1")
        } else {
            String::new()
        };
        let mut headers = HeaderMap::new();
        headers.insert(
            HeaderName::from_static("x-api-key"),
            http::secret_header(&settings.api_key, KEY_VAR)?,
        );
        headers.insert(
            HeaderName::from_static("anthropic-version"),
            HeaderValue::from_static(API_VERSION),
        );
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
        Ok(Self {
            http: http::client(&settings)?,
            endpoint: Endpoint {
                url,
                wire: WireFormat::Anthropic,
                model: settings.model.clone(),
                key_var: KEY_VAR,
                base_var: BASE_VAR,
                not_found_hint,
            },
            headers,
            settings,
        })
    }

    pub fn model(&self) -> &str {
        &self.settings.model
    }

    /// The JSON body sent for `request`.
    pub fn request_body(&self, request: &ChatRequest<'_>) -> Value {
        let mut body = Map::new();
        body.insert("model".into(), json!(self.settings.model));
        body.insert("max_tokens".into(), json!(request.max_tokens));
        body.insert("stream".into(), json!(true));
        if !request.system.is_empty() {
            body.insert("system".into(), json!(request.system));
        }
        body.insert("messages".into(), Value::Array(wire_messages(request.messages)));
        if !request.tools.is_empty() {
            let tools = request
                .tools
                .iter()
                .map(|tool| {
                    json!({
                        "name": tool.name,
                        "description": tool.description,
                        "input_schema": tool.input_schema,
                    })
                })
                .collect();
            body.insert("tools".into(), Value::Array(tools));
        }
        Value::Object(body)
    }

    /// Streams the answer to `request`, retrying per the settings.
    pub async fn complete(
        &self,
        request: &ChatRequest<'_>,
        events: &UnboundedSender<StreamEvent>,
    ) -> Result<Completion, LlmError> {
        let body = self.request_body(request).to_string().into_bytes();
        http::complete(&self.http, &self.endpoint, &self.headers, body, &self.settings, events)
            .await
    }
}

/// The history as the `messages` array: messages with nothing to send left out, consecutive
/// messages of one role merged, each then laid out as [`wire_message`] does.
pub fn wire_messages(history: &History) -> Vec<Value> {
    let mut out = Vec::with_capacity(history.len());
    // A message with nothing to send (an empty answer) would be refused, and dropping it may
    // leave two turns of one role side by side, so it goes before the merging.
    let mut messages =
        history.iter().filter(|message| message.content.iter().any(is_sent)).peekable();
    while let Some(first) = messages.next() {
        if messages.peek().is_none_or(|next| next.role != first.role) {
            out.push(wire_message(first));
            continue;
        }
        let mut blocks: Vec<&ContentBlock> = first.content.iter().collect();
        while let Some(next) = messages.next_if(|next| next.role == first.role) {
            blocks.extend(&next.content);
        }
        out.push(wire_blocks(first.role, blocks.into_iter()));
    }
    out
}

/// One message as the API takes it: `tool_result` blocks first, then text and the reminder.
pub fn wire_message(message: &Message) -> Value {
    wire_blocks(message.role, message.content.iter())
}

fn wire_blocks<'a, I>(role: Role, blocks: I) -> Value
where
    I: Iterator<Item = &'a ContentBlock> + Clone,
{
    let is_result = |block: &&ContentBlock| matches!(block, ContentBlock::ToolResult { .. });
    let results = blocks.clone().filter(is_result);
    let others = blocks.filter(|block| !is_result(block));
    let content: Vec<Value> = results.chain(others).filter_map(wire_block).collect();
    let role = match role {
        Role::User => "user",
        Role::Assistant => "assistant",
    };
    json!({ "role": role, "content": content })
}

/// Whether a block goes on the wire: the API refuses text blocks that are empty or blank.
fn is_sent(block: &ContentBlock) -> bool {
    match block {
        ContentBlock::Text { text } | ContentBlock::Reminder { text } => !text.trim().is_empty(),
        ContentBlock::ToolUse { .. } | ContentBlock::ToolResult { .. } => true,
    }
}

fn wire_block(block: &ContentBlock) -> Option<Value> {
    if !is_sent(block) {
        return None;
    }
    Some(match block {
        ContentBlock::Text { text } | ContentBlock::Reminder { text } => {
            json!({ "type": "text", "text": text })
        }
        ContentBlock::ToolUse { id, name, input } => {
            json!({ "type": "tool_use", "id": id, "name": name, "input": input })
        }
        ContentBlock::ToolResult { tool_use_id, content, is_error } => {
            let mut result = json!({
                "type": "tool_result",
                "tool_use_id": tool_use_id,
                "content": content,
            });
            if *is_error {
                result["is_error"] = Value::Bool(true);
            }
            result
        }
    })
}

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
        if let Some(input) = usage.input_tokens {
            // Cached prompt tokens are still prompt: count them so the total reflects the context.
            self.usage.input_tokens = input
                .saturating_add(usage.cache_creation_input_tokens.unwrap_or(0))
                .saturating_add(usage.cache_read_input_tokens.unwrap_or(0));
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
                let _ = out.send(StreamEvent::ToolUseStart { id: id.clone(), name: name.clone() });
                let whole = block
                    .input
                    .filter(|input| input.as_object().is_some_and(|object| !object.is_empty()));
                Part::Tool { id, name, json: String::new(), whole }
            }
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
            stop_reason: self.stop_reason,
            usage: self.usage,
        })
    }
}
