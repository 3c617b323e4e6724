//! A server's "the prompt is too long" answer, as each server words it, against a real HTTP
//! server on 127.0.0.1 and both protocols: it becomes `LlmError::ContextOverflow` with the numbers
//! it stated, and it is sent once, never retried as it is — even the llama.cpp answer that comes
//! as a 500. What the agent does with it is `long_sessions.rs`.

use crate::support::wire;
use keel::llm::anthropic::Anthropic;
use keel::llm::openai::OpenAi;
use keel::llm::{ChatRequest, HttpClient, LlmError, Overflow, Protocol};
use keel::message::{History, Message};
use tokio::sync::mpsc;
use wire::settings;
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

/// (who, status, body, the window stated, the prompt's size stated)
type Case = (&'static str, u16, &'static str, Option<u64>, Option<u64>);

const ANTHROPIC: &[Case] = &[
    (
        "Anthropic",
        400,
        r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 209303 tokens > 200000 maximum"}}"#,
        Some(200_000),
        Some(209_303),
    ),
    (
        "LiteLLM's Messages API",
        400,
        r#"{"error":{"message":"litellm.ContextWindowExceededError: AnthropicError - prompt is too long: 30000 tokens > 24000 maximum","code":"400"}}"#,
        Some(24_000),
        Some(30_000),
    ),
];

const OPENAI_COMPATIBLE: &[Case] = &[
    (
        "OpenAI",
        400,
        r#"{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130512 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#,
        Some(128_000),
        Some(130_512),
    ),
    (
        "vLLM",
        400,
        r#"{"object":"error","message":"This model's maximum context length is 16384 tokens. However, you requested 122946 tokens (112946 in the messages, 10000 in the completion). Please reduce the length of the messages or completion.","type":"BadRequestError","param":null,"code":400}"#,
        Some(16_384),
        Some(112_946),
    ),
    (
        "llama.cpp",
        400,
        r#"{"error":{"code":400,"message":"the request exceeds the available context size. try increasing the context size or enable context shift","type":"exceed_context_size_error","n_prompt_tokens":14429,"n_ctx":8192}}"#,
        Some(8192),
        Some(14_429),
    ),
    (
        "llama.cpp, as a 500",
        500,
        r#"{"error":{"code":500,"message":"Context size has been exceeded.","type":"server_error"}}"#,
        None,
        None,
    ),
    (
        "Ollama",
        400,
        r#"{"error":"the prompt is longer than the context length currently available to the model"}"#,
        None,
        None,
    ),
    (
        "LiteLLM",
        400,
        r#"{"error":{"message":"litellm.ContextWindowExceededError: litellm.BadRequestError: ContextWindowExceededError: OpenAIException - This model's maximum context length is 32768 tokens. However, your messages resulted in 40000 tokens.","type":null,"param":null,"code":"400"}}"#,
        Some(32_768),
        Some(40_000),
    ),
];

async fn refused_once<P: Protocol>(cases: &[Case]) {
    for (who, status, body, limit, prompt) in cases {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(
                ResponseTemplate::new(*status)
                    .insert_header("content-type", "application/json")
                    .set_body_string(*body),
            )
            .mount(&server)
            .await;
        let base = match P::WIRE {
            keel::llm::WireFormat::Anthropic => server.uri(),
            keel::llm::WireFormat::OpenAi => format!("{}/v1", server.uri()),
        };
        let client = HttpClient::<P>::new(settings(&base, 3)).unwrap();
        let history: History = std::iter::once(Message::user_text("hello")).collect();
        let request = ChatRequest {
            system: "",
            messages: &history,
            tools: &[],
            max_tokens: 64,
            thinking_budget: None,
        };
        let (events, _rx) = mpsc::unbounded_channel();
        let err = client.complete(&request, &events).await.unwrap_err();
        assert!(matches!(err, LlmError::ContextOverflow { .. }), "{who}: {err}");
        assert_eq!(err.overflow(), Some(Overflow { limit: *limit, prompt: *prompt }), "{who}");
        assert!(err.to_string().contains("too long for the model"), "{who}: {err}");
        let sent = server.received_requests().await.unwrap().len();
        assert_eq!(sent, 1, "{who}: sent once, not retried as it is");
    }
}

#[tokio::test]
async fn every_servers_too_long_answer_is_read_and_not_retried() {
    refused_once::<Anthropic>(ANTHROPIC).await;
    refused_once::<OpenAi>(OPENAI_COMPATIBLE).await;
}
