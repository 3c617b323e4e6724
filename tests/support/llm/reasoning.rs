//! The fake server's reasoning: the signed `thinking` and `redacted_thinking` blocks of an
//! Anthropic answer, and what a strict server refuses — an earlier answer's thinking not sent
//! back exactly (Anthropic checks the signature), or an assistant tool-call turn without its
//! `reasoning_content` (DeepSeek's thinking mode).

use super::{Protocol, Step};
use serde_json::{Value, json};

/// The signature the server gives the thinking of answer `index`: base64-like, as the API's.
pub fn signature(index: usize) -> String {
    format!("EqQBCkYIBRgCKkD{index}+/sig==")
}

/// The `thinking` block of answer `index` as the server sent it, and must get it back.
pub fn thinking_block(thinking: &str, index: usize) -> Value {
    json!({"type": "thinking", "thinking": thinking, "signature": signature(index)})
}

/// The `redacted_thinking` block holding `data`.
pub fn redacted_block(data: &str) -> Value {
    json!({"type": "redacted_thinking", "data": data})
}

/// Appends the Anthropic events of `step`'s reasoning, counting content blocks in `block`.
pub(super) fn anthropic_blocks(
    step: &Step,
    index: usize,
    block: &mut usize,
    events: &mut Vec<(Option<&'static str>, Value)>,
) {
    let delta = |block: usize, delta: Value| {
        (
            Some("content_block_delta"),
            json!({"type": "content_block_delta", "index": block, "delta": delta}),
        )
    };
    let stop = |block: usize| {
        (Some("content_block_stop"), json!({"type": "content_block_stop", "index": block}))
    };
    if let Some(thinking) = &step.thinking {
        let start = json!({"type": "thinking", "thinking": "", "signature": ""});
        events.push((
            Some("content_block_start"),
            json!({"type": "content_block_start", "index": *block, "content_block": start}),
        ));
        for word in thinking.split_inclusive(' ') {
            events.push(delta(*block, json!({"type": "thinking_delta", "thinking": word})));
        }
        events
            .push(delta(*block, json!({"type": "signature_delta", "signature": signature(index)})));
        events.push(stop(*block));
        *block += 1;
    }
    if let Some(data) = &step.redacted {
        events.push((Some("content_block_start"), json!({"type": "content_block_start", "index": *block, "content_block": redacted_block(data)})));
        events.push(stop(*block));
        *block += 1;
    }
}

/// The 400 body a strict server answers `messages` with, if an earlier answer's reasoning was
/// not sent back as the server requires; `None` when all is well.
pub(super) fn refusal(protocol: Protocol, steps: &[Step], messages: &[Value]) -> Option<Value> {
    let answers = messages.iter().enumerate().filter(|(_, message)| message["role"] == "assistant");
    for (answer, (at, message)) in answers.enumerate() {
        let step = steps.get(answer)?;
        match protocol {
            Protocol::Anthropic => {
                let mut expected = Vec::new();
                expected.extend(step.thinking.iter().map(|text| thinking_block(text, answer)));
                expected.extend(step.redacted.iter().map(|data| redacted_block(data)));
                let blocks = message["content"].as_array().cloned().unwrap_or_default();
                if !blocks.starts_with(&expected) {
                    return Some(
                        json!({"type": "error", "error": {"type": "invalid_request_error",
                        "message": format!("messages.{at}.content.0: Invalid `signature` in `thinking` block")}}),
                    );
                }
            }
            Protocol::OpenAi => {
                let calls = message["tool_calls"].as_array().is_some_and(|calls| !calls.is_empty());
                let Some(thinking) = step.thinking.as_deref().filter(|_| calls) else { continue };
                if message["reasoning_content"] != thinking {
                    return Some(json!({"error": {"message": format!(
                        "Missing `reasoning_content` field in the assistant message at message index {at}. \
                         For more information, please refer to https://api-docs.deepseek.com/guides/thinking_mode#tool-calls"),
                        "type": "invalid_request_error", "param": null, "code": "invalid_request_error"}}));
                }
            }
        }
    }
    None
}
