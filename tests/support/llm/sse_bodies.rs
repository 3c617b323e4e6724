//! The SSE bodies the scripted server answers with, one step at a time, shaped as each vendor
//! streams them: Anthropic's typed events and OpenAI's chunks, text word by word, tool input in
//! fragments, a cut answer stopping half way, and the usage each reports.

use super::{Step, reasoning};
use serde_json::{Value, json};

/// An SSE body from `(event name, data)` pairs; `None` names give data-only events.
pub fn sse(events: &[(Option<&str>, Value)]) -> String {
    let mut body = String::new();
    for (name, data) in events {
        if let Some(name) = name {
            body.push_str(&format!("event: {name}\n"));
        }
        body.push_str(&format!("data: {data}\n\n"));
    }
    body
}

/// Splits call `call`'s input JSON into a few fragments, the way models stream them; in a cut
/// answer the last call stops half way.
fn fragments(step: &Step, call: usize, input: &Value) -> Vec<String> {
    const PIECES: usize = 4;
    let text = input.to_string();
    let chars: Vec<char> = text.chars().collect();
    let size = chars.len().div_ceil(PIECES).max(1);
    let mut pieces: Vec<String> = chars.chunks(size).map(|chunk| chunk.iter().collect()).collect();
    if step.cut && call + 1 == step.tools.len() {
        pieces.truncate(PIECES / 2);
    }
    pieces
}

/// The usage of answer `index` as Anthropic reports it: the first writes the prompt to the
/// cache, the others read it back and write what was added.
fn cache_usage(index: usize) -> Value {
    let (read, written) = if index == 0 { (0, 900) } else { (900, 100) };
    json!({"input_tokens": 100, "output_tokens": 1, "cache_creation_input_tokens": written,
        "cache_read_input_tokens": read})
}

pub fn anthropic_sse(step: &Step, index: usize) -> String {
    anthropic_sse_with(step, index, None)
}

/// [`anthropic_sse`], reporting `prompt_tokens` (when given) as the prompt's size, no cache.
pub fn anthropic_sse_with(step: &Step, index: usize, prompt_tokens: Option<u64>) -> String {
    let usage = match prompt_tokens {
        Some(tokens) => json!({"input_tokens": tokens, "output_tokens": 1}),
        None => cache_usage(index),
    };
    let mut events = vec![(
        Some("message_start"),
        json!({"type": "message_start", "message": {"id": format!("msg_{index}"), "type": "message",
            "role": "assistant", "content": [], "model": "fake", "stop_reason": null,
            "usage": usage}}),
    )];
    let mut block = 0;
    reasoning::anthropic_blocks(step, index, &mut block, &mut events);
    if !step.text.is_empty() {
        events.push((Some("content_block_start"), json!({"type": "content_block_start", "index": block, "content_block": {"type": "text", "text": ""}})));
        events.push((Some("ping"), json!({"type": "ping"})));
        for word in step.text.split_inclusive(' ') {
            events.push((Some("content_block_delta"), json!({"type": "content_block_delta", "index": block, "delta": {"type": "text_delta", "text": word}})));
        }
        events.push((
            Some("content_block_stop"),
            json!({"type": "content_block_stop", "index": block}),
        ));
        block += 1;
    }
    for (call, (name, input)) in step.tools.iter().enumerate() {
        events.push((Some("content_block_start"), json!({"type": "content_block_start", "index": block,
            "content_block": {"type": "tool_use", "id": format!("toolu_{index}_{call}"), "name": name, "input": {}}})));
        for fragment in fragments(step, call, input) {
            events.push((Some("content_block_delta"), json!({"type": "content_block_delta", "index": block, "delta": {"type": "input_json_delta", "partial_json": fragment}})));
        }
        events.push((
            Some("content_block_stop"),
            json!({"type": "content_block_stop", "index": block}),
        ));
        block += 1;
    }
    let stop = match (step.cut, step.tools.is_empty()) {
        (true, _) => "max_tokens",
        (false, true) => "end_turn",
        (false, false) => "tool_use",
    };
    events.push((Some("message_delta"), json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null}, "usage": {"output_tokens": 20}})));
    events.push((Some("message_stop"), json!({"type": "message_stop"})));
    sse(&events)
}

pub fn openai_sse(step: &Step, index: usize) -> String {
    openai_sse_with(step, index, None)
}

/// [`openai_sse`], reporting `prompt_tokens` (when given) as the prompt's size, no cache.
pub fn openai_sse_with(step: &Step, index: usize, prompt_tokens: Option<u64>) -> String {
    let chunk = |delta: Value, finish: Value| {
        (
            None,
            json!({"id": format!("chatcmpl-{index}"), "object": "chat.completion.chunk", "created": 1,
            "model": "fake", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}),
        )
    };
    let mut events = vec![chunk(json!({"role": "assistant", "content": ""}), Value::Null)];
    for word in step.thinking.iter().flat_map(|thinking| thinking.split_inclusive(' ')) {
        events.push(chunk(json!({"reasoning_content": word, "content": null}), Value::Null));
    }
    for word in step.text.split_inclusive(' ') {
        events.push(chunk(json!({"content": word}), Value::Null));
    }
    for (call, (name, input)) in step.tools.iter().enumerate() {
        events.push(chunk(json!({"tool_calls": [{"index": call, "id": format!("call_{index}_{call}"), "type": "function",
            "function": {"name": name, "arguments": ""}}]}), Value::Null));
        for fragment in fragments(step, call, input) {
            events.push(chunk(
                json!({"tool_calls": [{"index": call, "function": {"arguments": fragment}}]}),
                Value::Null,
            ));
        }
    }
    let finish = match (step.cut, step.tools.is_empty()) {
        (true, _) => "length",
        (false, true) => "stop",
        (false, false) => "tool_calls",
    };
    events.push(chunk(json!({}), json!(finish)));
    let usage = match prompt_tokens {
        Some(tokens) => {
            json!({"prompt_tokens": tokens, "completion_tokens": 20, "total_tokens": tokens + 20})
        }
        None => json!({"prompt_tokens": 1000, "completion_tokens": 20, "total_tokens": 1020,
            "prompt_tokens_details": {"cached_tokens": if index == 0 { 0 } else { 900 }}}),
    };
    events.push((
        None,
        json!({"id": format!("chatcmpl-{index}"), "object": "chat.completion.chunk", "created": 1,
        "model": "fake", "choices": [], "usage": usage}),
    ));
    let mut body = sse(&events);
    body.push_str("data: [DONE]\n\n");
    body
}
