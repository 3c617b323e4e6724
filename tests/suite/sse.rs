//! The stream decoders through `sse-stream`, over chunks split every way: the same
//! recorded stream must give the same answer however it is cut and whatever its line endings,
//! and no input at all may make a decoder panic.

use crate::support::wire;
use futures_util::{StreamExt, stream};
use keel::llm::{Completion, StreamError, StreamEvent, WireFormat};
use proptest::prelude::*;
use std::convert::Infallible;
use tokio::sync::mpsc;
use wire::{ANTHROPIC_STREAM, OPENAI_STREAM, anthropic_completion, openai_completion};

/// Decodes `chunks` in order; returns the result and the events sent.
async fn decode_chunks(
    wire: WireFormat,
    chunks: Vec<Vec<u8>>,
) -> (Result<Completion, StreamError>, Vec<StreamEvent>) {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let body = stream::iter(chunks.into_iter().map(Ok::<_, Infallible>));
    let result = wire.decode(body, &tx).await;
    (result, wire::drain(&mut rx))
}

fn crlf(text: &str) -> String {
    text.replace('\n', "\r\n")
}

/// Every way of cutting `body` in two, every byte alone, and the whole: all give `expected`, and
/// the streamed text adds up to the answer's text.
async fn assert_split_invariant(wire: WireFormat, body: &str, expected: &Completion) {
    let bytes = body.as_bytes();
    for cut in 0..=bytes.len() {
        let chunks = vec![bytes[..cut].to_vec(), bytes[cut..].to_vec()];
        let (result, events) = decode_chunks(wire, chunks).await;
        assert_eq!(result.as_ref(), Ok(expected), "split at byte {cut}");
        let text: String = expected
            .content
            .iter()
            .filter_map(|block| match block {
                keel::message::ContentBlock::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(wire::streamed_text(&events), text, "split at byte {cut}");
    }
    let single_bytes = bytes.iter().map(|byte| vec![*byte]).collect();
    let (result, _) = decode_chunks(wire, single_bytes).await;
    assert_eq!(result.as_ref(), Ok(expected), "one byte per chunk");
}

#[tokio::test]
async fn anthropic_stream_survives_every_split() {
    assert_split_invariant(WireFormat::Anthropic, ANTHROPIC_STREAM, &anthropic_completion()).await;
}

#[tokio::test]
async fn anthropic_stream_with_crlf_endings_decodes_the_same() {
    assert_split_invariant(WireFormat::Anthropic, &crlf(ANTHROPIC_STREAM), &anthropic_completion())
        .await;
}

#[tokio::test]
async fn openai_stream_survives_every_split() {
    assert_split_invariant(WireFormat::OpenAi, OPENAI_STREAM, &openai_completion()).await;
}

#[tokio::test]
async fn openai_stream_with_crlf_endings_decodes_the_same() {
    assert_split_invariant(WireFormat::OpenAi, &crlf(OPENAI_STREAM), &openai_completion()).await;
}

#[tokio::test]
async fn a_stream_without_its_end_marker_is_cut() {
    let anthropic = ANTHROPIC_STREAM.rsplit_once("event: message_stop").unwrap().0;
    let (result, _) =
        decode_chunks(WireFormat::Anthropic, vec![anthropic.as_bytes().to_vec()]).await;
    assert_eq!(result, Err(StreamError::Cut { expected: "message_stop" }));

    let openai = OPENAI_STREAM.split_once("data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\"").unwrap().0;
    let (result, _) = decode_chunks(WireFormat::OpenAi, vec![openai.as_bytes().to_vec()]).await;
    assert!(matches!(result, Err(StreamError::Cut { .. })), "{result:?}");
}

#[tokio::test]
async fn openai_stream_may_end_without_done_after_a_finish_reason() {
    let body = OPENAI_STREAM.replace("data: [DONE]\n\n", "");
    let (result, _) = decode_chunks(WireFormat::OpenAi, vec![body.into_bytes()]).await;
    assert_eq!(result, Ok(openai_completion()));
}

#[tokio::test]
async fn empty_and_eventless_bodies_are_errors() {
    for wire in [WireFormat::Anthropic, WireFormat::OpenAi] {
        let (result, _) = decode_chunks(wire, vec![]).await;
        assert_eq!(result, Err(StreamError::Empty));
        let (result, _) = decode_chunks(wire, vec![b"{\"no\": \"events\"}".to_vec()]).await;
        assert!(matches!(result, Err(StreamError::Framing(_))), "{result:?}");
    }
}

#[tokio::test]
async fn invalid_json_in_a_data_line_is_a_protocol_error() {
    let anthropic = "event: message_start\ndata: {\"type\": \"message_start\", \n\n";
    let (result, _) =
        decode_chunks(WireFormat::Anthropic, vec![anthropic.as_bytes().to_vec()]).await;
    let error = result.unwrap_err();
    assert!(matches!(error, StreamError::InvalidJson { .. }), "{error:?}");
    assert!(error.to_string().contains("not valid JSON"), "{error}");

    let (result, _) = decode_chunks(WireFormat::OpenAi, vec![b"data: {oops\n\n".to_vec()]).await;
    assert!(matches!(result, Err(StreamError::InvalidJson { .. })), "{result:?}");
}

#[tokio::test]
async fn a_huge_single_chunk_decodes_whole() {
    // 60,000 text deltas (about 9 MB) in one chunk: every one of them is reported and kept.
    const DELTAS: usize = 60_000;
    const TEXT: &str = "Some words of the answer, and a few more of them to make a line.";
    let delta = format!(
        "event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{{\"type\":\"text_delta\",\"text\":\"{TEXT}\"}}}}\n\n"
    );
    let (head, tail) = ANTHROPIC_STREAM.split_once("event: content_block_stop").unwrap();
    let body = format!("{head}{}event: content_block_stop{tail}", delta.repeat(DELTAS));
    // A hang guard, not a speed claim: quadratic work on 9 MB would take far longer than this.
    let decoded = decode_chunks(WireFormat::Anthropic, vec![body.into_bytes()]);
    let (result, events) = tokio::time::timeout(std::time::Duration::from_secs(120), decoded)
        .await
        .expect("decoding one huge chunk hung");
    let completion = result.unwrap();
    let deltas = events.iter().filter(|event| **event == StreamEvent::TextDelta(TEXT.into()));
    assert_eq!(deltas.count(), DELTAS);
    let keel::message::ContentBlock::Text { text } = &completion.content[0] else {
        panic!("{completion:?}")
    };
    assert!(text.ends_with(&TEXT.repeat(3)));
    assert_eq!(text.len(), "Let me look — ünïcode 🚀 and \"quotes\".".len() + DELTAS * TEXT.len());
}

/// Chunks of `body`, each arriving `gap` after the one before, on tokio's clock.
fn chunks_every(
    body: &'static str,
    pieces: usize,
    gap: std::time::Duration,
) -> impl futures_util::Stream<Item = Result<Vec<u8>, Infallible>> {
    let size = body.len().div_ceil(pieces);
    let chunks: Vec<Vec<u8>> = body.as_bytes().chunks(size).map(<[u8]>::to_vec).collect();
    stream::unfold(chunks.into_iter(), move |mut chunks| async move {
        tokio::time::sleep(gap).await;
        chunks.next().map(|chunk| (Ok(chunk), chunks))
    })
}

#[tokio::test(start_paused = true)]
async fn a_slow_stream_that_never_falls_silent_for_the_idle_timeout_is_whole() {
    let idle = std::time::Duration::from_secs(10);
    let chunks = keel::llm::sse::with_idle_timeout(
        chunks_every(ANTHROPIC_STREAM, 8, idle - std::time::Duration::from_millis(1)),
        idle,
    );
    let (tx, _rx) = mpsc::unbounded_channel();
    let started = tokio::time::Instant::now();
    let result = WireFormat::Anthropic.decode(chunks, &tx).await;
    assert_eq!(result, Ok(anthropic_completion()));
    assert!(started.elapsed() > 7 * idle, "the paused clock ran through every gap");
}

#[tokio::test(start_paused = true)]
async fn a_stream_silent_for_the_idle_timeout_ends_with_an_idle_error_at_that_moment() {
    let idle = std::time::Duration::from_secs(10);
    let silent = stream::iter([Ok::<_, Infallible>(ANTHROPIC_STREAM.as_bytes()[..200].to_vec())])
        .chain(stream::pending());
    let chunks = keel::llm::sse::with_idle_timeout(silent, idle);
    let (tx, _rx) = mpsc::unbounded_channel();
    let started = tokio::time::Instant::now();
    let result = WireFormat::Anthropic.decode(chunks, &tx).await;
    assert_eq!(result, Err(StreamError::Idle(idle)));
    assert_eq!(started.elapsed(), idle, "the first chunk came at once; then {idle:?} of silence");
}

#[tokio::test]
async fn one_long_event_decodes_whole() {
    // A single 1 MB text delta, arriving in 64 KB chunks.
    let text = "word ".repeat(200_000);
    let body = wire::anthropic_text_stream(&text);
    let chunks = body.as_bytes().chunks(64 * 1024).map(<[u8]>::to_vec).collect();
    let (result, _) = decode_chunks(WireFormat::Anthropic, chunks).await;
    let completion = result.unwrap();
    assert_eq!(completion.content, [keel::message::ContentBlock::Text { text }]);
}

#[tokio::test]
async fn an_endless_line_is_refused_rather_than_buffered_forever() {
    let mut body = b"event: content_block_delta\ndata: ".to_vec();
    body.extend(std::iter::repeat_n(b'x', 6 << 20));
    let chunks = body.chunks(1 << 20).map(<[u8]>::to_vec).collect();
    let (result, _) = decode_chunks(WireFormat::Anthropic, chunks).await;
    let error = result.unwrap_err();
    assert!(matches!(error, StreamError::Framing(_)), "{error:?}");
    assert!(error.to_string().contains("without a complete event"), "{error}");
}

/// Pieces of plausible and broken stream text, for the mixing property below.
const FRAGMENTS: &[&str] = &[
    "event: message_start\n",
    "event: content_block_start\n",
    "event: content_block_delta\n",
    "event: message_delta\n",
    "event: message_stop\n",
    "event: error\n",
    "event: ping\n",
    "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"n\"}}\n",
    "data: {\"type\":\"content_block_start\",\"index\":18446744073709551615,\"content_block\":{\"type\":\"text\",\"text\":\"x\"}}\n",
    "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"a\"}}\n",
    "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"é\"}}\n",
    "data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":18446744073709551615}}\n",
    "data: {\"type\":\"message_stop\"}\n",
    "data: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"busy\"}}\n",
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\",\"tool_calls\":[{\"index\":3,\"function\":{\"arguments\":\"[\"}}]}}]}\n",
    "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"id\":\"x\",\"function\":{\"name\":\"f\"}}]},\"finish_reason\":\"stop\"}]}\n",
    "data: {\"choices\":null,\"usage\":{\"prompt_tokens\":1}}\n",
    "data: {\"error\":{\"code\":502,\"message\":\"upstream\"}}\n",
    "data: [DONE]\n",
    "data: {\n",
    "data: \u{feff}\n",
    ": comment\n",
    "\n",
    "\r\n",
    "\r",
    "retry: 10\n",
    "id: 7\n",
    "\u{0}",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn decoders_never_panic_on_arbitrary_bytes(
        bytes in proptest::collection::vec(any::<u8>(), 0..1024),
        cuts in proptest::collection::vec(any::<usize>(), 0..8),
    ) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
        for wire in [WireFormat::Anthropic, WireFormat::OpenAi] {
            let chunks = split_at(&bytes, &cuts);
            runtime.block_on(decode_chunks(wire, chunks)).0.ok();
        }
    }

    #[test]
    fn decoders_never_panic_on_mixed_stream_fragments(
        picks in proptest::collection::vec(0..FRAGMENTS.len(), 0..40),
        cuts in proptest::collection::vec(any::<usize>(), 0..8),
    ) {
        let body: String = picks.iter().map(|pick| FRAGMENTS[*pick]).collect();
        let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
        for wire in [WireFormat::Anthropic, WireFormat::OpenAi] {
            let chunks = split_at(body.as_bytes(), &cuts);
            runtime.block_on(decode_chunks(wire, chunks)).0.ok();
        }
    }
}

/// `bytes` cut at the given positions (taken modulo its length).
fn split_at(bytes: &[u8], cuts: &[usize]) -> Vec<Vec<u8>> {
    let mut points: Vec<usize> = cuts.iter().map(|cut| cut % (bytes.len() + 1)).collect();
    points.sort_unstable();
    let mut chunks = Vec::new();
    let mut start = 0;
    for point in points {
        chunks.push(bytes[start..point].to_vec());
        start = point;
    }
    chunks.push(bytes[start..].to_vec());
    chunks
}
