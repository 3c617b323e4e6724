//! OpenAI-compatible Chat Completions: the request, the history as its `messages` array, and the
//! reading of its event stream.
//!
//! Wire rules kept here (DESIGN §3, §4): the system prompt is the first message; an assistant's
//! tool calls carry their `arguments` as a JSON string; each tool result is its own `tool`
//! message (starting with `Error: ` when it failed), followed by one `user` message holding the
//! reminder and any text typed after the results. The stream's tool calls arrive as fragments
//! keyed by `index`, the id and name only in the first; the answer is complete at `data: [DONE]`,
//! or at the end of the body once a `finish_reason` has arrived (some servers omit `[DONE]`).

use super::error::StreamError;
use super::http::{self, Endpoint};
use super::sse::{EventDecoder, Flow, Part, invalid_json};
use super::{ChatRequest, Completion, HttpSettings, LlmError, StreamEvent, WireFormat, WireSpan};
use crate::message::{ContentBlock, History, Message, Role, Usage};
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderValue};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::borrow::Cow;
use std::fmt;
use tokio::sync::mpsc::UnboundedSender;

const KEY_VAR: &str = "OPENAI_API_KEY";
const BASE_VAR: &str = "OPENAI_BASE_URL";
const COMPLETIONS_PATH: &str = "/chat/completions";
/// The data of the event that ends the stream.
const DONE: &str = "[DONE]";
/// What a failed tool result starts with, since this protocol has no error flag.
const ERROR_PREFIX: &str = "Error: ";
/// Between the text blocks of one user message, which this protocol sends as one string.
const TEXT_SEPARATOR: &str = "\n\n";

/// A client for one model behind an OpenAI-compatible Chat Completions API.
pub struct OpenAiClient {
    settings: HttpSettings,
    http: reqwest::Client,
    endpoint: Endpoint,
    headers: HeaderMap,
}

impl fmt::Debug for OpenAiClient {
    // By hand, so the key never reaches a log.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenAiClient")
            .field("url", &self.endpoint.url)
            .field("model", &self.settings.model)
            .finish_non_exhaustive()
    }
}

impl OpenAiClient {
    pub fn new(settings: HttpSettings) -> Result<Self, LlmError> {
        let url = http::join_url(&settings.base_url, COMPLETIONS_PATH, BASE_VAR)?;
        let not_found_hint = if settings.base_url.trim_end_matches('/').ends_with("/v1") {
            String::new()
        } else {
            format!("; {BASE_VAR} usually ends in /v1")
        };
        let mut headers = HeaderMap::new();
        headers.insert(
            AUTHORIZATION,
            http::secret_header(&format!("Bearer {}", settings.api_key), KEY_VAR)?,
        );
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
        Ok(Self {
            http: http::client(&settings)?,
            endpoint: Endpoint {
                url,
                wire: WireFormat::OpenAi,
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
            messages: wire(request.system, request.messages),
            stream: true,
            stream_options: StreamOptions { include_usage: true },
            max_tokens: request.max_tokens,
            tools: request
                .tools
                .iter()
                .map(|tool| WireTool {
                    kind: FUNCTION,
                    function: WireFunctionSpec {
                        name: &tool.name,
                        description: &tool.description,
                        parameters: &tool.input_schema,
                    },
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

/// The `type` of a tool and of a tool call.
const FUNCTION: &str = "function";

/// A Chat Completions request body.
#[derive(Serialize)]
struct Body<'a> {
    model: &'a str,
    messages: Vec<WireMessage<'a>>,
    stream: bool,
    stream_options: StreamOptions,
    max_tokens: u32,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<WireTool<'a>>,
}

#[derive(Serialize)]
struct StreamOptions {
    include_usage: bool,
}

#[derive(Serialize)]
struct WireTool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: WireFunctionSpec<'a>,
}

#[derive(Serialize)]
struct WireFunctionSpec<'a> {
    name: &'a str,
    description: &'a str,
    parameters: &'a Value,
}

/// One message of the `messages` array, borrowing from the history where it can.
#[derive(Debug, Serialize)]
#[serde(tag = "role", rename_all = "lowercase")]
enum WireMessage<'a> {
    System {
        content: &'a str,
    },
    User {
        content: String,
    },
    Assistant {
        /// `null` for a turn of only tool calls.
        content: Option<String>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<WireCall<'a>>,
    },
    Tool {
        tool_call_id: &'a str,
        content: Cow<'a, str>,
    },
}

#[derive(Debug, Serialize)]
struct WireCall<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    function: WireFunction<'a>,
}

#[derive(Debug, Serialize)]
struct WireFunction<'a> {
    name: &'a str,
    /// The input as a JSON string, as this protocol wants it.
    arguments: String,
}

/// The history as the `messages` array, the system prompt (when there is one) first.
pub fn wire_messages(system: &str, history: &History) -> Vec<Value> {
    wire(system, history).iter().map(to_value).collect()
}

/// The wire messages one history message becomes: one for an assistant turn; for a user turn a
/// `tool` message per result, then a `user` message for its text and reminder if it has any.
pub fn wire_message(message: &Message) -> Vec<Value> {
    let mut out = Vec::with_capacity(1);
    push_wire_message(message, &mut out);
    out.iter().map(to_value).collect()
}

/// The inspector's copy of a wire message. Serialising strings and JSON values cannot fail.
fn to_value(message: &WireMessage<'_>) -> Value {
    serde_json::to_value(message).unwrap_or_default()
}

/// The system prompt's message, then for each history message as many spans as it makes wire
/// messages (see [`wire_message`]).
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
                    matches!(block, ContentBlock::Text { text } | ContentBlock::Reminder { text } if !text.is_empty())
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

fn wire<'a>(system: &'a str, history: &'a History) -> Vec<WireMessage<'a>> {
    let mut out = Vec::with_capacity(history.len() + 1);
    if !system.is_empty() {
        out.push(WireMessage::System { content: system });
    }
    for message in history {
        push_wire_message(message, &mut out);
    }
    out
}

fn push_wire_message<'a>(message: &'a Message, out: &mut Vec<WireMessage<'a>>) {
    match message.role {
        Role::Assistant => out.push(wire_assistant(message)),
        Role::User => {
            let mut text = String::new();
            for block in &message.content {
                match block {
                    ContentBlock::ToolResult { tool_use_id, content, is_error } => {
                        out.push(WireMessage::Tool {
                            tool_call_id: tool_use_id,
                            content: result_text(content, *is_error),
                        })
                    }
                    ContentBlock::Text { text: more } | ContentBlock::Reminder { text: more } => {
                        if !text.is_empty() {
                            text.push_str(TEXT_SEPARATOR);
                        }
                        text.push_str(more);
                    }
                    ContentBlock::ToolUse { .. } => {}
                }
            }
            if !text.is_empty() {
                out.push(WireMessage::User { content: text });
            }
        }
    }
}

