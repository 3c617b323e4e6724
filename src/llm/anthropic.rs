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
use super::{ChatRequest, Completion, HttpSettings, LlmError, StreamEvent, WireFormat, WireSpan};
use crate::message::{ContentBlock, History, Message, Role, Usage};
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::borrow::Cow;
use std::fmt;
use std::ops::Range;
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

    /// The JSON body sent for `request`, serialised straight from the history (no `Value` tree
    /// in between: the body carries the whole history every round).
    pub fn request_bytes(&self, request: &ChatRequest<'_>) -> Result<Vec<u8>, LlmError> {
        let body = Body {
            model: &self.settings.model,
            max_tokens: request.max_tokens,
            stream: true,
            system: request.system,
            messages: wire(request.messages),
            tools: request
                .tools
                .iter()
                .map(|tool| WireTool {
                    name: &tool.name,
                    description: &tool.description,
                    input_schema: &tool.input_schema,
                })
                .collect(),
        };
        serde_json::to_vec(&body)
            .map_err(|error| LlmError::Client(format!("cannot encode the request: {error}")))
    }

    /// Streams the answer to `request`, retrying per the settings.
    pub async fn complete(
        &self,
        request: &ChatRequest<'_>,
        events: &UnboundedSender<StreamEvent>,
    ) -> Result<Completion, LlmError> {
        let body = self.request_bytes(request)?;
        http::complete(&self.http, &self.endpoint, &self.headers, body, &self.settings, events)
            .await
    }
}

/// A Messages API request body.
#[derive(Serialize)]
struct Body<'a> {
    model: &'a str,
    max_tokens: u32,
    stream: bool,
    #[serde(skip_serializing_if = "str::is_empty")]
    system: &'a str,
    messages: Vec<WireMessage<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<WireTool<'a>>,
}

#[derive(Serialize)]
struct WireTool<'a> {
    name: &'a str,
    description: &'a str,
    input_schema: &'a Value,
}

/// One message of the `messages` array, borrowing from the history.
#[derive(Debug, Serialize)]
struct WireMessage<'a> {
    role: &'static str,
    content: Vec<WireBlock<'a>>,
}

#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum WireBlock<'a> {
    Text {
        text: &'a str,
    },
    ToolUse {
        id: &'a str,
        name: &'a str,
        input: &'a Value,
    },
    ToolResult {
        tool_use_id: &'a str,
        content: &'a str,
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
    },
}

/// The history as the `messages` array: messages with nothing to send left out, consecutive
/// messages of one role merged, each then laid out as [`wire_message`] does.
pub fn wire_messages(history: &History) -> Vec<Value> {
    wire(history).iter().map(to_value).collect()
}

/// One message as the API takes it: `tool_result` blocks first, then text and the reminder.
pub fn wire_message(message: &Message) -> Value {
    to_value(&wire_blocks(message.role, message.content.iter()))
}

/// The inspector's copy of a wire message. Serialising strings and JSON values cannot fail.
fn to_value(message: &WireMessage<'_>) -> Value {
    serde_json::to_value(message).unwrap_or_default()
}

/// Where each wire message comes from: the runs of one role in the history, messages with
/// nothing to send left out (see [`wire`], which the inspector's test holds this to).
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
    Some(to_value(&wire_blocks(role, sent.iter().flat_map(|message| message.content.iter()))))
}

/// The `messages` array of a request: one pass, allocating only for the runs it merges.
fn wire(history: &History) -> Vec<WireMessage<'_>> {
    let mut out = Vec::with_capacity(history.len());
    // A message with nothing to send (an empty answer) would be refused, and dropping it may
    // leave two turns of one role side by side, so it goes before the merging.
    let mut messages = history.iter().filter(|message| is_sent_message(message)).peekable();
    while let Some(first) = messages.next() {
        if messages.peek().is_none_or(|next| next.role != first.role) {
            out.push(wire_blocks(first.role, first.content.iter()));
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

/// Whether a message has anything the API takes.
fn is_sent_message(message: &Message) -> bool {
    message.content.iter().any(is_sent)
}

fn wire_blocks<'a, I>(role: Role, blocks: I) -> WireMessage<'a>
where
    I: Iterator<Item = &'a ContentBlock> + Clone,
{
    let is_result = |block: &&ContentBlock| matches!(block, ContentBlock::ToolResult { .. });
    let results = blocks.clone().filter(is_result);
    let others = blocks.filter(|block| !is_result(block));
    let content = results.chain(others).filter_map(wire_block).collect();
    let role = match role {
        Role::User => "user",
        Role::Assistant => "assistant",
    };
    WireMessage { role, content }
}

/// Whether a block goes on the wire: the API refuses text blocks that are empty or blank.
fn is_sent(block: &ContentBlock) -> bool {
    match block {
        ContentBlock::Text { text } | ContentBlock::Reminder { text } => !text.trim().is_empty(),
        ContentBlock::ToolUse { .. } | ContentBlock::ToolResult { .. } => true,
    }
}

fn wire_block(block: &ContentBlock) -> Option<WireBlock<'_>> {
    if !is_sent(block) {
        return None;
    }
    Some(match block {
        ContentBlock::Text { text } | ContentBlock::Reminder { text } => WireBlock::Text { text },
        ContentBlock::ToolUse { id, name, input } => WireBlock::ToolUse { id, name, input },
        ContentBlock::ToolResult { tool_use_id, content, is_error } => {
            WireBlock::ToolResult { tool_use_id, content, is_error: *is_error }
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
