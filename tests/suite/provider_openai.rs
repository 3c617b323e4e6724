//! The OpenAI-compatible client against real HTTP servers on 127.0.0.1, and the `messages` array
//! it sends.

use crate::support::wire;
use keel::llm::openai::{OpenAi, OpenAiClient};
use keel::llm::{ChatRequest, Completion, LlmError, StreamError, StreamEvent, ToolSpec};
use keel::message::{ContentBlock, History, Message, Role};
use serde_json::{Value, json};
use std::time::Duration;
use tokio::sync::mpsc;
use wire::{RawServer, Reply, drain, openai_sse, retries, settings};
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const SSE: &str = "text/event-stream";

async fn complete(
    base_url: &str,
    max_retries: u32,
) -> (Result<Completion, LlmError>, Vec<StreamEvent>) {
    let client = OpenAiClient::new(settings(base_url, max_retries)).unwrap();
    let messages = History::from(vec![Message::user_text("Read main.rs.")]);
    let tools = vec![ToolSpec {
        name: "read_file".into(),
        description: "Read a file".into(),
        input_schema: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
    }];
    let request = ChatRequest {
        system: "You are terse.",
        messages: &messages,
        tools: &tools,
        max_tokens: 2048,
        thinking_budget: None,
    };
    let (tx, mut rx) = mpsc::unbounded_channel();
    let result = client.complete(&request, &tx).await;
    (result, drain(&mut rx))
}

fn sse_response(body: impl Into<String>) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_raw(body.into(), SSE)
}

fn text_chunk(text: &str) -> Value {
    json!({"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": null}]})
}

fn finish_chunk(reason: &str) -> Value {
    json!({"choices": [{"index": 0, "delta": {}, "finish_reason": reason}]})
}

#[tokio::test]
async fn streams_text_and_tool_calls_with_the_documented_request() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .and(header("authorization", "Bearer test-key"))
        .respond_with(sse_response(wire::OPENAI_STREAM))
        .expect(1)
        .mount(&server)
        .await;

    let (result, events) = complete(&format!("{}/v1", server.uri()), 0).await;
    assert_eq!(result.unwrap(), wire::openai_completion());
    assert_eq!(wire::streamed_text(&events), "Checking — ünïcode 🚀 now.");

    let requests = server.received_requests().await.unwrap();
    let body: Value = serde_json::from_slice(&requests[0].body).unwrap();
    assert_eq!(
        body,
        json!({
            "model": "test-model",
            "messages": [
                {"role": "system", "content": "You are terse."},
                {"role": "user", "content": "Read main.rs."},
            ],
            "stream": true,
            "stream_options": {"include_usage": true},
            "max_tokens": 2048,
            "tools": [{
                "type": "function",
                "function": {
                    "name": "read_file",
                    "description": "Read a file",
                    "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
                },
            }],
        })
    );
}

#[tokio::test]
async fn fragments_without_an_index_and_invalid_arguments_are_assembled() {
    // Some servers leave out `index` and send each call whole; one call's arguments are broken.
    let body = openai_sse(&[
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{\"command\": \"ls\"}"}},
        ]}}]}),
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [
            {"id": "c2", "type": "function", "function": {"name": "bash", "arguments": "{\"command\": "}},
        ]}}]}),
        finish_chunk("tool_calls"),
    ]);
    let server = MockServer::start().await;
    Mock::given(method("POST")).respond_with(sse_response(body)).mount(&server).await;

    let (result, _) = complete(&server.uri(), 0).await;
    let content = result.unwrap().content;
    assert_eq!(
        content[0],
        ContentBlock::ToolUse {
            id: "c1".into(),
            name: "bash".into(),
            input: json!({"command": "ls"})
        }
    );
    let ContentBlock::ToolUse { id, input, .. } = &content[1] else { panic!("{content:?}") };
    assert_eq!(id, "c2");
    assert_eq!(keel::llm::tool_input::invalid_input(input), Some("{\"command\": "));
}

#[tokio::test]
async fn usage_arrives_in_the_last_chunk() {
    let body = openai_sse(&[
        text_chunk("Hi."),
        finish_chunk("stop"),
        json!({"choices": [], "usage": {"prompt_tokens": 11, "completion_tokens": 2}}),
    ]);
    let server = MockServer::start().await;
    Mock::given(method("POST")).respond_with(sse_response(body)).mount(&server).await;

    let (result, _) = complete(&server.uri(), 0).await;
    let completion = result.unwrap();
    assert_eq!(completion.usage.input_tokens, 11);
    assert_eq!(completion.usage.output_tokens, 2);
    assert_eq!(completion.stop_reason, keel::llm::StopReason::EndTurn);
}

#[tokio::test]
async fn retry_after_ms_is_honoured() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(429)
                .insert_header("retry-after-ms", "300")
                .set_body_json(json!({"error": {"message": "Rate limit reached"}})),
        )
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(sse_response(openai_sse(&[text_chunk("Ok."), finish_chunk("stop")])))
        .mount(&server)
        .await;

    let (result, events) = complete(&server.uri(), 1).await;
    assert!(result.is_ok(), "{result:?}");
    assert_eq!(retries(&events)[0].1, Duration::from_millis(300));
}

#[tokio::test]
async fn a_stream_cut_before_the_finish_is_retried_then_fails_cleanly() {
    let body = wire::OPENAI_STREAM;
    let cut = body.find("\"finish_reason\":\"tool_calls\"").unwrap() - 60;
    let server = RawServer::start(vec![Reply::cut(body, cut)]).await;

    let (result, events) = complete(&server.base_url, 1).await;
    let error = result.unwrap_err();
    let LlmError::RetriesExhausted { attempts: 2, last } = &error else { panic!("{error:?}") };
    assert!(matches!(**last, LlmError::Stream { cause: StreamError::Cut { .. }, .. }));
    assert_eq!(retries(&events).len(), 1);
    assert_eq!(server.connections(), 2);
}

