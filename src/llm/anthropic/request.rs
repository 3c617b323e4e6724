//! The Messages API request body, serialised straight from the history: messages with nothing
//! to send left out, consecutive messages of one role merged, `tool_result` blocks first, and
//! thinking blocks sent back in place, as they came.
//!
//! Prompt caching: a `cache_control` breakpoint ends the stable prefix (on the system prompt,
//! or on the last tool when there is none: tools come first in the cached prefix), and two more
//! sit on the newest message and on the newest of the request before (the third message from
//! the end), so each request reads what the one before wrote. Three of the four allowed.

use crate::llm::types::{ChatRequest, ToolSpec};
use crate::message::{ContentBlock, History, Message, Role};
use serde::Serialize;
use serde_json::Value;

/// How far from the end the messages with a breakpoint are: the newest, and the newest of the
/// request before it (an assistant answer and a user turn ago).
const CACHED_FROM_END: [usize; 2] = [1, 3];

/// The body sent for `request` (no `Value` tree in between: it carries the whole history every
/// round).
pub(super) fn encode(model: &str, request: &ChatRequest<'_>) -> serde_json::Result<Vec<u8>> {
    let system: Vec<SystemBlock<'_>> = (!request.system.is_empty())
        .then_some(SystemBlock { kind: "text", text: request.system, cache_control: EPHEMERAL })
        .into_iter()
        .collect();
    let body = Body {
        model,
        max_tokens: request.max_tokens,
        stream: true,
        thinking: request
            .thinking_budget
            .map(|budget_tokens| Thinking { kind: "enabled", budget_tokens }),
        tools: wire_tools(request.tools, system.is_empty()),
        system,
        messages: wire(request.messages),
    };
    serde_json::to_vec(&body)
}

/// A Messages API request body. The history goes last, after everything that stays the same.
#[derive(Serialize)]
struct Body<'a> {
    model: &'a str,
    max_tokens: u32,
    stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    thinking: Option<Thinking>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<WireTool<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    system: Vec<SystemBlock<'a>>,
    messages: Vec<WireMessage<'a>>,
}

/// Extended thinking, asked for with a budget of output tokens.
#[derive(Serialize)]
struct Thinking {
    #[serde(rename = "type")]
    kind: &'static str,
    budget_tokens: u32,
}

/// A prompt-cache breakpoint: everything up to and including the block it is on is cached.
#[derive(Debug, Clone, Copy, Serialize)]
struct CacheControl {
    #[serde(rename = "type")]
    kind: &'static str,
}

const EPHEMERAL: Option<CacheControl> = Some(CacheControl { kind: "ephemeral" });

/// The system prompt as a block, which is what can carry a breakpoint.
#[derive(Serialize)]
struct SystemBlock<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    text: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    cache_control: Option<CacheControl>,
}

#[derive(Serialize)]
struct WireTool<'a> {
    name: &'a str,
    description: &'a str,
    input_schema: &'a Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    cache_control: Option<CacheControl>,
}

/// The tools; the last carries the prefix's breakpoint when no system prompt follows them.
fn wire_tools(tools: &[ToolSpec], prefix_ends_here: bool) -> Vec<WireTool<'_>> {
    let last = tools.len().saturating_sub(1);
    tools
        .iter()
        .enumerate()
        .map(|(index, tool)| WireTool {
            name: &tool.name,
            description: &tool.description,
            input_schema: &tool.input_schema,
            cache_control: (prefix_ends_here && index == last).then_some(EPHEMERAL).flatten(),
        })
        .collect()
}

/// One message of the `messages` array, borrowing from the history.
#[derive(Debug, Serialize)]
pub(super) struct WireMessage<'a> {
    role: &'static str,
    content: Vec<WireBlock<'a>>,
}

impl WireMessage<'_> {
    /// Puts a cache breakpoint on the last block, if it is one that can carry it (thinking
    /// blocks cannot).
    pub(super) fn mark_cached(&mut self) {
        if let Some(
            WireBlock::Text { cache_control, .. }
            | WireBlock::ToolUse { cache_control, .. }
            | WireBlock::ToolResult { cache_control, .. },
        ) = self.content.last_mut()
        {
            *cache_control = EPHEMERAL;
        }
    }
}

#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum WireBlock<'a> {
    Text {
        text: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    ToolUse {
        id: &'a str,
        name: &'a str,
        input: &'a Value,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    ToolResult {
        tool_use_id: &'a str,
        content: &'a str,
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
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
    for from_end in CACHED_FROM_END {
        if let Some(index) = out.len().checked_sub(from_end) {
            out[index].mark_cached();
        }
    }
    out
}

/// Where in the history the wire messages with a cache breakpoint start: the same messages
/// [`wire`] marks, found by walking back over the runs of one role at the end.
pub(super) fn cached_starts(history: &History) -> Vec<usize> {
    let deepest = CACHED_FROM_END.iter().copied().max().unwrap_or(0);
    let mut starts = Vec::with_capacity(deepest);
    let mut run: Option<(Role, usize)> = None;
    let sent = history.iter().enumerate().rev().filter(|(_, message)| is_sent_message(message));
    for (index, message) in sent {
        match run {
            Some((role, _)) if role == message.role => run = Some((role, index)),
            Some((_, start)) => {
                starts.push(start);
                if starts.len() == deepest {
                    run = None;
                    break;
                }
                run = Some((message.role, index));
            }
            None => run = Some((message.role, index)),
        }
    }
    starts.extend(run.map(|(_, start)| start));
    CACHED_FROM_END.iter().filter_map(|from_end| starts.get(from_end - 1).copied()).collect()
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
        | ContentBlock::Note { text } => WireBlock::Text { text, cache_control: None },
        ContentBlock::ToolUse { id, name, input } => {
            WireBlock::ToolUse { id, name, input, cache_control: None }
        }
        ContentBlock::ToolResult { tool_use_id, content, is_error } => {
            WireBlock::ToolResult { tool_use_id, content, is_error: *is_error, cache_control: None }
        }
        ContentBlock::Thinking { thinking, signature } => {
            WireBlock::Thinking { thinking, signature: signature.as_deref() }
        }
        ContentBlock::RedactedThinking { data } => WireBlock::RedactedThinking { data },
    })
}
