//! What a server's error answer becomes, as one table run over both protocols against a real
//! HTTP server on 127.0.0.1: which statuses are retried, what the person reads (the server's own
//! words summarised, the variable or flag to check), and that a request that cannot succeed is
//! sent once. The one HTTP client serves both protocols, so one table holds it to both.

use crate::support::wire;
use keel::llm::anthropic::Anthropic;
use keel::llm::openai::OpenAi;
use keel::llm::{ChatRequest, Completion, HttpClient, LlmError, Protocol, StreamEvent, WireFormat};
use keel::message::{ContentBlock, History, Message};
use serde_json::{Value, json};
use tokio::sync::mpsc;
use wire::{drain, retries, settings};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

/// The body of an error answer.
#[derive(Clone, Copy)]
enum Body {
    /// The protocol's own JSON error shape, with this type and message.
    Json(&'static str, &'static str),
    /// Anything else, with its content type.
    Raw(&'static str, &'static str),
}

/// One error answer and what keel must make of it.
struct Case {
    name: &'static str,
    status: u16,
    headers: &'static [(&'static str, &'static str)],
    body: Body,
    /// Whether keel tries again (with one retry allowed, a retried case is sent twice).
    retried: bool,
    /// What the error message must say. `{url}`, `{key}` and `{base}` stand for the request's
    /// URL and the protocol's key and base-URL variables.
    says: &'static [&'static str],
    /// What it must not say.
    hides: &'static [&'static str],
}

const FILLER: &str = "<p>filler</p>";

const CASES: &[Case] = &[
    Case {
        name: "401 names the key variable",
        status: 401,
        headers: &[],
        body: Body::Json("authentication_error", "invalid key"),
        retried: false,
        says: &["authentication failed (401 from {url}): invalid key — set {key} to a valid key"],
        hides: &[],
    },
    Case {
        name: "403 is access denied",
        status: 403,
        headers: &[],
        body: Body::Json("permission_error", "not allowed"),
        retried: false,
        says: &["access denied (403 from {url}): not allowed — set {key}"],
        hides: &[],
    },
    Case {
        name: "404 names the model and the base URL",
        status: 404,
        headers: &[],
        body: Body::Json("not_found_error", "model: test-model"),
        retried: false,
        says: &[
            "not found (404 from {url}): model: test-model",
            "\"test-model\" (--model)",
            "--base-url or {base}",
        ],
        hides: &[],
    },
    Case {
        name: "400 shows the server's message",
        status: 400,
        headers: &[],
        body: Body::Json("invalid_request_error", "messages.1: tool_result without tool_use"),
        retried: false,
        says: &["request rejected (400 from {url}): messages.1: tool_result without tool_use"],
        hides: &[],
    },
    Case {
        // Too large for the server at all: the agent compacts before it sends anything again.
        name: "413 is a prompt too long, not retried as it is",
        status: 413,
        headers: &[],
        body: Body::Json("request_too_large", "request exceeds the maximum size"),
        retried: false,
        says: &[
            "the prompt is too long for the model (413 from {url}): request exceeds the maximum size",
        ],
        hides: &[],
    },
    Case {
        name: "422 shows the server's message",
        status: 422,
        headers: &[],
        body: Body::Json("invalid_request_error", "max_tokens: too large"),
        retried: false,
        says: &["request rejected (422 from {url}): max_tokens: too large"],
        hides: &[],
    },
    Case {
        name: "429 is retried",
        status: 429,
        headers: &[],
        body: Body::Json("rate_limit_error", "slow down"),
        retried: true,
        says: &["gave up after 2 attempts: rate limited (429 from {url}): slow down"],
        hides: &[],
    },
    Case {
        name: "429 asking for an hour fails at once with the server's words",
        status: 429,
        headers: &[("retry-after", "3600")],
        body: Body::Json("rate_limit_error", "quota exhausted"),
        retried: false,
        says: &["429 from {url}", "quota exhausted", "retry after 3600s"],
        hides: &["gave up"],
    },
    Case {
        name: "500 is retried",
        status: 500,
        headers: &[],
        body: Body::Json("api_error", "internal"),
        retried: true,
        says: &["gave up after 2 attempts: server error (500 from {url}): internal"],
        hides: &[],
    },
    Case {
        name: "a 500 text body is cut to its first line",
        status: 500,
        headers: &[],
        body: Body::Raw("upstream failed\nTraceback (most recent call last):\n  ...", "text/plain"),
        retried: true,
        says: &["(500 from {url}): upstream failed"],
        hides: &["Traceback"],
    },
    Case {
        name: "502 with an HTML page is summarised by its title",
        status: 502,
        headers: &[],
        body: Body::Raw(
            "<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body><p>filler</p></body></html>",
            "text/html",
        ),
        retried: true,
        says: &["gateway error (502 from {url}): an HTML page: 502 Bad Gateway"],
        hides: &[FILLER],
    },
    Case {
        name: "503 is retried",
        status: 503,
        headers: &[],
        body: Body::Json("api_error", "unavailable"),
        retried: true,
        says: &["service unavailable (503 from {url}): unavailable"],
        hides: &[],
    },
    Case {
        name: "504 is retried",
        status: 504,
        headers: &[],
        body: Body::Json("timeout_error", "upstream timed out"),
        retried: true,
        says: &["gateway error (504 from {url}): upstream timed out"],
        hides: &[],
    },
    Case {
        name: "529 is retried",
        status: 529,
        headers: &[],
        body: Body::Json("overloaded_error", "Overloaded"),
        retried: true,
        says: &["server overloaded (529 from {url}): Overloaded"],
        hides: &[],
    },
];

