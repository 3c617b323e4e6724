//! The Anthropic client against real HTTP servers on 127.0.0.1: wiremock for whole bodies, a raw
//! TCP server for streams that stall or break. Also the `messages` array it sends.

use crate::support::wire;
use keel::llm::anthropic::{Anthropic, AnthropicClient};
use keel::llm::{ChatRequest, Completion, LlmError, StreamError, StreamEvent, ToolSpec};
use keel::message::{ContentBlock, History, Message, Role};
use serde_json::{Value, json};
use std::time::Duration;
use tokio::sync::mpsc;
use wire::{RawServer, Reply, anthropic_text_stream, drain, retries, settings};
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const SSE: &str = "text/event-stream";

fn history() -> History {
    History::from(vec![Message::user_text("List the files.")])
}

fn tools() -> Vec<ToolSpec> {
    vec![ToolSpec {
        name: "bash".into(),
        description: "Run a command".into(),
        input_schema: json!({"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}),
    }]
}

/// Hang guard for one request: a stall keel should have timed out would otherwise hang the suite.
const HANG_GUARD: Duration = Duration::from_secs(30);

/// Sends one request with `max_retries` to the server at `base_url`; returns the result and the
/// events seen.
async fn complete(
    base_url: &str,
    max_retries: u32,
) -> (Result<Completion, LlmError>, Vec<StreamEvent>) {
    complete_with(settings(base_url, max_retries)).await
}

async fn complete_with(
    settings: keel::llm::HttpSettings,
) -> (Result<Completion, LlmError>, Vec<StreamEvent>) {
    let client = AnthropicClient::new(settings).unwrap();
    let messages = history();
    let tools = tools();
    let request = ChatRequest {
        system: "You are terse.",
        messages: &messages,
        tools: &tools,
        max_tokens: 1024,
        thinking_budget: None,
    };
    let (tx, mut rx) = mpsc::unbounded_channel();
    let result = tokio::time::timeout(HANG_GUARD, client.complete(&request, &tx))
        .await
        .expect("the request hung: keel's own timeouts did not end it");
    (result, drain(&mut rx))
}

fn sse_response(body: impl Into<String>) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_raw(body.into(), SSE)
}

fn error_body(kind: &str, message: &str) -> Value {
    json!({"type": "error", "error": {"type": kind, "message": message}})
}

#[tokio::test]
async fn streams_text_and_a_tool_call_with_the_documented_request() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .and(header("x-api-key", "test-key"))
        .and(header("anthropic-version", "2023-06-01"))
        .respond_with(sse_response(wire::ANTHROPIC_STREAM))
        .expect(1)
        .mount(&server)
        .await;

    let (result, events) = complete(&format!("{}/", server.uri()), 0).await;
    assert_eq!(result.unwrap(), wire::anthropic_completion());
    assert_eq!(wire::streamed_text(&events), "Let me look — ünïcode 🚀 and \"quotes\".");

    let requests = server.received_requests().await.unwrap();
    let body: Value = serde_json::from_slice(&requests[0].body).unwrap();
    assert_eq!(
        body,
        json!({
            "model": "test-model",
            "max_tokens": 1024,
            "stream": true,
            "system": [{"type": "text", "text": "You are terse.", "cache_control": {"type": "ephemeral"}}],
            "messages": [{"role": "user", "content": [
                {"type": "text", "text": "List the files.", "cache_control": {"type": "ephemeral"}},
            ]}],
            "tools": [{
                "name": "bash",
                "description": "Run a command",
                "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]},
            }],
        })
    );
}

#[tokio::test]
async fn a_stream_cut_in_half_is_retried_from_the_start() {
    let body = wire::ANTHROPIC_STREAM;
    let server = RawServer::start(vec![Reply::cut(body, body.len() / 2), Reply::sse(body)]).await;

    let (result, events) = complete(&server.base_url, 3).await;
    assert_eq!(result.unwrap(), wire::anthropic_completion());
    let retries = retries(&events);
    assert_eq!(retries.len(), 1);
    assert_eq!(retries[0].2, "stream cut off");
    assert_eq!(server.connections(), 2);
}

