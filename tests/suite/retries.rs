//! How long keel waits before retrying, on both protocols (which statuses are retried at all is
//! the error table in `provider_errors.rs`).
//!
//! Against loopback servers the tests check what keel *reported* (the delay carried by
//! `StreamEvent::Retrying`) and then drop the request, so no test waits out a real delay. That
//! the wait really is the reported one is checked on tokio's paused clock, away from sockets.

use crate::support::wire;
use keel::llm::anthropic::AnthropicClient;
use keel::llm::openai::OpenAiClient;
use keel::llm::retry::{self, MAX_RETRY_AFTER, RetryPolicy};
use keel::llm::{ChatRequest, Completion, LlmError, Provider, StreamEvent};
use keel::message::{History, Message};
use serde_json::json;
use std::time::{Duration, SystemTime};
use tokio::sync::mpsc;
use wire::{anthropic_text_stream, openai_sse, settings};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

/// Hang guard for one request against a loopback server.
const HANG_GUARD: Duration = Duration::from_secs(30);

#[derive(Debug, Clone, Copy)]
enum Protocol {
    Anthropic,
    OpenAi,
}

const PROTOCOLS: [Protocol; 2] = [Protocol::Anthropic, Protocol::OpenAi];

fn provider(protocol: Protocol, base: &str, max_retries: u32) -> Provider {
    match protocol {
        Protocol::Anthropic => {
            Provider::Anthropic(AnthropicClient::new(settings(base, max_retries)).unwrap())
        }
        Protocol::OpenAi => Provider::OpenAi(
            OpenAiClient::new(settings(&format!("{base}/v1"), max_retries)).unwrap(),
        ),
    }
}

fn good_answer(protocol: Protocol) -> ResponseTemplate {
    let body = match protocol {
        Protocol::Anthropic => anthropic_text_stream("Fine."),
        Protocol::OpenAi => openai_sse(&[
            json!({"choices": [{"index": 0, "delta": {"content": "Fine."}, "finish_reason": null}]}),
            json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
        ]),
    };
    ResponseTemplate::new(200).set_body_raw(body, "text/event-stream")
}

fn error_answer(status: u16) -> ResponseTemplate {
    ResponseTemplate::new(status)
        .set_body_json(json!({"type": "error", "error": {"type": "api_error", "message": "busy"}}))
}

/// A server that answers `first` once, then a good answer.
async fn server(protocol: Protocol, first: ResponseTemplate) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(first)
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("POST")).respond_with(good_answer(protocol)).mount(&server).await;
    server
}

/// Runs one whole request; returns its result and every event.
async fn complete(provider: &Provider) -> (Result<Completion, LlmError>, Vec<StreamEvent>) {
    let history = History::from(vec![Message::user_text("Hello.")]);
    let request = ChatRequest {
        system: "",
        messages: &history,
        tools: &[],
        max_tokens: 64,
        thinking_budget: None,
    };
    let (tx, mut rx) = mpsc::unbounded_channel();
    let result = tokio::time::timeout(HANG_GUARD, provider.complete(&request, &tx))
        .await
        .expect("the request hung");
    (result, wire::drain(&mut rx))
}

/// Runs a request until it announces its first retry, then drops it: returns the announced
/// delay, or how the request ended if it never announced one.
async fn first_retry_delay(provider: &Provider) -> Result<Duration, Result<Completion, LlmError>> {
    let history = History::from(vec![Message::user_text("Hello.")]);
    let request = ChatRequest {
        system: "",
        messages: &history,
        tools: &[],
        max_tokens: 64,
        thinking_budget: None,
    };
    let (tx, mut rx) = mpsc::unbounded_channel();
    let watch = async {
        let complete = provider.complete(&request, &tx);
        tokio::pin!(complete);
        loop {
            tokio::select! {
                Some(event) = rx.recv() => {
                    if let StreamEvent::Retrying { delay, .. } = event {
                        return Ok(delay);
                    }
                }
                result = &mut complete => return Err(result),
            }
        }
    };
    tokio::time::timeout(HANG_GUARD, watch).await.expect("the request hung")
}

#[tokio::test]
async fn retry_after_is_honoured_in_seconds_and_as_an_http_date() {
    for protocol in PROTOCOLS {
        let in_30s = httpdate::fmt_http_date(SystemTime::now() + Duration::from_secs(30));
        for (header, value, low, high) in [
            // A date has whole seconds: 30 s from when the test wrote it, less the rounding and
            // the time the requests took (far less than 10 s; the backoff alone is milliseconds).
            ("retry-after", in_30s, 20_000, 30_000),
            ("retry-after", "7".to_owned(), 7_000, 7_000),
            ("retry-after", "2.5".to_owned(), 2_500, 2_500),
            ("retry-after-ms", "1200".to_owned(), 1_200, 1_200),
        ] {
            let answer = error_answer(429).insert_header(header, value.as_str());
            let server = server(protocol, answer).await;
            let delay =
                first_retry_delay(&provider(protocol, &server.uri(), 2)).await.unwrap_or_else(
                    |ended| panic!("{protocol:?} {header}: {value}: no retry: {ended:?}"),
                );
            let range = Duration::from_millis(low)..=Duration::from_millis(high);
            assert!(range.contains(&delay), "{protocol:?} {header}: {value} gave {delay:?}");
        }
    }
}