/// The error body in `P`'s own shape.
fn error_json<P: Protocol>(kind: &str, message: &str) -> Value {
    match P::WIRE {
        WireFormat::Anthropic => {
            json!({"type": "error", "error": {"type": kind, "message": message}})
        }
        WireFormat::OpenAi => {
            json!({"error": {"message": message, "type": kind, "param": null, "code": null}})
        }
    }
}

/// A short plain-text answer in `P`'s stream format.
fn text_stream<P: Protocol>(text: &str) -> String {
    match P::WIRE {
        WireFormat::Anthropic => wire::anthropic_text_stream(text),
        WireFormat::OpenAi => wire::openai_sse(&[
            json!({"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": null}]}),
            json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
        ]),
    }
}

fn error_response<P: Protocol>(case: &Case) -> ResponseTemplate {
    let mut response = ResponseTemplate::new(case.status);
    for (name, value) in case.headers {
        response = response.insert_header(*name, *value);
    }
    match case.body {
        Body::Json(kind, message) => response.set_body_json(error_json::<P>(kind, message)),
        Body::Raw(text, content_type) => response.set_body_raw(text, content_type),
    }
}

/// The base URL the client is given: Anthropic's has no `/v1`, OpenAI's does.
fn base<P: Protocol>(server: &MockServer) -> String {
    match P::WIRE {
        WireFormat::Anthropic => server.uri(),
        WireFormat::OpenAi => format!("{}/v1", server.uri()),
    }
}

async fn complete<P: Protocol>(
    base_url: &str,
    max_retries: u32,
) -> (Result<Completion, LlmError>, Vec<StreamEvent>) {
    let client = HttpClient::<P>::new(settings(base_url, max_retries)).unwrap();
    let history = History::from(vec![Message::user_text("Hello.")]);
    let request = ChatRequest {
        system: "",
        messages: &history,
        tools: &[],
        max_tokens: 64,
        thinking_budget: None,
    };
    let (tx, mut rx) = mpsc::unbounded_channel();
    let result = client.complete(&request, &tx).await;
    (result, drain(&mut rx))
}