#[tokio::test]
async fn a_stream_cut_every_time_ends_in_an_error_not_a_partial_answer() {
    let body = wire::ANTHROPIC_STREAM;
    let server = RawServer::start(vec![Reply::cut(body, body.len() / 2)]).await;

    let (result, events) = complete(&server.base_url, 2).await;
    let error = result.unwrap_err();
    match &error {
        LlmError::RetriesExhausted { attempts, last } => {
            assert_eq!(*attempts, 3);
            assert!(matches!(**last, LlmError::Stream { cause: StreamError::Cut { .. }, .. }));
        }
        other => panic!("unexpected {other:?}"),
    }
    let message = error.to_string();
    assert!(message.starts_with("gave up after 3 attempts: "), "{message}");
    assert!(message.contains("no message_stop"), "{message}");
    // Text did stream before each cut; every attempt after the first was announced as a retry,
    // which tells the front end to drop it.
    assert!(!wire::streamed_text(&events).is_empty());
    assert_eq!(retries(&events).len(), 2);
    assert_eq!(server.connections(), 3);
}

#[tokio::test]
async fn a_chunked_body_broken_mid_chunk_is_retried() {
    let body = anthropic_text_stream("Recovered.");
    let head =
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n";
    let broken = format!("{head}{:x}\r\n{}", body.len(), &body[..body.len() / 2]);
    let server = RawServer::start(vec![
        Reply(vec![wire::Step::Send(broken.into_bytes())]),
        Reply::sse(&body),
    ])
    .await;

    let (result, events) = complete(&server.base_url, 1).await;
    assert_eq!(result.unwrap().content, [ContentBlock::Text { text: "Recovered.".into() }]);
    assert_eq!(retries(&events).len(), 1);
}

#[tokio::test]
async fn a_stalled_stream_times_out() {
    let body = wire::ANTHROPIC_STREAM;
    let server = RawServer::start(vec![Reply::stall(body, 300)]).await;
    let mut settings = settings(&server.base_url, 0);
    settings.idle_timeout = Duration::from_millis(300);

    let (result, _) = complete_with(settings).await;
    let error = result.unwrap_err();
    assert!(matches!(error, LlmError::Stream { cause: StreamError::Idle(_), .. }), "{error:?}");
    assert!(error.to_string().contains("no data for 0.3s"), "{error}");
}

#[tokio::test]
async fn a_stalled_stream_is_retried() {
    let body = wire::ANTHROPIC_STREAM;
    let server = RawServer::start(vec![Reply::stall(body, 300), Reply::sse(body)]).await;
    let mut settings = settings(&server.base_url, 1);
    // Long enough that the good second answer never trips it on a busy machine.
    settings.idle_timeout = Duration::from_secs(1);

    let (result, events) = complete_with(settings).await;
    assert_eq!(result.unwrap(), wire::anthropic_completion());
    assert!(retries(&events)[0].2.contains("no data"));
}

#[tokio::test]
async fn a_server_that_never_answers_times_out() {
    let server = RawServer::start(vec![Reply(vec![wire::Step::Hang])]).await;
    let mut settings = settings(&server.base_url, 0);
    settings.idle_timeout = Duration::from_millis(300);

    let (result, _) = complete_with(settings).await;
    assert!(
        matches!(result, Err(LlmError::Stream { cause: StreamError::Idle(_), .. })),
        "{result:?}"
    );
}

#[tokio::test]
async fn a_200_html_page_is_not_taken_for_a_stream() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(
            "<html><head><title>Sign in to the proxy</title></head></html>",
            "text/html; charset=utf-8",
        ))
        .mount(&server)
        .await;

    let (result, _) = complete(&server.uri(), 0).await;
    let message = result.unwrap_err().to_string();
    assert!(message.contains("expected an event stream"), "{message}");
    assert!(message.contains("an HTML page: Sign in to the proxy"), "{message}");
}

