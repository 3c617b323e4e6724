//! OpenAI-compatible Chat Completions (OpenAI, DeepSeek, Doubao, Ollama, vLLM, …):
//! `POST {base}/chat/completions` with `Authorization: Bearer`, the history as its `messages`
//! array (`request`, `spans`) and the reading of its event stream (`stream`).
//!
//! Wire rules kept here (docs/wire.md): the system prompt is the first message; an assistant's
//! tool calls carry their `arguments` as a JSON string; each tool result is its own `tool`
//! message (starting with `Error: ` when it failed), followed by one `user` message holding the
//! reminder and any text typed after the results. The stream's tool calls arrive as fragments
//! keyed by `index`, the id and name only in the first; the answer is complete at `data: [DONE]`,
//! or at the end of the body once a `finish_reason` has arrived (some servers omit `[DONE]`).

mod request;
pub mod spans;
mod stream;

pub use stream::StreamDecoder;

use super::client::HttpClient;
use super::error::LlmError;
use super::http;
use super::protocol::Protocol;
use super::types::{ChatRequest, WireFormat};
use reqwest::header::{AUTHORIZATION, HeaderMap};

/// A client for one model behind an OpenAI-compatible Chat Completions API.
pub type OpenAiClient = HttpClient<OpenAi>;

/// The Chat Completions protocol.
#[derive(Debug, Clone, Copy, Default)]
pub struct OpenAi;

impl Protocol for OpenAi {
    type Decoder = StreamDecoder;

    const NAME: &'static str = "openai";
    const WIRE: WireFormat = WireFormat::OpenAi;
    const PATH: &'static str = "/chat/completions";

    fn headers(&self, api_key: &str) -> Result<HeaderMap, LlmError> {
        let mut headers = HeaderMap::new();
        headers.insert(
            AUTHORIZATION,
            http::secret_header(&format!("Bearer {api_key}"), Self::KEY_VAR)?,
        );
        Ok(headers)
    }

    fn encode(&self, model: &str, request: &ChatRequest<'_>) -> serde_json::Result<Vec<u8>> {
        request::encode(model, request)
    }

    fn not_found_hint(&self, base_url: &str) -> String {
        if base_url.trim_end_matches('/').ends_with("/v1") {
            String::new()
        } else {
            format!("; {} usually ends in /v1", Self::BASE_VAR)
        }
    }
}
