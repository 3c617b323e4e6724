//! Reading a model's answer from a server-sent-events body.
//!
//! The framing — lines, `\r\n` endings, events cut anywhere across chunks — is
//! `eventsource-stream`'s. This module feeds it the body in bounded pieces (its buffer handling
//! costs time in proportion to the chunk size for every line, so one 10 MB chunk would be
//! quadratic), hands each event to the protocol's [`EventDecoder`] (`anthropic::StreamDecoder`,
//! `openai::StreamDecoder`), and decides what the way the stream ended means: the end marker is
//! a finished answer, an end without it is a cut, no bytes at all an empty answer.
//!
//! [`decode`] is the entry point for a whole body; [`with_idle_timeout`] turns a byte stream that
//! goes quiet into an error.

use super::error::StreamError;
use super::{Completion, WireFormat, anthropic, openai};
use crate::message::ContentBlock;
use eventsource_stream::{EventStreamError, Eventsource};
use futures_util::{Stream, StreamExt, stream};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::sync::mpsc::UnboundedSender;

use super::StreamEvent;

/// The largest piece of body handed to the SSE parser at once.
pub const PIECE_BYTES: usize = 2048;

/// What a decoder wants after an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    /// Keep reading.
    Continue,
    /// The protocol's end marker arrived: the answer is complete.
    Done,
}

/// One protocol's reading of an event stream.
pub trait EventDecoder {
    /// Handles one event (`name` is `message` when the server sent no `event:` line), reporting
    /// progress on `out`.
    fn event(
        &mut self,
        name: &str,
        data: &str,
        out: &UnboundedSender<StreamEvent>,
    ) -> Result<Flow, StreamError>;

    /// The answer so far. `ended` says whether the end marker arrived; without it, the decoder
    /// decides whether the stream may end here or was cut.
    fn finish(self, ended: bool) -> Result<Completion, StreamError>;
}

/// Decodes a whole streamed answer of the given protocol from its body's chunks, split anywhere.
/// Text and tool starts are reported on `out` as they arrive.
pub async fn decode<S, B, E>(
    wire: WireFormat,
    chunks: S,
    out: &UnboundedSender<StreamEvent>,
) -> Result<Completion, StreamError>
where
    S: Stream<Item = Result<B, E>>,
    B: AsRef<[u8]>,
    E: Into<StreamError>,
{
    match wire {
        WireFormat::Anthropic => drive(anthropic::StreamDecoder::default(), chunks, out).await,
        WireFormat::OpenAi => drive(openai::StreamDecoder::default(), chunks, out).await,
    }
}

/// Runs `decoder` over the events of `chunks` until the end marker, the end of the body, or an
/// error.
pub async fn drive<D, S, B, E>(
    mut decoder: D,
    chunks: S,
    out: &UnboundedSender<StreamEvent>,
) -> Result<Completion, StreamError>
where
    D: EventDecoder,
    S: Stream<Item = Result<B, E>>,
    B: AsRef<[u8]>,
    E: Into<StreamError>,
{
    let body_bytes = AtomicUsize::new(0);
    let counted = chunks.inspect(|chunk| {
        if let Ok(chunk) = chunk {
            body_bytes.fetch_add(chunk.as_ref().len(), Ordering::Relaxed);
        }
    });
    let mut events = std::pin::pin!(pieces(counted).eventsource());
    let mut any_event = false;
    while let Some(event) = events.next().await {
        let event = event.map_err(framing_error)?;
        any_event = true;
        if decoder.event(&event.event, &event.data, out)? == Flow::Done {
            return decoder.finish(true);
        }
    }
    if !any_event {
        let bytes = body_bytes.load(Ordering::Relaxed);
        return Err(if bytes == 0 {
            StreamError::Empty
        } else {
            StreamError::Framing(format!("{bytes} bytes of body but not one event"))
        });
    }
    decoder.finish(false)
}