#[tokio::test]
async fn invalid_json_in_a_data_line_is_a_clear_error_and_retried() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(sse_response(
            "event: message_start\ndata: {\"type\": \"message_start\", \"message\": {\n\n",
        ))
        .mount(&server)
        .await;

    let (result, events) = complete(&server.uri(), 1).await;
    let message = result.unwrap_err().to_string();
    assert!(message.starts_with("gave up after 2 attempts: the answer from "), "{message}");
    assert!(message.contains("a data line is not valid JSON"), "{message}");
    assert_eq!(retries(&events)[0].2, "malformed stream");
    assert_eq!(server.received_requests().await.unwrap().len(), 2);
}

#[tokio::test]
async fn an_empty_200_is_a_clear_error_and_retried() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(sse_response(""))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("POST")).respond_with(sse_response("")).mount(&server).await;

    let (result, events) = complete(&server.uri(), 1).await;
    let error = result.unwrap_err();
    assert!(error.to_string().ends_with("the server answered 200 with an empty body"), "{error}");
    assert_eq!(retries(&events)[0].2, "empty response");
    assert_eq!(server.received_requests().await.unwrap().len(), 2);
}

#[tokio::test]
async fn an_overloaded_error_event_mid_stream_is_retried() {
    let broken = wire::anthropic_sse(&[
        json!({"type":"message_start","message":{"usage":{"input_tokens":3,"output_tokens":1}}}),
        json!({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}),
        json!({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Half"}}),
        error_body("overloaded_error", "Overloaded"),
    ]);
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(sse_response(broken))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(sse_response(anthropic_text_stream("Whole answer.")))
        .mount(&server)
        .await;

    let (result, events) = complete(&server.uri(), 2).await;
    assert_eq!(result.unwrap().content, [ContentBlock::Text { text: "Whole answer.".into() }]);
    assert_eq!(retries(&events)[0].2, "overloaded_error");
}

#[tokio::test]
async fn an_invalid_request_error_event_is_not_retried() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(sse_response(wire::anthropic_sse(&[error_body(
            "invalid_request_error",
            "prompt is too long",
        )])))
        .mount(&server)
        .await;

    let (result, _) = complete(&server.uri(), 2).await;
    let message = result.unwrap_err().to_string();
    assert!(
        message.ends_with("the server reported invalid_request_error: prompt is too long"),
        "{message}"
    );
    assert_eq!(server.received_requests().await.unwrap().len(), 1);
}

#[tokio::test]
async fn tool_input_that_is_not_json_is_kept_for_the_agent_to_answer() {
    let body = wire::anthropic_sse(&[
        json!({"type":"message_start","message":{"usage":{"input_tokens":3,"output_tokens":1}}}),
        json!({"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_9","name":"bash","input":{}}}),
        json!({"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"command\": \"ls"}}),
        json!({"type":"content_block_stop","index":0}),
        json!({"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":9}}),
        json!({"type":"message_stop"}),
    ]);
    let server = MockServer::start().await;
    Mock::given(method("POST")).respond_with(sse_response(body)).mount(&server).await;

    let (result, _) = complete(&server.uri(), 0).await;
    let completion = result.unwrap();
    let ContentBlock::ToolUse { id, input, .. } = &completion.content[0] else {
        panic!("{completion:?}")
    };
    assert_eq!(id, "toolu_9");
    assert_eq!(keel::llm::tool_input::invalid_input(input), Some("{\"command\": \"ls"));
    let answer = keel::llm::tool_input::invalid_input_message(input).unwrap();
    assert!(answer.contains("not valid JSON"), "{answer}");
    // The marker is a valid object, so the history still goes back on the wire.
    let echoed = wire_message(&Message::assistant(completion.content.clone()));
    assert!(echoed["content"][0]["input"].is_object());
}

// ---- The `messages` array ----

/// The `messages` array a request sends for `history`, without its cache breakpoints (where
/// they go is `prompt_cache.rs`'s to test; these tests hold the merging rules).
fn wire_messages(history: &History) -> Vec<Value> {
    wire::without_cache_marks(wire::sent_messages::<Anthropic>("", history))
}

