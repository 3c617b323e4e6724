//! Talking to language models: the provider-neutral request and response, and the providers.
//!
//! The agent loop builds a [`ChatRequest`] from the history and calls [`Provider::complete`]; the
//! provider streams the answer, reporting text as it arrives through [`StreamEvent`]s, retries what
//! is worth retrying (see `retry`), and returns the finished [`Completion`]. A partial answer is never
//! returned: a stream that breaks is retried from the start or ends in an [`LlmError`].
//!
//! One [`HttpClient`] serves every HTTP provider; what differs per wire protocol is a
//! [`Protocol`] (`anthropic`, `openai`: each a folder with its request encoding, inspector spans
//! and stream decoder). `sse` frames event streams and knows no protocol; `streaming_block` assembles the
//! content blocks both decoders build. The wire rules are written down in `docs/wire.md`.

/// Tokens of context window assumed for a model keel does not know (`config::window` knows the
/// families' own).
pub const DEFAULT_CONTEXT_WINDOW: u32 = 128_000;

pub mod anthropic;
mod client;
pub mod error;
mod http;
pub use http::install_tls;
pub mod openai;
pub mod overflow;
mod protocol;
mod provider;
pub mod retry;
mod routes;
pub mod scripted;
mod settings;
pub mod sse;
mod streaming_block;
pub mod tool_input;
mod types;
mod wire;

pub use client::HttpClient;
pub use error::{LlmError, StreamError};
pub use overflow::Overflow;
pub use protocol::Protocol;
pub use provider::Provider;
pub use routes::Routes;
pub use settings::HttpSettings;
pub use types::{
    ChatRequest, Completion, RequestShape, SentRequest, StopReason, StreamEvent, ToolSpec,
    WireFormat, WireSpan,
};
