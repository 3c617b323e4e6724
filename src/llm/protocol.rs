//! What makes one wire protocol different from another, and nothing more: where requests go,
//! which variables configure it, its headers, how a request is encoded and how its event stream
//! is decoded. [`HttpClient`](super::client::HttpClient) does everything else once, for both.

use super::error::LlmError;
use super::sse::EventDecoder;
use super::types::{ChatRequest, WireFormat};
use reqwest::header::HeaderMap;

/// One wire protocol spoken over HTTP with SSE streaming.
pub trait Protocol: Default + Send + Sync + 'static {
    /// Reads one streamed answer.
    type Decoder: EventDecoder + Default + Send;

    /// A short name for the status bar.
    const NAME: &'static str;
    /// How the inspector lays out the history.
    const WIRE: WireFormat;
    /// Appended to the base URL.
    const PATH: &'static str;
    /// The environment variable that holds the key (the wire format names it).
    const KEY_VAR: &'static str = Self::WIRE.key_variable();
    /// The environment variable that sets the base URL.
    const BASE_VAR: &'static str = Self::WIRE.base_url_variable();

    /// The headers every request carries besides the content type: the key, the version.
    fn headers(&self, api_key: &str) -> Result<HeaderMap, LlmError>;

    /// The JSON body of `request` for `model`.
    fn encode(&self, model: &str, request: &ChatRequest<'_>) -> serde_json::Result<Vec<u8>>;

    /// Advice for a 404 from `base_url` (a `/v1` too many or too few), starting with "; ", or
    /// empty.
    fn not_found_hint(&self, base_url: &str) -> String;
}
