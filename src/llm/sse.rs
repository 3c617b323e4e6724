//! Reading a model's answer from a server-sent-events body.
//!
//! The framing — lines, `\r\n` endings, events cut anywhere across chunks — is
//! `eventsource-stream`'s. This module feeds it the body in pieces of about [`PIECE_BYTES`], cut
//! after a line break: the parser copies the rest of its buffer for every line it takes, so one
//! 10 MB chunk would cost quadratic time, and a piece that ends mid-line is parsed twice. It hands
//! each event to the protocol's [`EventDecoder`] (`anthropic::StreamDecoder`,
//! `openai::StreamDecoder`) and decides what the end of the stream means: the end marker is a
//! finished answer, an end without it a cut, no bytes at all an empty answer. The content blocks
//! both decoders assemble (`Part`) live here too.
//!
//! [`decode`] is the entry point for a whole body; [`with_idle_timeout`] turns a byte stream that
//! goes quiet into an error.

use super::error::StreamError;
use super::{Completion, StreamEvent, WireFormat, anthropic, openai};
use crate::message::ContentBlock;
use eventsource_stream::{EventStreamError, Eventsource};
use futures_util::{Stream, StreamExt, stream};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll, ready};
use std::time::Duration;
use tokio::sync::mpsc::UnboundedSender;

/// The size of the pieces of body handed to the SSE parser (longer only for a longer line).
pub const PIECE_BYTES: usize = 1024;
/// The most body read without a complete event before the stream counts as malformed. Real
/// events are a few hundred bytes; the parser's cost for one event grows with its square.
pub const MAX_EVENT_BYTES: usize = 4 << 20;

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
    let counts = Counts::default();
    let mut events = std::pin::pin!(Pieces::new(chunks, &counts).eventsource());
    let mut any_event = false;
    while let Some(event) = events.next().await {
        let event = event.map_err(framing_error)?;
        counts.since_event.store(0, Ordering::Relaxed);
        any_event = true;
        if decoder.event(&event.event, &event.data, out)? == Flow::Done {
            return decoder.finish(true);
        }
    }
    if counts.since_event.load(Ordering::Relaxed) > MAX_EVENT_BYTES {
        return Err(StreamError::Framing(format!(
            "more than {} MiB without a complete event",
            MAX_EVENT_BYTES >> 20
        )));
    }
    if !any_event {
        let bytes = counts.total.load(Ordering::Relaxed);
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

impl<B: AsRef<[u8]>> Piece<B> {
    /// The front of this piece, and the rest if there is any. The front ends after the last line
    /// break within [`PIECE_BYTES`]; a line longer than that goes whole, so it is parsed once.
    fn split(self) -> (Self, Option<Self>) {
        let bytes = self.as_ref();
        if bytes.len() <= PIECE_BYTES {
            return (self, None);
        }
        let (window, beyond) = bytes.split_at(PIECE_BYTES);
        let length = match window.iter().rposition(|byte| *byte == b'\n') {
            Some(at) => at + 1,
            None => beyond
                .iter()
                .position(|byte| *byte == b'\n')
                .map_or(bytes.len(), |at| PIECE_BYTES + at + 1),
        };
        let mid = self.start + length;
        if mid >= self.end {
            return (self, None);
        }
        let head = Self { chunk: Arc::clone(&self.chunk), start: self.start, end: mid };
        let tail = Self { start: mid, ..self };
        (head, Some(tail))
    }
}

/// Bytes seen, shared between [`Pieces`] and the loop reading events.
#[derive(Default)]
struct Counts {
    total: AtomicUsize,
    /// Since the last event came out of the parser.
    since_event: AtomicUsize,
}

/// The body's chunks handed on as [`Piece`]s, counting the bytes; ends the body early when more
/// than [`MAX_EVENT_BYTES`] pass without an event.
struct Pieces<'a, S, B> {
    chunks: Pin<Box<S>>,
    rest: Option<Piece<B>>,
    counts: &'a Counts,
}

impl<'a, S, B> Pieces<'a, S, B> {
    fn new(chunks: S, counts: &'a Counts) -> Self {
        Self { chunks: Box::pin(chunks), rest: None, counts }
    }
}

impl<S, B, E> Stream for Pieces<'_, S, B>
where
    S: Stream<Item = Result<B, E>>,
    B: AsRef<[u8]>,
{
    type Item = Result<Piece<B>, E>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        loop {
            if let Some(piece) = this.rest.take() {
                let (head, tail) = piece.split();
                let pending =
                    this.counts.since_event.fetch_add(head.as_ref().len(), Ordering::Relaxed);
                if pending > MAX_EVENT_BYTES {
                    return Poll::Ready(None);
                }
                this.rest = tail;
                return Poll::Ready(Some(Ok(head)));
            }
            match ready!(this.chunks.as_mut().poll_next(cx)) {
                None => return Poll::Ready(None),
                Some(Err(error)) => return Poll::Ready(Some(Err(error))),
                Some(Ok(chunk)) => {
                    let end = chunk.as_ref().len();
                    this.counts.total.fetch_add(end, Ordering::Relaxed);
                    if end > 0 {
                        this.rest = Some(Piece { chunk: Arc::new(chunk), start: 0, end });
                    }
                }
            }
        }
    }
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
            Self::Tool { id, name, json, whole } => {
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
    StreamError::InvalidJson { detail: error.to_string(), snippet: super::error::truncate(data) }
}