/// The one wire message a history of just `message` sends.
fn wire_message(message: &Message) -> Value {
    let mut wire = wire_messages(&History::from(vec![message.clone()]));
    assert_eq!(wire.len(), 1, "{wire:?}");
    wire.remove(0)
}

fn tool_use(id: &str) -> ContentBlock {
    ContentBlock::ToolUse { id: id.into(), name: "bash".into(), input: json!({"command": "ls"}) }
}

fn tool_result(id: &str, content: &str, is_error: bool) -> ContentBlock {
    ContentBlock::ToolResult { tool_use_id: id.into(), content: content.into(), is_error }
}

fn reminder() -> ContentBlock {
    ContentBlock::Reminder { text: "<reminder>Update your todos.</reminder>".into() }
}

#[test]
fn the_reminder_follows_the_tool_results() {
    let history = History::from(vec![
        Message::user_text("Go."),
        Message::assistant(vec![tool_use("t1"), tool_use("t2")]),
        Message {
            role: Role::User,
            // Stored in any order; sent results first.
            content: vec![
                reminder(),
                tool_result("t1", "a.txt", false),
                tool_result("t2", "boom", true),
            ],
        },
    ]);
    let wire = wire_messages(&history);
    assert_eq!(
        wire[2],
        json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "a.txt"},
            {"type": "tool_result", "tool_use_id": "t2", "content": "boom", "is_error": true},
            {"type": "text", "text": "<reminder>Update your todos.</reminder>"},
        ]})
    );
    assert_eq!(
        wire[1],
        json!({"role": "assistant", "content": [
            {"type": "tool_use", "id": "t1", "name": "bash", "input": {"command": "ls"}},
            {"type": "tool_use", "id": "t2", "name": "bash", "input": {"command": "ls"}},
        ]})
    );
}

#[test]
fn consecutive_user_messages_are_merged_results_first() {
    let history = History::from(vec![
        Message::user_text("Go."),
        Message::assistant(vec![ContentBlock::Text { text: "Sure.".into() }, tool_use("t1")]),
        Message { role: Role::User, content: vec![tool_result("t1", "done", false), reminder()] },
        Message::user_text("Also fix the tests."),
        Message::user_text("And be quick."),
    ]);
    let wire = wire_messages(&history);
    assert_eq!(wire.len(), 3);
    assert_eq!(
        wire[2],
        json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "done"},
            {"type": "text", "text": "<reminder>Update your todos.</reminder>"},
            {"type": "text", "text": "Also fix the tests."},
            {"type": "text", "text": "And be quick."},
        ]})
    );
    let roles: Vec<&str> = wire.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["user", "assistant", "user"]);
}

#[test]
fn empty_text_blocks_are_left_out() {
    let message = Message::assistant(vec![ContentBlock::Text { text: " ".into() }, tool_use("t1")]);
    assert_eq!(
        wire_message(&message)["content"],
        json!([{"type": "tool_use", "id": "t1", "name": "bash", "input": {"command": "ls"}}])
    );
}

#[test]
fn an_empty_answer_is_dropped_and_the_turns_around_it_merged() {
    let history = History::from(vec![
        Message::user_text("Hello?"),
        Message::assistant(vec![]),
        Message::user_text("Anyone there?"),
    ]);
    assert_eq!(
        wire_messages(&history),
        vec![json!({"role": "user", "content": [
            {"type": "text", "text": "Hello?"},
            {"type": "text", "text": "Anyone there?"},
        ]})]
    );
}

#[test]
fn the_inspector_shows_each_message_exactly_as_sent() {
    let history = wire::tricky_history();
    let client = AnthropicClient::new(settings("http://127.0.0.1:9", 0)).unwrap();
    let request = ChatRequest {
        system: "Be terse.",
        messages: &history,
        tools: &[],
        max_tokens: 64,
        thinking_budget: None,
    };
    let body = client.request_bytes(&request).unwrap();
    // The empty answer is dropped and the user turns around it merged: 9 messages, 6 sent.
    let format = keel::llm::WireFormat::Anthropic;
    assert_eq!(wire::assert_inspector_matches_body(format, "Be terse.", &history, &body), 6);
}
