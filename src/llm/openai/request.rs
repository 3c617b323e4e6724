//! The Chat Completions request body, serialised straight from the history: the system prompt
//! first, a `tool` message per result, the reminder and typed text in one `user` message after;
//! an assistant's tool-call turn carries its reasoning back as `reasoning_content`.

use crate::llm::types::ChatRequest;
use crate::message::{ContentBlock, History, Message, Role};
use serde::Serialize;
use serde_json::Value;
use std::borrow::Cow;

/// What a failed tool result starts with, since this protocol has no error flag.
const ERROR_PREFIX: &str = "Error: ";
/// Between the text blocks of one user message, which this protocol sends as one string.
const TEXT_SEPARATOR: &str = "\n\n";

/// The body sent for `request` (no `Value` tree in between: it carries the whole history every
/// round).
pub(super) fn encode(model: &str, request: &ChatRequest<'_>) -> serde_json::Result<Vec<u8>> {
    let body = Body {
        model,
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
}

/// The `type` of a tool and of a tool call.
const FUNCTION: &str = "function";

/// A Chat Completions request body. The history goes last, after everything that stays the
/// same, and only grows: each request begins with the bytes of the one before (less its end),
/// which is what servers that cache by prefix (vLLM, llama.cpp, DeepSeek, OpenAI) reuse.
#[derive(Serialize)]
struct Body<'a> {
    model: &'a str,
    stream: bool,
    stream_options: StreamOptions,
    max_tokens: u32,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<WireTool<'a>>,
    messages: Vec<WireMessage<'a>>,
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
pub(super) enum WireMessage<'a> {
    System {
        content: &'a str,
    },
    User {
        content: String,
    },
    Assistant {
        /// `null` for a turn of only tool calls.
        content: Option<String>,
        /// The reasoning before a turn of tool calls, which DeepSeek's thinking mode must get
        /// back (others ignore it). Never on a final answer, so each message's bytes stay the
        /// same from round to round.
        #[serde(skip_serializing_if = "Option::is_none")]
        reasoning_content: Option<String>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<WireCall<'a>>,
    },
    Tool {
        tool_call_id: &'a str,
        content: Cow<'a, str>,
    },
}

#[derive(Debug, Serialize)]
pub(super) struct WireCall<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    function: WireFunction<'a>,
}

#[derive(Debug, Serialize)]
pub(super) struct WireFunction<'a> {
    name: &'a str,
    /// The input as a JSON string, as this protocol wants it.
    arguments: String,
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

pub(super) fn push_wire_message<'a>(message: &'a Message, out: &mut Vec<WireMessage<'a>>) {
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
                    ContentBlock::Text { text: more }
                    | ContentBlock::Reminder { text: more }
                    | ContentBlock::Note { text: more } => {
                        if !text.is_empty() {
                            text.push_str(TEXT_SEPARATOR);
                        }
                        text.push_str(more);
                    }
                    ContentBlock::ToolUse { .. }
                    | ContentBlock::Thinking { .. }
                    | ContentBlock::RedactedThinking { .. }
                    | ContentBlock::Reasoning { .. } => {}
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
    let reasoning: String = message
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Reasoning { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    let reasoning_content = (!tool_calls.is_empty() && !reasoning.is_empty()).then_some(reasoning);
    WireMessage::Assistant { content, reasoning_content, tool_calls }
}

fn result_text(content: &str, is_error: bool) -> Cow<'_, str> {
    if is_error && !content.starts_with("Error") {
        Cow::Owned(format!("{ERROR_PREFIX}{content}"))
    } else {
        Cow::Borrowed(content)
    }
}