#[tokio::test]
async fn a_stream_ending_after_the_finish_without_done_is_complete() {
    let body =
        openai_sse(&[text_chunk("Fine."), finish_chunk("stop")]).replace("data: [DONE]\n\n", "");
    let server = RawServer::start(vec![Reply::sse(&body)]).await;

    let (result, events) = complete(&server.base_url, 0).await;
    assert_eq!(result.unwrap().content, [ContentBlock::Text { text: "Fine.".into() }]);
    assert!(retries(&events).is_empty());
}

#[tokio::test]
async fn an_error_object_mid_stream_is_retried() {
    let broken = format!(
        "data: {}\n\ndata: {}\n\n",
        text_chunk("Part"),
        json!({"error": {"code": 502, "message": "upstream provider failed"}})
    );
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(sse_response(broken))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(sse_response(openai_sse(&[text_chunk("All."), finish_chunk("stop")])))
        .mount(&server)
        .await;

    let (result, events) = complete(&server.uri(), 1).await;
    assert_eq!(result.unwrap().content, [ContentBlock::Text { text: "All.".into() }]);
    assert_eq!(retries(&events)[0].2, "502");
}

#[tokio::test]
async fn invalid_json_in_a_data_line_is_retried() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(sse_response("data: {\"choices\": [\n\n"))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(sse_response(openai_sse(&[text_chunk("Ok."), finish_chunk("stop")])))
        .mount(&server)
        .await;

    let (result, events) = complete(&server.uri(), 1).await;
    assert!(result.is_ok(), "{result:?}");
    assert_eq!(retries(&events)[0].2, "malformed stream");
}

// ---- The `messages` array ----

/// The `messages` array a request sends for `history` with `system`.
fn wire_messages(system: &str, history: &History) -> Vec<Value> {
    wire::sent_messages::<OpenAi>(system, history)
}

/// The wire messages a history of just `message` sends.
fn wire_message(message: &Message) -> Vec<Value> {
    wire_messages("", &History::from(vec![message.clone()]))
}

#[test]
fn tool_results_become_tool_messages_and_the_reminder_a_user_message_after_them() {
    let history = History::from(vec![
        Message::user_text("Go."),
        Message::assistant(vec![
            ContentBlock::Text { text: "Looking.".into() },
            ContentBlock::ToolUse {
                id: "c1".into(),
                name: "bash".into(),
                input: json!({"command": "ls"}),
            },
            ContentBlock::ToolUse { id: "c2".into(), name: "todo".into(), input: json!({}) },
        ]),
        Message {
            role: Role::User,
            content: vec![
                ContentBlock::ToolResult {
                    tool_use_id: "c1".into(),
                    content: "a.txt".into(),
                    is_error: false,
                },
                ContentBlock::ToolResult {
                    tool_use_id: "c2".into(),
                    content: "Max 20 todos allowed".into(),
                    is_error: true,
                },
                ContentBlock::Reminder { text: "<reminder>Update your todos.</reminder>".into() },
                ContentBlock::Text { text: "Also, hurry.".into() },
            ],
        },
    ]);
    assert_eq!(
        wire_messages("Be terse.", &history),
        vec![
            json!({"role": "system", "content": "Be terse."}),
            json!({"role": "user", "content": "Go."}),
            json!({"role": "assistant", "content": "Looking.", "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{\"command\":\"ls\"}"}},
                {"id": "c2", "type": "function", "function": {"name": "todo", "arguments": "{}"}},
            ]}),
            json!({"role": "tool", "tool_call_id": "c1", "content": "a.txt"}),
            json!({"role": "tool", "tool_call_id": "c2", "content": "Error: Max 20 todos allowed"}),
            json!({"role": "user", "content": "<reminder>Update your todos.</reminder>\n\nAlso, hurry."}),
        ]
    );
}

#[test]
fn an_assistant_turn_of_only_tool_calls_has_null_content_and_errors_are_not_prefixed_twice() {
    let calls = Message::assistant(vec![ContentBlock::ToolUse {
        id: "c1".into(),
        name: "bash".into(),
        input: json!({"command": "false"}),
    }]);
    assert_eq!(wire_message(&calls)[0]["content"], Value::Null);
    let result = Message {
        role: Role::User,
        content: vec![ContentBlock::ToolResult {
            tool_use_id: "c1".into(),
            content: "Error: exit code 1".into(),
            is_error: true,
        }],
    };
    assert_eq!(
        wire_message(&result),
        vec![json!({"role": "tool", "tool_call_id": "c1", "content": "Error: exit code 1"})]
    );
}

#[test]
fn the_inspector_shows_each_message_exactly_as_sent() {
    let history = wire::tricky_history();
    let client = OpenAiClient::new(settings("http://127.0.0.1:9/v1", 0)).unwrap();
    let request = ChatRequest {
        system: "Be terse.",
        messages: &history,
        tools: &[],
        max_tokens: 64,
        thinking_budget: None,
    };
    let body = client.request_bytes(&request).unwrap();
    // The system prompt, then one message per turn but a tool message per result, the reminder
    // and the text after them as one user message.
    let format = keel::llm::WireFormat::OpenAi;
    assert_eq!(wire::assert_inspector_matches_body(format, "Be terse.", &history, &body), 12);
}
