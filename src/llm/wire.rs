//! The request as each protocol carries it, for front ends: the whole body (`encode`, the one
//! encoding, which the inspector shows), the `messages` array message by message (tests hold
//! what a server received to it), and recorded streams decoded.

use super::error::{LlmError, StreamError};
use super::protocol::Protocol;
use super::sse;
use super::types::{ChatRequest, Completion, StreamEvent, WireFormat, WireSpan};
use super::{anthropic, openai};
use crate::message::History;
use bytes::Bytes;
use futures_util::Stream;
use serde_json::Value;
use std::time::Duration;
use tokio::sync::mpsc::UnboundedSender;

/// A whole body decoded at once has no stall to watch for.
const NO_STALL: Duration = Duration::MAX;

impl WireFormat {
    /// The JSON body a request of this protocol sends for `model`: the one encoding there is,
    /// used by [`HttpClient::request_bytes`](super::HttpClient::request_bytes) and the inspector.
    pub fn encode(self, model: &str, request: &ChatRequest<'_>) -> Result<Vec<u8>, LlmError> {
        let body = match self {
            Self::Anthropic => anthropic::Anthropic.encode(model, request),
            Self::OpenAi => openai::OpenAi.encode(model, request),
        };
        body.map_err(|error| LlmError::Client(format!("cannot encode the request: {error}")))
    }

    /// The history exactly as this protocol's `messages` array carries it.
    pub fn messages(self, system: &str, history: &History) -> Vec<Value> {
        self.spans(system, history)
            .iter()
            .filter_map(|span| self.message_at(system, history, span))
            .collect()
    }

    /// Where each message of the `messages` array comes from, in order.
    pub fn spans(self, system: &str, history: &History) -> Vec<WireSpan> {
        match self {
            Self::Anthropic => anthropic::spans::wire_spans(history),
            Self::OpenAi => openai::spans::wire_spans(system, history),
        }
    }

    /// The wire message at `span` (one of [`WireFormat::spans`] of the same history).
    pub fn message_at(self, system: &str, history: &History, span: &WireSpan) -> Option<Value> {
        match self {
            Self::Anthropic => anthropic::spans::wire_message_at(history, span),
            Self::OpenAi => openai::spans::wire_message_at(system, history, span),
        }
    }

    /// Decodes a whole streamed answer of this protocol from its body's chunks, split anywhere.
    pub async fn decode<S, B, E>(
        self,
        chunks: S,
        out: &UnboundedSender<StreamEvent>,
    ) -> Result<Completion, StreamError>
    where
        S: Stream<Item = Result<B, E>>,
        B: Into<Bytes>,
        E: Into<StreamError>,
    {
        match self {
            Self::Anthropic => {
                sse::drive_within(anthropic::StreamDecoder::default(), chunks, out, NO_STALL).await
            }
            Self::OpenAi => {
                sse::drive_within(openai::StreamDecoder::default(), chunks, out, NO_STALL).await
            }
        }
    }
}
