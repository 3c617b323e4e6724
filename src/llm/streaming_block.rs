//! The content blocks of an answer while it streams in, as both protocols' decoders assemble
//! them: text grows delta by delta, a tool call's input arrives as JSON fragments and is parsed
//! once the call is complete.

use super::error::{StreamError, truncate};
use super::tool_input;
use crate::message::ContentBlock;

/// One content block of an answer while it streams in.
#[derive(Debug)]
pub(crate) enum Part {
    Text(String),
    Tool {
        id: String,
        name: String,
        /// The input's JSON fragments, joined.
        json: String,
        /// Input given whole at the start (servers that do not stream it in fragments).
        whole: Option<serde_json::Value>,
    },
    /// Reasoning (Anthropic `thinking`), its text growing delta by delta, then its signature.
    Thinking {
        thinking: String,
        signature: Option<String>,
    },
    /// Encrypted reasoning, given whole at the start.
    Redacted(String),
    /// Reasoning from an OpenAI-compatible server, delta by delta.
    Reasoning(String),
    /// A block keel does not use (server tools); its deltas are dropped.
    Ignored,
}

impl Part {
    /// The finished block; empty text, empty unsigned thinking and ignored blocks are left out.
    pub(crate) fn into_block(self) -> Option<ContentBlock> {
        match self {
            Self::Text(text) if text.is_empty() => None,
            Self::Text(text) => Some(ContentBlock::Text { text }),
            Self::Tool { id, name, json, whole } => {
                let input = match whole {
                    Some(input) if json.trim().is_empty() => input,
                    _ => tool_input::parse(&json),
                };
                Some(ContentBlock::ToolUse { id, name, input })
            }
            Self::Thinking { thinking, signature } => (signature.is_some() || !thinking.is_empty())
                .then_some(ContentBlock::Thinking { thinking, signature }),
            Self::Redacted(data) => Some(ContentBlock::RedactedThinking { data }),
            Self::Reasoning(text) if text.is_empty() => None,
            Self::Reasoning(text) => Some(ContentBlock::Reasoning { text }),
            Self::Ignored => None,
        }
    }
}

/// The error for a `data:` field that should be JSON and is not.
pub(crate) fn invalid_json(error: &serde_json::Error, data: &str) -> StreamError {
    StreamError::InvalidJson { detail: error.to_string(), snippet: truncate(data) }
}
