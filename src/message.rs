//! The provider-neutral conversation history.
//!
//! keel stores the conversation once, in this shape, and each provider translates it to its own wire
//! format when it sends a request (see `llm::anthropic::wire_messages` and `llm::openai::wire_messages`).
//! The history is an `imbl::Vector`, so a snapshot of it is a pointer copy whatever its length.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The whole conversation, shared cheaply between the agent's worker and its front ends.
pub type History = imbl::Vector<Message>;

/// Who said a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    User,
    Assistant,
}

/// One piece of a message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentBlock {
    /// Plain text: what the person typed, or what the model answered.
    Text { text: String },
    /// The model asks for a tool to run.
    ToolUse { id: String, name: String, input: Value },
    /// keel's answer to one `ToolUse`.
    ToolResult {
        tool_use_id: String,
        content: String,
        #[serde(default)]
        is_error: bool,
    },
    /// keel's nudge to update the board. Sent as plain text after the tool results; kept apart so
    /// front ends can show it as a system note rather than as something the person typed.
    Reminder { text: String },
    /// The model's reasoning before its answer (Anthropic extended thinking), kept byte for byte
    /// with its signature: the API checks it when the block is sent back, in place.
    Thinking {
        thinking: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signature: Option<String>,
    },
    /// Reasoning the provider encrypted; sent back as it came.
    RedactedThinking { data: String },
    /// Reasoning an OpenAI-compatible server streamed (`reasoning_content` or `reasoning`).
    /// Sent back on the assistant's tool-call turns, where DeepSeek's thinking mode needs it.
    Reasoning { text: String },
    /// keel's own words to the model, not the person's: asking it to go on with an answer cut
    /// at the output limit. Sent as text; front ends show it as a system note.
    Note { text: String },
}

/// One turn of the conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    pub content: Vec<ContentBlock>,
}

impl Message {
    /// A message the person typed.
    pub fn user_text(text: impl Into<String>) -> Self {
        Self { role: Role::User, content: vec![ContentBlock::Text { text: text.into() }] }
    }

    /// A message from the model.
    pub fn assistant(content: Vec<ContentBlock>) -> Self {
        Self { role: Role::Assistant, content }
    }

    /// The text blocks of this message joined together (tool blocks and reminders left out).
    pub fn text(&self) -> String {
        let mut out = String::new();
        for block in &self.content {
            if let ContentBlock::Text { text } = block {
                if !out.is_empty() {
                    out.push('\n');
                }
                out.push_str(text);
            }
        }
        out
    }

    /// The tool calls this message asks for, in order.
    pub fn tool_uses(&self) -> impl Iterator<Item = (&str, &str, &Value)> {
        self.content.iter().filter_map(|block| match block {
            ContentBlock::ToolUse { id, name, input } => Some((id.as_str(), name.as_str(), input)),
            _ => None,
        })
    }

    /// The reasoning of this message, joined, and whether some of it was redacted.
    pub fn thinking(&self) -> (String, bool) {
        let mut out = String::new();
        let mut redacted = false;
        for block in &self.content {
            match block {
                ContentBlock::Thinking { thinking, .. }
                | ContentBlock::Reasoning { text: thinking }
                    if !thinking.trim().is_empty() =>
                {
                    if !out.is_empty() {
                        out.push_str("\n\n");
                    }
                    out.push_str(thinking);
                }
                ContentBlock::RedactedThinking { .. } => redacted = true,
                _ => {}
            }
        }
        (out, redacted)
    }

    /// Whether the person typed this message (as opposed to tool results keel sent back).
    pub fn is_typed_by_user(&self) -> bool {
        self.role == Role::User
            && self.content.iter().any(|block| matches!(block, ContentBlock::Text { .. }))
    }
}

/// Token counts as the provider reported them. `input_tokens` is the whole prompt, the part
/// read from or written to the provider's prompt cache included.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Prompt tokens read from the cache (billed at a fraction of the price).
    #[serde(default)]
    pub cache_read_tokens: u64,
    /// Prompt tokens written to the cache (Anthropic; billed at a premium).
    #[serde(default)]
    pub cache_write_tokens: u64,
}

impl Usage {
    pub fn add(&mut self, other: Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cache_read_tokens += other.cache_read_tokens;
        self.cache_write_tokens += other.cache_write_tokens;
    }

    /// The share of the prompt read from the cache, in whole percent; `None` when the provider
    /// reported no caching at all.
    pub fn cache_percent(&self) -> Option<u64> {
        if self.cache_read_tokens == 0 && self.cache_write_tokens == 0 {
            return None;
        }
        let input = self.input_tokens.max(self.cache_read_tokens).max(1);
        Some(self.cache_read_tokens.saturating_mul(100) / input)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn text_joins_text_blocks_only() {
        let message = Message::assistant(vec![
            ContentBlock::Text { text: "a".into() },
            ContentBlock::ToolUse { id: "t1".into(), name: "bash".into(), input: json!({}) },
            ContentBlock::Text { text: "b".into() },
        ]);
        assert_eq!(message.text(), "a\nb");
        assert_eq!(message.tool_uses().count(), 1);
    }

    #[test]
    fn blocks_round_trip_through_json() {
        let block = ContentBlock::ToolResult {
            tool_use_id: "t1".into(),
            content: "ok".into(),
            is_error: true,
        };
        let json = serde_json::to_value(&block).unwrap();
        assert_eq!(
            json,
            json!({"type": "tool_result", "tool_use_id": "t1", "content": "ok", "is_error": true})
        );
        assert_eq!(serde_json::from_value::<ContentBlock>(json).unwrap(), block);
    }

    #[test]
    fn thinking_blocks_keep_the_protocols_own_shape() {
        let signed = ContentBlock::Thinking { thinking: "hm".into(), signature: Some("s=".into()) };
        let json = serde_json::to_value(&signed).unwrap();
        assert_eq!(json, json!({"type": "thinking", "thinking": "hm", "signature": "s="}));
        assert_eq!(serde_json::from_value::<ContentBlock>(json).unwrap(), signed);
        let unsigned = ContentBlock::Thinking { thinking: "hm".into(), signature: None };
        assert_eq!(
            serde_json::to_value(&unsigned).unwrap(),
            json!({"type": "thinking", "thinking": "hm"})
        );
        let redacted = ContentBlock::RedactedThinking { data: "x".into() };
        let message = Message::assistant(vec![signed, redacted, unsigned]);
        assert_eq!(message.thinking(), ("hm\n\nhm".to_owned(), true));
        assert_eq!(message.text(), "");
    }
}