/// Ends `chunks` with [`StreamError::Idle`] when no chunk arrives for `idle`, and after the first
/// error.
pub fn with_idle_timeout<S, B, E>(
    chunks: S,
    idle: Duration,
) -> impl Stream<Item = Result<B, StreamError>>
where
    S: Stream<Item = Result<B, E>>,
    E: Into<StreamError>,
{
    stream::unfold(Some(Box::pin(chunks)), move |chunks| async move {
        let mut chunks = chunks?;
        match tokio::time::timeout(idle, chunks.next()).await {
            Ok(Some(Ok(chunk))) => Some((Ok(chunk), Some(chunks))),
            Ok(Some(Err(error))) => Some((Err(error.into()), None)),
            Ok(None) => None,
            Err(_elapsed) => Some((Err(StreamError::Idle(idle)), None)),
        }
    })
}

fn framing_error<E: Into<StreamError>>(error: EventStreamError<E>) -> StreamError {
    match error {
        EventStreamError::Transport(error) => error.into(),
        EventStreamError::Utf8(_) => StreamError::Framing("the body is not valid UTF-8".to_owned()),
        EventStreamError::Parser(error) => StreamError::Framing(format!(
            "unparsable line: {}",
            super::error::truncate(&error.input)
        )),
    }
}

/// A slice of a shared chunk, so large chunks can be handed on in pieces without copying.
struct Piece<B> {
    chunk: Arc<B>,
    start: usize,
    end: usize,
}

impl<B: AsRef<[u8]>> AsRef<[u8]> for Piece<B> {
    fn as_ref(&self) -> &[u8] {
        let bytes: &[u8] = (*self.chunk).as_ref();
        bytes.get(self.start..self.end).unwrap_or_default()
    }
}

impl<B> Piece<B> {
    /// The first [`PIECE_BYTES`] of this piece, and the rest if there is any.
    fn split(self) -> (Self, Option<Self>) {
        let mid = self.start + PIECE_BYTES;
        if mid >= self.end {
            return (self, None);
        }
        let head = Self {
            chunk: Arc::clone(&self.chunk),
            start: self.start,
            end: mid,
        };
        let tail = Self { start: mid, ..self };
        (head, Some(tail))
    }
}

/// `chunks`, with every chunk longer than [`PIECE_BYTES`] handed on in pieces of that size.
fn pieces<S, B, E>(chunks: S) -> impl Stream<Item = Result<Piece<B>, E>>
where
    S: Stream<Item = Result<B, E>>,
    B: AsRef<[u8]>,
{
    stream::unfold(
        (Box::pin(chunks), None::<Piece<B>>),
        |(mut chunks, mut rest)| async move {
            loop {
                if let Some(piece) = rest.take() {
                    let (head, tail) = piece.split();
                    return Some((Ok(head), (chunks, tail)));
                }
                match chunks.next().await? {
                    Ok(chunk) => {
                        let end = chunk.as_ref().len();
                        if end > 0 {
                            rest = Some(Piece {
                                chunk: Arc::new(chunk),
                                start: 0,
                                end,
                            });
                        }
                    }
                    Err(error) => return Some((Err(error), (chunks, None))),
                }
            }
        },
    )
}

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
    /// A block keel does not use (thinking, server tools); its deltas are dropped.
    Ignored,
}

impl Part {
    /// The finished block; empty text and ignored blocks are left out.
    pub(crate) fn into_block(self) -> Option<ContentBlock> {
        match self {
            Self::Text(text) if text.is_empty() => None,
            Self::Text(text) => Some(ContentBlock::Text { text }),
            Self::Tool {
                id,
                name,
                json,
                whole,
            } => {
                let input = match whole {
                    Some(input) if json.trim().is_empty() => input,
                    _ => super::tool_input::parse(&json),
                };
                Some(ContentBlock::ToolUse { id, name, input })
            }
            Self::Ignored => None,
        }
    }
}

/// The error for a `data:` field that should be JSON and is not.
pub(crate) fn invalid_json(error: &serde_json::Error, data: &str) -> StreamError {
    StreamError::InvalidJson {
        detail: error.to_string(),
        snippet: super::error::truncate(data),
    }
}
