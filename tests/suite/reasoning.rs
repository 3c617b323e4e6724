//! Reasoning from OpenAI-compatible servers: `reasoning_content` (DeepSeek, vLLM, Qwen, Doubao)
//! and `reasoning` (OpenRouter, Ollama) deltas become one reasoning block, apart from the
//! answer; it goes back as `reasoning_content` on the assistant's tool-call turns — a
//! DeepSeek-style server refuses a tool-call turn without it — and never on a final answer.

use crate::support::{bin, llm, wire};
use bin::{keel, output_within};
use keel::llm::openai::{OpenAi, OpenAiClient};
use keel::llm::{ChatRequest, StopReason};
use keel::message::{ContentBlock, History, Message};
use llm::{FakeLlm, text, tool};
use serde_json::{Value, json};
use tokio::sync::mpsc;
use wire::{drain, openai_sse, settings};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

fn chunk(delta: Value, finish: Value) -> Value {
    json!({"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
}

/// One streamed answer whose reasoning comes under `field`, then text and a tool call.
fn stream(field: &str) -> String {
    openai_sse(&[
        chunk(json!({"role": "assistant", "content": null, field: "I should "}), Value::Null),
        chunk(json!({"content": null, field: "read it — ünïcode 🚀."}), Value::Null),
        chunk(json!({"content": "Reading.", field: null}), Value::Null),
        chunk(
            json!({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                "function": {"name": "read_file", "arguments": "{\"path\":\"a\"}"}}]}),
            Value::Null,
        ),
        chunk(json!({}), json!("tool_calls")),
    ])
}

#[tokio::test]
async fn both_names_of_the_reasoning_field_become_one_reasoning_block() {
    for field in ["reasoning_content", "reasoning"] {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path("/v1/chat/completions"))
            .respond_with(
                ResponseTemplate::new(200).set_body_raw(stream(field), "text/event-stream"),
            )
            .mount(&server)
            .await;
        let client = OpenAiClient::new(settings(&format!("{}/v1", server.uri()), 0)).unwrap();
        let history = History::from(vec![Message::user_text("Read a.")]);
        let request = ChatRequest {
            system: "",
            messages: &history,
            tools: &[],
            max_tokens: 64,
            thinking_budget: None,
        };
        let (tx, mut rx) = mpsc::unbounded_channel();
        let completion = client.complete(&request, &tx).await.unwrap();
        assert_eq!(completion.stop_reason, StopReason::ToolUse);
        assert_eq!(wire::streamed_text(&drain(&mut rx)), "Reading.", "{field}");
        assert_eq!(
            completion.content[..2],
            [
                ContentBlock::Reasoning { text: "I should read it — ünïcode 🚀.".into() },
                ContentBlock::Text { text: "Reading.".into() },
            ],
            "{field}"
        );
    }
}

#[test]
fn reasoning_goes_back_on_tool_call_turns_only() {
    let reasoning = |text: &str| ContentBlock::Reasoning { text: text.into() };
    let history = History::from(vec![
        Message::user_text("Read a."),
        Message::assistant(vec![
            reasoning("Need the file."),
            ContentBlock::ToolUse {
                id: "c1".into(),
                name: "read_file".into(),
                input: json!({"path": "a"}),
            },
        ]),
        Message {
            role: keel::message::Role::User,
            content: vec![ContentBlock::ToolResult {
                tool_use_id: "c1".into(),
                content: "1\tx".into(),
                is_error: false,
            }],
        },
        Message::assistant(vec![reasoning("It says x."), ContentBlock::Text { text: "x".into() }]),
    ]);
    let sent = wire::sent_messages::<OpenAi>("", &history);
    assert_eq!(sent[1]["reasoning_content"], "Need the file.");
    assert_eq!(sent[1]["content"], Value::Null);
    assert_eq!(sent[3], json!({"role": "assistant", "content": "x"}), "not on a final answer");
    // Nor over Anthropic, which has no place for it (a session resumed with another provider).
    let anthropic = wire::sent_messages::<keel::llm::anthropic::Anthropic>("", &history);
    assert!(!anthropic.iter().any(|message| message.to_string().contains("Need the file")));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_deepseek_style_server_never_sees_a_tool_call_turn_without_its_reasoning() {
    let script = vec![
        tool("read_file", json!({"path": "notes.txt"})).thinking("First, the notes."),
        tool("read_file", json!({"path": "notes.txt"})).thinking("Again, to be sure."),
        text("They say hello.").thinking("Enough."),
    ];
    let server = FakeLlm::start_checking(script).await;
    let (home, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    std::fs::write(work.path().join("notes.txt"), "hello\n").unwrap();
    let mut command = keel(home.path());
    command
        .args(["-p", "Read notes.txt.", "--output-format", "json", "--workdir"])
        .arg(work.path())
        .env("OPENAI_API_KEY", "test-key")
        .env("OPENAI_BASE_URL", server.openai_base());
    let output = output_within(&mut command, "keel -p against a DeepSeek-style server");
    assert!(output.status.success(), "refused: {}", bin::text(&output.stdout));
    let bodies = server.bodies().await;
    assert_eq!(bodies.len(), 3);
    let answers: Vec<&Value> = bodies[2]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|message| message["role"] == "assistant")
        .collect();
    assert_eq!(answers[0]["reasoning_content"], "First, the notes.");
    assert_eq!(answers[1]["reasoning_content"], "Again, to be sure.");
}