/// Runs every case against `P`: answered with the error every time, then answered with it once
/// before a good answer.
async fn run_table<P: Protocol>() {
    for case in CASES {
        let label = format!("{} ({})", case.name, P::NAME);
        let server = MockServer::start().await;
        Mock::given(method("POST")).respond_with(error_response::<P>(case)).mount(&server).await;
        let (result, events) = complete::<P>(&base::<P>(&server), 1).await;
        let error = result.expect_err(&label);
        let message = error.to_string();
        let url = format!("{}{}", base::<P>(&server), P::PATH);
        for wanted in case.says {
            let wanted = wanted
                .replace("{url}", &url)
                .replace("{key}", P::KEY_VAR)
                .replace("{base}", P::BASE_VAR);
            assert!(message.contains(&wanted), "{label}: {wanted:?} missing from: {message}");
        }
        for unwanted in case.hides {
            assert!(!message.contains(unwanted), "{label}: {unwanted:?} shown in: {message}");
        }
        let sent = server.received_requests().await.unwrap().len();
        assert_eq!(sent, if case.retried { 2 } else { 1 }, "{label}: requests sent");
        assert_eq!(retries(&events).len(), usize::from(case.retried), "{label}: retries announced");
        assert_eq!(error.is_auth(), matches!(case.status, 401 | 403), "{label}: is_auth");

        if case.retried {
            let server = MockServer::start().await;
            Mock::given(method("POST"))
                .respond_with(error_response::<P>(case))
                .up_to_n_times(1)
                .with_priority(1)
                .mount(&server)
                .await;
            Mock::given(method("POST"))
                .respond_with(
                    ResponseTemplate::new(200)
                        .set_body_raw(text_stream::<P>("Recovered."), "text/event-stream"),
                )
                .mount(&server)
                .await;
            let (result, events) = complete::<P>(&base::<P>(&server), 1).await;
            let completion = result.unwrap_or_else(|error| panic!("{label}: {error}"));
            assert_eq!(completion.content, [ContentBlock::Text { text: "Recovered.".into() }]);
            let retries = retries(&events);
            assert_eq!(retries.len(), 1, "{label}");
            assert!(retries[0].2.starts_with(&case.status.to_string()), "{label}: {retries:?}");
        }
    }
}

#[tokio::test]
async fn anthropic_error_answers() {
    run_table::<Anthropic>().await;
}

#[tokio::test]
async fn openai_error_answers() {
    run_table::<OpenAi>().await;
}

/// A 404 from a base URL with a `/v1` too many (Anthropic) or too few (OpenAI) says so.
async fn not_found_hint<P: Protocol>(base_url: String, hint: &str) {
    let (result, _) = complete::<P>(&base_url, 0).await;
    let message = result.unwrap_err().to_string();
    assert!(message.contains(hint), "{hint:?} missing from: {message}");
}

#[tokio::test]
async fn a_404_says_when_the_base_url_has_a_v1_too_many_or_too_few() {
    let server = MockServer::start().await;
    Mock::given(method("POST")).respond_with(ResponseTemplate::new(404)).mount(&server).await;
    not_found_hint::<Anthropic>(
        format!("{}/v1", server.uri()),
        "ANTHROPIC_BASE_URL should not end in /v1",
    )
    .await;
    not_found_hint::<OpenAi>(server.uri(), "OPENAI_BASE_URL usually ends in /v1").await;
}

/// Nothing listens at the address: the error names the URL and the variable, after retrying.
async fn refused<P: Protocol>() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    drop(listener);
    let base_url = match P::WIRE {
        WireFormat::Anthropic => format!("http://{address}"),
        WireFormat::OpenAi => format!("http://{address}/v1"),
    };
    let (result, events) = complete::<P>(&base_url, 1).await;
    let message = result.unwrap_err().to_string();
    assert!(message.contains(&format!("could not connect to {base_url}{}", P::PATH)), "{message}");
    assert!(message.contains(P::BASE_VAR), "{message}");
    assert_eq!(retries(&events).len(), 1);
}

#[tokio::test]
async fn connection_refused_names_the_url_on_both_protocols() {
    refused::<Anthropic>().await;
    refused::<OpenAi>().await;
}

#[test]
fn an_invalid_base_url_is_refused_up_front_on_both_protocols() {
    for (error, variable) in [
        (HttpClient::<Anthropic>::new(settings("not a url", 0)).unwrap_err(), Anthropic::BASE_VAR),
        (HttpClient::<OpenAi>::new(settings("ftp://x", 0)).unwrap_err(), OpenAi::BASE_VAR),
    ] {
        assert!(error.to_string().contains(variable), "{error}");
    }
}