fn wire_assistant(message: &Message) -> WireMessage<'_> {
    let text = message.text();
    let tool_calls: Vec<WireCall<'_>> = message
        .tool_uses()
        .map(|(id, name, input)| WireCall {
            id,
            kind: FUNCTION,
            function: WireFunction { name, arguments: input.to_string() },
        })
        .collect();
    // With tool calls and no text, `content` is null; without tool calls it is the text.
    let content = (tool_calls.is_empty() || !text.is_empty()).then_some(text);
    WireMessage::Assistant { content, tool_calls }
}

fn result_text(content: &str, is_error: bool) -> Cow<'_, str> {
    if is_error && !content.starts_with("Error") {
        Cow::Owned(format!("{ERROR_PREFIX}{content}"))
    } else {
        Cow::Borrowed(content)
    }
}

/// Reads a Chat Completions event stream into a [`Completion`].
#[derive(Debug, Default)]
pub struct StreamDecoder {
    /// Text and tool calls in the order they started.
    parts: Vec<Part>,
    /// A tool call's stream `index` and its place in `parts`.
    tools: Vec<(u64, usize)>,
    finish_reason: Option<String>,
    usage: Usage,
}

#[derive(Deserialize)]
struct Chunk<'a> {
    #[serde(borrow)]
    choices: Option<Vec<Choice<'a>>>,
    usage: Option<WireUsage>,
    error: Option<Value>,
}

#[derive(Deserialize)]
struct Choice<'a> {
    #[serde(default)]
    index: u64,
    #[serde(borrow)]
    delta: Option<Delta<'a>>,
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct Delta<'a> {
    #[serde(borrow)]
    content: Option<Cow<'a, str>>,
    #[serde(borrow)]
    tool_calls: Option<Vec<ToolCallDelta<'a>>>,
}

#[derive(Deserialize)]
struct ToolCallDelta<'a> {
    index: Option<u64>,
    id: Option<String>,
    #[serde(borrow)]
    function: Option<FunctionDelta<'a>>,
}

#[derive(Deserialize)]
struct FunctionDelta<'a> {
    name: Option<String>,
    #[serde(borrow)]
    arguments: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct WireUsage {
    prompt_tokens: Option<u64>,
    completion_tokens: Option<u64>,
}

