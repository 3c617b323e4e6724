//! The Messages API request body, serialised straight from the history: messages with nothing
//! to send left out, consecutive messages of one role merged, `tool_result` blocks first, and
//! thinking blocks sent back in place, as they came.

use crate::llm::types::ChatRequest;
use crate::message::{ContentBlock, History, Message, Role};
use serde::Serialize;
use serde_json::Value;

/// The body sent for `request` (no `Value` tree in between: it carries the whole history every
/// round).
pub(super) fn encode(model: &str, request: &ChatRequest<'_>) -> serde_json::Result<Vec<u8>> {
    let body = Body {
        model,
        max_tokens: request.max_tokens,
        stream: true,
        thinking: request
            .thinking_budget
            .map(|budget_tokens| Thinking { kind: "enabled", budget_tokens }),
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
}

/// A Messages API request body.
#[derive(Serialize)]
struct Body<'a> {
    model: &'a str,
    max_tokens: u32,
    stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    thinking: Option<Thinking>,
    #[serde(skip_serializing_if = "str::is_empty")]
    system: &'a str,
    messages: Vec<WireMessage<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<WireTool<'a>>,
}

/// Extended thinking, asked for with a budget of output tokens.
#[derive(Serialize)]
struct Thinking {
    #[serde(rename = "type")]
    kind: &'static str,
    budget_tokens: u32,
}

#[derive(Serialize)]
struct WireTool<'a> {
    name: &'a str,
    description: &'a str,
    input_schema: &'a Value,
}

/// One message of the `messages` array, borrowing from the history.
#[derive(Debug, Serialize)]
pub(super) struct WireMessage<'a> {
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
    Thinking {
        thinking: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        signature: Option<&'a str>,
    },
    RedactedThinking {
        data: &'a str,
    },
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
pub(super) fn is_sent_message(message: &Message) -> bool {
    message.content.iter().any(is_sent)
}

pub(super) fn wire_blocks<'a, I>(role: Role, blocks: I) -> WireMessage<'a>
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

/// Whether a block goes on the wire: the API refuses text blocks that are empty or blank, and
/// has no place for another protocol's reasoning (a session resumed with another provider).
fn is_sent(block: &ContentBlock) -> bool {
    match block {
        ContentBlock::Reasoning { .. } => false,
        ContentBlock::Text { text }
        | ContentBlock::Reminder { text }
        | ContentBlock::Note { text } => !text.trim().is_empty(),
        ContentBlock::ToolUse { .. }
        | ContentBlock::ToolResult { .. }
        | ContentBlock::Thinking { .. }
        | ContentBlock::RedactedThinking { .. } => true,
    }
}

fn wire_block(block: &ContentBlock) -> Option<WireBlock<'_>> {
    if !is_sent(block) {
        return None;
    }
    Some(match block {
        ContentBlock::Reasoning { .. } => return None,
        ContentBlock::Text { text }
        | ContentBlock::Reminder { text }
        | ContentBlock::Note { text } => WireBlock::Text { text },
        ContentBlock::ToolUse { id, name, input } => WireBlock::ToolUse { id, name, input },
        ContentBlock::ToolResult { tool_use_id, content, is_error } => {
            WireBlock::ToolResult { tool_use_id, content, is_error: *is_error }
        }
        ContentBlock::Thinking { thinking, signature } => {
            WireBlock::Thinking { thinking, signature: signature.as_deref() }
        }
        ContentBlock::RedactedThinking { data } => WireBlock::RedactedThinking { data },
    })
}
