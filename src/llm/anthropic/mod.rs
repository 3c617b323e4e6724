//! The Anthropic Messages API: `POST {base}/v1/messages` with `x-api-key` and
//! `anthropic-version`, the history as its `messages` array (`request`, `spans`) and the reading
//! of its event stream (`stream`).
//!
//! Wire rules kept here (docs/wire.md): user and assistant turns alternate, so consecutive
//! messages of one role are merged; in a user message the `tool_result` blocks come first and the
//! reminder is a `text` block after them; empty text blocks, which the API refuses, are left out.
//! The stream is complete only at `message_stop`; an `error` event mid-stream (`overloaded_error`,
//! `api_error`) fails the attempt so it is retried.

mod request;
pub mod spans;
mod stream;

pub use stream::StreamDecoder;

use super::client::HttpClient;
use super::error::LlmError;
use super::http;
use super::protocol::Protocol;
use super::types::{ChatRequest, WireFormat};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};

/// The API version keel speaks.
pub const API_VERSION: &str = "2023-06-01";

/// A client for one model behind the Anthropic Messages API.
pub type AnthropicClient = HttpClient<Anthropic>;

/// The Anthropic Messages protocol.
#[derive(Debug, Clone, Copy, Default)]
pub struct Anthropic;

impl Protocol for Anthropic {
    type Decoder = StreamDecoder;

    const NAME: &'static str = "anthropic";
    const WIRE: WireFormat = WireFormat::Anthropic;
    const PATH: &'static str = "/v1/messages";

    fn headers(&self, api_key: &str) -> Result<HeaderMap, LlmError> {
        let mut headers = HeaderMap::new();
        headers.insert(
            HeaderName::from_static("x-api-key"),
            http::secret_header(api_key, Self::KEY_VAR)?,
        );
        headers.insert(
            HeaderName::from_static("anthropic-version"),
            HeaderValue::from_static(API_VERSION),
        );
        Ok(headers)
    }

    fn encode(&self, model: &str, request: &ChatRequest<'_>) -> serde_json::Result<Vec<u8>> {
        request::encode(model, request)
    }

    fn not_found_hint(&self, base_url: &str) -> String {
        if base_url.trim_end_matches('/').ends_with("/v1") {
            format!("; {} should not end in /v1", Self::BASE_VAR)
        } else {
            String::new()
        }
    }
}
