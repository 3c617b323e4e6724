//! The model's reasoning on the wire. Anthropic: `thinking` and `redacted_thinking` blocks are
//! decoded as sent and go back in place, byte for byte with their signatures — also when keel
//! did not ask for thinking — and `--thinking BUDGET` asks for it. A server that checks them
//! refuses any request that changed them, so a finished run is itself the proof.

use crate::support::{bin, llm, wire};
use bin::{keel, output_within};
use keel::llm::anthropic::{Anthropic, AnthropicClient};
use keel::llm::{ChatRequest, StopReason};
use keel::message::{ContentBlock, History, Message};
use llm::reasoning::{redacted_block, signature, thinking_block};
use llm::{FakeLlm, text, tool};
use serde_json::{Value, json};
use tokio::sync::mpsc;
use wire::{anthropic_sse, drain, settings};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

/// Reasoning with everything escaping must survive: quotes, a backslash, newlines, emoji.
const THOUGHT: &str = "Let me look at \"notes.txt\" first — ünïcode 🚀, a \\ and\nsecond line.";
const REDACTED: &str = "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIw+/==";

/// An answer as the API streams it: thinking in deltas then its signature, a redacted block,
/// text and a tool call.
fn stream() -> String {
    anthropic_sse(&[
        json!({"type":"message_start","message":{"usage":{"input_tokens":10,"output_tokens":1}}}),
        json!({"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}),
        json!({"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":&THOUGHT[..20]}}),
        json!({"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":&THOUGHT[20..]}}),
        json!({"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":signature(0)}}),
        json!({"type":"content_block_stop","index":0}),
        json!({"type":"content_block_start","index":1,"content_block":{"type":"redacted_thinking","data":REDACTED}}),
        json!({"type":"content_block_stop","index":1}),
        json!({"type":"content_block_start","index":2,"content_block":{"type":"text","text":""}}),
        json!({"type":"content_block_delta","index":2,"delta":{"type":"text_delta","text":"Reading."}}),
        json!({"type":"content_block_stop","index":2}),
        json!({"type":"content_block_start","index":3,"content_block":{"type":"tool_use","id":"toolu_1","name":"read_file","input":{}}}),
        json!({"type":"content_block_delta","index":3,"delta":{"type":"input_json_delta","partial_json":"{\"path\":\"notes.txt\"}"}}),
        json!({"type":"content_block_stop","index":3}),
        json!({"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":30}}),
        json!({"type":"message_stop"}),
    ])
}

#[tokio::test]
async fn thinking_and_redacted_thinking_are_decoded_and_sent_back_in_place_exactly() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(stream(), "text/event-stream"))
        .mount(&server)
        .await;
    let client = AnthropicClient::new(settings(&server.uri(), 0)).unwrap();
    let history = History::from(vec![Message::user_text("Read notes.txt.")]);
    let request = ChatRequest {
        system: "",
        messages: &history,
        tools: &[],
        max_tokens: 4096,
        thinking_budget: Some(2048),
    };
    let (tx, mut rx) = mpsc::unbounded_channel();
    let completion = client.complete(&request, &tx).await.unwrap();
    assert_eq!(completion.stop_reason, StopReason::ToolUse);
    assert_eq!(wire::streamed_text(&drain(&mut rx)), "Reading.", "thinking is not the answer");
    let thinking =
        ContentBlock::Thinking { thinking: THOUGHT.into(), signature: Some(signature(0)) };
    assert_eq!(completion.content[0], thinking);
    assert_eq!(completion.content[1], ContentBlock::RedactedThinking { data: REDACTED.into() });
    assert_eq!(completion.content.len(), 4);

    let body: Value =
        serde_json::from_slice(&server.received_requests().await.unwrap()[0].body).unwrap();
    assert_eq!(body["thinking"], json!({"type": "enabled", "budget_tokens": 2048}));

    // Sent back: the assistant turn's blocks in the order they came, exactly as they came.
    let mut history = history;
    history.push_back(Message::assistant(completion.content));
    let sent = wire::sent_messages::<Anthropic>("", &history);
    let blocks = sent[1]["content"].as_array().unwrap();
    assert_eq!(blocks[0], thinking_block(THOUGHT, 0));
    assert_eq!(blocks[1], redacted_block(REDACTED));
    assert_eq!(blocks[2], json!({"type": "text", "text": "Reading."}));
    assert_eq!(blocks[3]["type"], "tool_use");
    // The inspector (Ctrl+T) shows the same blocks whole.
    let shown = keel::llm::WireFormat::Anthropic.messages("", &history);
    assert_eq!(shown[1]["content"][0], thinking_block(THOUGHT, 0));
    // Byte for byte: the thinking's JSON text in the body is the server's own.
    let encoded = serde_json::to_string(&blocks[0]).unwrap();
    assert_eq!(encoded, serde_json::to_string(&thinking_block(THOUGHT, 0)).unwrap());
}

/// Runs `keel -p` against `server` over Anthropic with `args`; returns the request bodies.
async fn run(server: &FakeLlm, args: &[&str]) -> Vec<Value> {
    let (home, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    std::fs::write(work.path().join("notes.txt"), "hello\n").unwrap();
    let mut command = keel(home.path());
    command
        .args(["-p", "Read notes.txt.", "--workdir"])
        .arg(work.path())
        .args(args)
        .env("ANTHROPIC_API_KEY", "test-key")
        .env("ANTHROPIC_BASE_URL", server.anthropic_base());
    let output = output_within(&mut command, "keel -p against a server that checks thinking");
    assert!(output.status.success(), "{}", bin::text(&output.stderr));
    server.bodies().await
}

fn thinking_script() -> Vec<llm::Step> {
    vec![
        tool("read_file", json!({"path": "notes.txt"})).thinking(THOUGHT).redacted(REDACTED),
        tool("read_file", json!({"path": "notes.txt"})).thinking("Once more, to be sure."),
        text("It says hello.").thinking("Done."),
    ]
}

#[tokio::test(flavor = "multi_thread")]
async fn thinking_a_server_sends_unasked_goes_back_in_place_every_round() {
    let server = FakeLlm::start_checking(thinking_script()).await;
    let bodies = run(&server, &[]).await;
    assert_eq!(bodies.len(), 3, "the checking server took every request");
    assert!(bodies.iter().all(|body| body.get("thinking").is_none()), "not asked for");
    let answers: Vec<&Value> = bodies[2]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|message| message["role"] == "assistant")
        .collect();
    assert_eq!(answers[0]["content"][0], thinking_block(THOUGHT, 0));
    assert_eq!(answers[0]["content"][1], redacted_block(REDACTED));
    assert_eq!(answers[1]["content"][0], thinking_block("Once more, to be sure.", 1));
}

#[tokio::test(flavor = "multi_thread")]
async fn the_thinking_flag_asks_for_a_budget() {
    let server = FakeLlm::start_checking(thinking_script()).await;
    let bodies = run(&server, &["--thinking", "2048"]).await;
    for body in &bodies {
        assert_eq!(body["thinking"], json!({"type": "enabled", "budget_tokens": 2048}));
        assert_eq!(body["max_tokens"], 8192);
    }
}
