//! What a strict server checks in a history that may have been compacted: every tool call
//! answered in the very next message and no answer without its call (both protocols), and each
//! answer's reasoning sent back exactly as it came — Anthropic's signed `thinking` blocks,
//! DeepSeek's `reasoning_content` on a tool-call turn. The step an answer played is read from
//! its calls' ids (`toolu_7_0`: step 7), since a compacted history holds fewer answers than were
//! played.

use super::reasoning::thinking_block;
use super::{Protocol, Step};
use serde_json::Value;

/// Why a strict server would refuse `messages`; `None` when it would take them.
pub fn problem(protocol: Protocol, steps: &[Step], messages: &[Value]) -> Option<String> {
    match protocol {
        Protocol::Anthropic => anthropic(steps, messages),
        Protocol::OpenAi => openai(steps, messages),
    }
}

/// The step whose answer made the call with this id.
fn step_of<'a>(steps: &'a [Step], id: &str) -> Option<(usize, &'a Step)> {
    let number: usize = id.split('_').nth(1)?.parse().ok()?;
    Some((number, steps.get(number)?))
}

fn anthropic(steps: &[Step], messages: &[Value]) -> Option<String> {
    let mut owed: Vec<String> = Vec::new();
    for (at, message) in messages.iter().enumerate() {
        let blocks = message["content"].as_array().cloned().unwrap_or_default();
        let of_type = |kind: &str, field: &str| -> Vec<String> {
            blocks
                .iter()
                .filter(|block| block["type"] == kind)
                .filter_map(|block| block[field].as_str().map(str::to_owned))
                .collect()
        };
        let answered = of_type("tool_result", "tool_use_id");
        if answered != owed {
            return Some(format!(
                "messages.{at}: tool_result blocks {answered:?} where {owed:?} were owed"
            ));
        }
        owed = Vec::new();
        if message["role"] != "assistant" {
            continue;
        }
        owed = of_type("tool_use", "id");
        let Some((number, step)) = owed.first().and_then(|id| step_of(steps, id)) else {
            continue;
        };
        let expected: Vec<Value> =
            step.thinking.iter().map(|text| thinking_block(text, number)).collect();
        if !blocks.starts_with(&expected) {
            return Some(format!(
                "messages.{at}.content.0: Invalid `signature` in `thinking` block"
            ));
        }
    }
    (!owed.is_empty()).then(|| format!("tool_use ids {owed:?} without tool_result blocks"))
}

fn openai(steps: &[Step], messages: &[Value]) -> Option<String> {
    let mut owed: Vec<String> = Vec::new();
    for (at, message) in messages.iter().enumerate() {
        if message["role"] == "tool" {
            let id = message["tool_call_id"].as_str().unwrap_or_default();
            if owed.first().map(String::as_str) != Some(id) {
                return Some(format!("messages.{at}: a tool message for {id} no call is owed"));
            }
            owed.remove(0);
            continue;
        }
        if !owed.is_empty() {
            return Some(format!("messages.{at}: tool calls {owed:?} left without tool messages"));
        }
        if message["role"] != "assistant" {
            continue;
        }
        let calls = message["tool_calls"].as_array().cloned().unwrap_or_default();
        owed = calls.iter().filter_map(|call| call["id"].as_str().map(str::to_owned)).collect();
        let Some((_, step)) = owed.first().and_then(|id| step_of(steps, id)) else { continue };
        if let Some(thinking) = &step.thinking
            && message["reasoning_content"] != thinking.as_str()
        {
            return Some(format!(
                "Missing `reasoning_content` field in the assistant message at message index {at}."
            ));
        }
    }
    (!owed.is_empty()).then(|| format!("tool calls {owed:?} without tool messages"))
}
