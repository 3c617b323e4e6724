//! Server-sent-events framing: from a body's chunks to events, for any protocol.
//!
//! The framing — lines, `\r\n` endings, events cut anywhere across chunks — is `sse-stream`'s
//! (a linear, memchr-based parser; `eventsource-stream`'s character-by-character one held the
//! whole decode to about 120 MB/s). [`drive_within`] hands each event to a protocol's [`EventDecoder`]
//! and decides what the end of the stream means: the end marker is a finished answer, an end
//! without it a cut, no bytes at all an empty answer. It also bounds what is buffered without a
//! complete event, and keeps the transport's own errors (an idle stream, a dropped connection) as
//! they were; after the end marker it reads the body to its end, so the connection can serve the
//! next request. [`with_idle_timeout`] turns a byte stream that goes quiet into an error. Nothing
//! here knows a protocol: the decoders live with their providers.

use super::error::StreamError;
use super::types::{Completion, StreamEvent};
use bytes::Bytes;
use futures_util::{Stream, StreamExt, stream};
use sse_stream::SseByteStream;
use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll, ready};
use std::time::Duration;
use tokio::sync::mpsc::UnboundedSender;

/// The most body read without a complete event before the stream counts as malformed. Real
/// events are a few hundred bytes.
pub const MAX_EVENT_BYTES: usize = 4 << 20;
/// The most body one response may have. A model's longest answers are well under a MiB; past
/// this the server is sending something else, and holding it would cost memory for nothing.
pub const MAX_RESPONSE_BYTES: usize = 32 << 20;
/// Events that only keep a connection open: they are no progress.
const KEEP_ALIVE_EVENTS: [&str; 1] = ["ping"];
/// The name of an event that came without an `event:` line.
const DEFAULT_EVENT: &str = "message";
/// After the end marker, how long the rest of the body (the closing chunk) may take. Reading it
/// to its end puts the connection back in the pool before the next request, which would
/// otherwise open a new one — a new TLS handshake against a real endpoint.
const DRAIN_AFTER_END: Duration = Duration::from_millis(200);
/// How often to yield to the runtime after the body ended, so the HTTP client's tasks put the
/// connection back in its pool first (each yield costs well under a microsecond).
const POOL_RETURN_YIELDS: usize = 8;

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

/// Runs `decoder` over the events of `chunks` until the end marker, the end of the body, or an
/// error: failing with [`StreamError::Stalled`] when no event that carries the answer
/// (keep-alives do not count, nor bytes that make no event) arrives for `stall`
/// (`Duration::MAX`: never), and with [`StreamError::TooLarge`] past [`MAX_RESPONSE_BYTES`].
pub async fn drive_within<D, S, B, E>(
    mut decoder: D,
    chunks: S,
    out: &UnboundedSender<StreamEvent>,
    stall: Duration,
) -> Result<Completion, StreamError>
where
    D: EventDecoder,
    S: Stream<Item = Result<B, E>>,
    B: Into<Bytes>,
    E: Into<StreamError>,
{
    let counts = Counts::default();
    let mut events = std::pin::pin!(SseByteStream::new(Counted::new(chunks, &counts)));
    let mut any_event = false;
    let mut deadline = tokio::time::Instant::now().checked_add(stall);
    loop {
        let next = match deadline {
            Some(at) => match tokio::time::timeout_at(at, events.next()).await {
                Ok(next) => next,
                Err(_elapsed) => return Err(StreamError::Stalled(stall)),
            },
            None => events.next().await,
        };
        let Some(event) = next else { break };
        let event = event.map_err(framing_error)?;
        counts.since_event.store(0, Ordering::Relaxed);
        // A block of only an id or a retry time is no event to dispatch.
        let Some(data) = event.data else { continue };
        any_event = true;
        let name = event.event.as_deref().unwrap_or(DEFAULT_EVENT);
        if !KEEP_ALIVE_EVENTS.contains(&name) {
            deadline = tokio::time::Instant::now().checked_add(stall);
        }
        if decoder.event(name, &data, out)? == Flow::Done {
            let _ = tokio::time::timeout(DRAIN_AFTER_END, async {
                while events.next().await.is_some() {}
            })
            .await;
            // Two tasks of the HTTP client return the connection to the pool once the body has
            // ended; let them run before the next request looks for one.
            for _ in 0..POOL_RETURN_YIELDS {
                tokio::task::yield_now().await;
            }
            return decoder.finish(true);
        }
    }
    if let Some(error) = counts.take_failure() {
        return Err(error);
    }
    if counts.total.load(Ordering::Relaxed) > MAX_RESPONSE_BYTES {
        return Err(StreamError::TooLarge(MAX_RESPONSE_BYTES));
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

fn framing_error(error: sse_stream::Error) -> StreamError {
    match error {
        sse_stream::Error::Utf8Parse(_) => {
            StreamError::Framing("the body is not valid UTF-8".to_owned())
        }
        other => StreamError::Framing(other.to_string()),
    }
}

/// What [`Counted`] saw, shared with the loop reading events.
#[derive(Default)]
struct Counts {
    total: AtomicUsize,
    /// Since the last event came out of the parser.
    since_event: AtomicUsize,
    /// The transport's error that ended the body, kept as it was.
    failure: Mutex<Option<StreamError>>,
}

impl Counts {
    fn take_failure(&self) -> Option<StreamError> {
        self.failure.lock().ok().and_then(|mut failure| failure.take())
    }
}

/// The body's chunks as `Bytes`, counted. Ends the body early when more than
/// [`MAX_EVENT_BYTES`] passed without an event, and at the transport's first error, which it
/// keeps in [`Counts`] rather than hand to the parser (which would box it away).
struct Counted<'a, S> {
    chunks: Pin<Box<S>>,
    counts: &'a Counts,
}

impl<'a, S> Counted<'a, S> {
    fn new(chunks: S, counts: &'a Counts) -> Self {
        Self { chunks: Box::pin(chunks), counts }
    }
}

impl<S, B, E> Stream for Counted<'_, S>
where
    S: Stream<Item = Result<B, E>>,
    B: Into<Bytes>,
    E: Into<StreamError>,
{
    type Item = Result<Bytes, Infallible>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let counts = self.counts;
        if counts.since_event.load(Ordering::Relaxed) > MAX_EVENT_BYTES
            || counts.total.load(Ordering::Relaxed) > MAX_RESPONSE_BYTES
        {
            return Poll::Ready(None);
        }
        match ready!(self.chunks.as_mut().poll_next(cx)) {
            None => Poll::Ready(None),
            Some(Err(error)) => {
                if let Ok(mut failure) = counts.failure.lock() {
                    *failure = Some(error.into());
                }
                Poll::Ready(None)
            }
            Some(Ok(chunk)) => {
                let chunk = chunk.into();
                counts.total.fetch_add(chunk.len(), Ordering::Relaxed);
                counts.since_event.fetch_add(chunk.len(), Ordering::Relaxed);
                Poll::Ready(Some(Ok(chunk)))
            }
        }
    }
}
