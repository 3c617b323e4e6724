//! Reading a Chat Completions event stream: `choices[0].delta` with `content`, reasoning
//! (`reasoning_content` or `reasoning`) and `tool_calls[]` fragments keyed by `index`, then
//! `finish_reason`, usage, and `data: [DONE]`.

use crate::llm::error::{StreamError, truncate};
use crate::llm::sse::{EventDecoder, Flow};
use crate::llm::streaming_block::{Part, invalid_json};
use crate::llm::types::{Completion, StopReason, StreamEvent};
use crate::message::Usage;
use serde::Deserialize;
use serde_json::Value;
use std::borrow::Cow;
use tokio::sync::mpsc::UnboundedSender;

/// The data of the event that ends the stream.
const DONE: &str = "[DONE]";

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
    /// DeepSeek, vLLM, Qwen, Doubao, Kimi.
    #[serde(borrow)]
    reasoning_content: Option<Cow<'a, str>>,
    /// OpenRouter, Ollama, newer vLLM (which may send both names for the same text).
    #[serde(borrow)]
    reasoning: Option<Cow<'a, str>>,
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
    /// OpenAI, vLLM, and most others: `cached_tokens` of the prompt.
    prompt_tokens_details: Option<PromptDetails>,
    /// DeepSeek's own name for the cached part of the prompt.
    prompt_cache_hit_tokens: Option<u64>,
}

#[derive(Deserialize)]
struct PromptDetails {
    cached_tokens: Option<u64>,
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

    /// More reasoning: it all goes into one block, where the first of it came.
    fn reasoning(&mut self, more: &str) {
        if more.is_empty() {
            return;
        }
        match self.parts.iter_mut().find(|part| matches!(part, Part::Reasoning(_))) {
            Some(Part::Reasoning(text)) => text.push_str(more),
            _ => self.parts.push(Part::Reasoning(more.to_owned())),
        }
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
    StreamError::Server { kind, message: truncate(&message), retryable: !client_mistake }
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
            let cached = usage.prompt_tokens_details.and_then(|details| details.cached_tokens);
            self.usage = Usage {
                input_tokens: usage.prompt_tokens.unwrap_or(self.usage.input_tokens),
                output_tokens: usage.completion_tokens.unwrap_or(self.usage.output_tokens),
                cache_read_tokens: cached
                    .or(usage.prompt_cache_hit_tokens)
                    .unwrap_or(self.usage.cache_read_tokens),
                cache_write_tokens: 0,
            };
        }
        for choice in chunk.choices.into_iter().flatten().filter(|choice| choice.index == 0) {
            if let Some(delta) = choice.delta {
                if let Some(reasoning) = delta.reasoning_content.or(delta.reasoning) {
                    self.reasoning(&reasoning);
                }
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
            stop_reason: self
                .finish_reason
                .as_deref()
                .map_or_else(StopReason::default, StopReason::from_wire),
            usage: self.usage,
        })
    }
}