impl StreamDecoder {
    fn text(&mut self, more: &str, out: &UnboundedSender<StreamEvent>) {
        if more.is_empty() {
            return;
        }
        match self.parts.last_mut() {
            Some(Part::Text(text)) => text.push_str(more),
            _ => self.parts.push(Part::Text(more.to_owned())),
        }
        let _ = out.send(StreamEvent::TextDelta(more.to_owned()));
    }

    fn tool_call(&mut self, call: ToolCallDelta<'_>) {
        let call_id = call.id.filter(|id| !id.is_empty());
        let position = match call.index {
            Some(index) => {
                self.tools.iter().find(|(at, _)| *at == index).map(|(_, position)| *position)
            }
            // Servers that leave out `index` send each call whole, or continue the last one.
            None => match &call_id {
                Some(id) if !self.has_tool_id(id) => None,
                _ => self.tools.last().map(|(_, position)| *position),
            },
        };
        let (name, arguments) = match call.function {
            Some(function) => (function.name, function.arguments),
            None => (None, None),
        };
        let position = position.unwrap_or_else(|| {
            let index = call.index.unwrap_or(self.tools.len() as u64);
            self.tools.push((index, self.parts.len()));
            let id = call_id.clone().unwrap_or_else(|| format!("call_{}", self.tools.len()));
            self.parts.push(Part::Tool {
                id,
                name: String::new(),
                json: String::new(),
                whole: None,
            });
            self.parts.len() - 1
        });
        let Some(Part::Tool { name: known_name, json, .. }) = self.parts.get_mut(position) else {
            return;
        };
        if let Some(name) = name.filter(|name| !name.is_empty() && known_name.is_empty()) {
            *known_name = name;
        }
        if let Some(arguments) = arguments {
            json.push_str(&arguments);
        }
    }

    fn has_tool_id(&self, wanted: &str) -> bool {
        self.parts.iter().any(|part| matches!(part, Part::Tool { id, .. } if id == wanted))
    }
}

/// A mid-stream error object as a [`StreamError`]: retryable unless it names a client mistake.
fn server_error(error: &Value) -> StreamError {
    let kind = ["type", "code"]
        .iter()
        .find_map(|key| match error.get(key) {
            Some(Value::String(text)) => Some(text.clone()),
            Some(Value::Number(number)) => Some(number.to_string()),
            _ => None,
        })
        .unwrap_or_else(|| "an error".to_owned());
    let message = error
        .get("message")
        .and_then(Value::as_str)
        .map_or_else(|| error.to_string(), str::to_owned);
    let client_mistake = kind.starts_with("invalid_request")
        || kind.starts_with("authentication")
        || ["400", "401", "403", "404", "422"].contains(&kind.as_str());
    StreamError::Server {
        kind,
        message: super::error::truncate(&message),
        retryable: !client_mistake,
    }
}

impl EventDecoder for StreamDecoder {
    fn event(
        &mut self,
        name: &str,
        data: &str,
        out: &UnboundedSender<StreamEvent>,
    ) -> Result<Flow, StreamError> {
        if name != "message" && name != "error" {
            return Ok(Flow::Continue);
        }
        if data.trim() == DONE {
            return Ok(Flow::Done);
        }
        let chunk: Chunk<'_> =
            serde_json::from_str(data).map_err(|error| invalid_json(&error, data))?;
        if let Some(error) = chunk.error.filter(|error| !error.is_null()) {
            return Err(server_error(&error));
        }
        if name == "error" {
            return Err(server_error(&serde_json::from_str(data).unwrap_or(Value::Null)));
        }
        if let Some(usage) = chunk.usage {
            self.usage = Usage {
                input_tokens: usage.prompt_tokens.unwrap_or(self.usage.input_tokens),
                output_tokens: usage.completion_tokens.unwrap_or(self.usage.output_tokens),
            };
        }
        for choice in chunk.choices.into_iter().flatten().filter(|choice| choice.index == 0) {
            if let Some(delta) = choice.delta {
                if let Some(content) = delta.content {
                    self.text(&content, out);
                }
                for call in delta.tool_calls.into_iter().flatten() {
                    self.tool_call(call);
                }
            }
            if let Some(reason) = choice.finish_reason {
                self.finish_reason = Some(reason);
            }
        }
        Ok(Flow::Continue)
    }

    fn finish(self, ended: bool) -> Result<Completion, StreamError> {
        if !ended && self.finish_reason.is_none() {
            return Err(StreamError::Cut { expected: "finish_reason or [DONE]" });
        }
        Ok(Completion {
            content: self.parts.into_iter().filter_map(Part::into_block).collect(),
            stop_reason: self.finish_reason,
            usage: self.usage,
        })
    }
}