#[tokio::test]
async fn a_date_past_the_longest_wait_fails_at_once_with_the_servers_words() {
    let in_two_hours = httpdate::fmt_http_date(SystemTime::now() + 120 * MAX_RETRY_AFTER);
    for protocol in PROTOCOLS {
        let answer = error_answer(429).insert_header("retry-after", in_two_hours.as_str());
        let server = server(protocol, answer).await;
        let ended = first_retry_delay(&provider(protocol, &server.uri(), 4))
            .await
            .expect_err("keel waits out no two hours");
        let error = ended.unwrap_err();
        assert!(!matches!(error, LlmError::RetriesExhausted { .. }), "{protocol:?}: {error}");
        assert!(error.to_string().contains("busy (retry after 7"), "{protocol:?}: {error}");
        assert_eq!(server.received_requests().await.unwrap().len(), 1);
    }
}

#[tokio::test]
async fn a_date_already_past_retries_after_the_usual_backoff() {
    let a_minute_ago = httpdate::fmt_http_date(SystemTime::now() - Duration::from_secs(60));
    let server = server(
        Protocol::Anthropic,
        error_answer(503).insert_header("retry-after", a_minute_ago.as_str()),
    )
    .await;
    let (result, events) = complete(&provider(Protocol::Anthropic, &server.uri(), 1)).await;
    assert!(result.is_ok(), "{result:?}");
    let retries = wire::retries(&events);
    assert_eq!(retries.len(), 1);
    assert!(retries[0].1 <= wire::fast_retry(1).initial_delay, "{:?}", retries[0].1);
}

// ---- The wait itself, on the paused clock ----

fn busy(retry_after: Option<Duration>) -> LlmError {
    LlmError::Server { status: 429, url: "http://x".into(), message: "busy".into(), retry_after }
}

/// Runs `retry::run` over attempts that fail with `errors` in turn and then succeed; returns
/// when each attempt started (on tokio's clock) and the delays announced.
async fn attempts_over(
    policy: RetryPolicy,
    errors: Vec<LlmError>,
) -> (Vec<tokio::time::Instant>, Vec<Duration>) {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let mut started = Vec::new();
    let mut errors = errors.into_iter();
    let result = retry::run(&policy, &tx, || {
        started.push(tokio::time::Instant::now());
        let next = errors.next();
        async move { next.map_or(Ok(()), Err) }
    })
    .await;
    assert!(result.is_ok(), "{result:?}");
    let delays = wire::retries(&wire::drain(&mut rx)).into_iter().map(|r| r.1).collect();
    (started, delays)
}

/// tokio's timer counts whole milliseconds, rounding a sleep up.
const TIMER_RESOLUTION: Duration = Duration::from_millis(1);

/// Each attempt after the first started the announced delay after the one before.
fn assert_waited(started: &[tokio::time::Instant], delays: &[Duration]) {
    let gaps: Vec<Duration> = started.windows(2).map(|pair| pair[1] - pair[0]).collect();
    assert_eq!(gaps.len(), delays.len(), "one announcement per retry");
    for (gap, delay) in gaps.iter().zip(delays) {
        assert!(
            *gap >= *delay && *gap <= *delay + TIMER_RESOLUTION,
            "waited {gap:?} where {delay:?} was announced (all: {gaps:?} for {delays:?})"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn the_wait_before_each_retry_is_the_one_announced_and_retry_after_is_its_floor() {
    let policy = RetryPolicy {
        max_retries: 3,
        initial_delay: Duration::from_millis(100),
        max_delay: Duration::from_secs(10),
    };
    let errors = vec![busy(Some(Duration::from_secs(5))), busy(None), busy(Some(MAX_RETRY_AFTER))];
    let (started, delays) = attempts_over(policy, errors).await;
    assert_eq!(started.len(), 4);
    assert_waited(&started, &delays);
    assert_eq!(delays[0], Duration::from_secs(5), "retry-after is waited out");
    assert!(
        (Duration::from_millis(100)..=Duration::from_millis(200)).contains(&delays[1]),
        "the second retry's backoff: {:?}",
        delays[1]
    );
    assert_eq!(delays[2], MAX_RETRY_AFTER, "the longest wait keel accepts is still waited out");
}

#[tokio::test(start_paused = true)]
async fn backoff_doubles_up_to_its_cap() {
    let policy = RetryPolicy {
        max_retries: 6,
        initial_delay: Duration::from_secs(1),
        max_delay: Duration::from_secs(8),
    };
    let (started, delays) = attempts_over(policy, (0..6).map(|_| busy(None)).collect()).await;
    assert_waited(&started, &delays);
    for (retry, delay) in delays.iter().enumerate() {
        let base = Duration::from_secs(1 << retry.min(3));
        assert!((base / 2..=base).contains(delay), "retry {}: {delay:?}", retry + 1);
    }
}
