//! Prompt caching. Anthropic: `cache_control` breakpoints end the stable prefix (the system
//! prompt, else the last tool) and sit on the newest message and the newest of the request
//! before — never more than four — and the inspector shows them as sent. Both protocols: the
//! cache reads and writes the server reports reach `usage` and its JSON event.

use crate::support::{bin, llm, wire};
use bin::{json_lines, keel, output_within};
use keel::llm::anthropic::AnthropicClient;
use keel::llm::{ChatRequest, ToolSpec, WireFormat};
use keel::message::{ContentBlock, History, Message, Role};
use llm::FakeLlm;
use serde_json::{Value, json};
use std::time::Duration;
use wire::settings;

fn tools() -> Vec<ToolSpec> {
    ["bash", "read_file"]
        .map(|name| ToolSpec {
            name: name.into(),
            description: "d".into(),
            input_schema: json!({"type": "object"}),
        })
        .to_vec()
}

/// A history of `rounds` tool rounds after the prompt.
fn history(rounds: usize) -> History {
    let mut history = History::from(vec![Message::user_text("Go.")]);
    for round in 0..rounds {
        let id = format!("t{round}");
        history.push_back(Message::assistant(vec![
            ContentBlock::Text { text: "Looking.".into() },
            ContentBlock::ToolUse {
                id: id.clone(),
                name: "bash".into(),
                input: json!({"command": "ls"}),
            },
        ]));
        history.push_back(Message {
            role: Role::User,
            content: vec![ContentBlock::ToolResult {
                tool_use_id: id,
                content: "a\nb".into(),
                is_error: false,
            }],
        });
    }
    history
}

fn body(system: &str, history: &History) -> (Value, Vec<u8>) {
    let client = AnthropicClient::new(settings("http://127.0.0.1:9", 0)).unwrap();
    let tools = tools();
    let request = ChatRequest {
        system,
        messages: history,
        tools: &tools,
        max_tokens: 64,
        thinking_budget: None,
    };
    let bytes = client.request_bytes(&request).unwrap();
    (serde_json::from_slice(&bytes).unwrap(), bytes)
}

/// Where the breakpoints are: ("system" | "tool N" | "message N"), in body order.
fn breakpoints(body: &Value) -> Vec<String> {
    let marked = |value: &Value| value["cache_control"] == json!({"type": "ephemeral"});
    let mut found = Vec::new();
    for (index, tool) in body["tools"].as_array().unwrap().iter().enumerate() {
        if marked(tool) {
            found.push(format!("tool {index}"));
        }
    }
    for block in body["system"].as_array().into_iter().flatten() {
        if marked(block) {
            found.push("system".to_owned());
        }
    }
    for (index, message) in body["messages"].as_array().unwrap().iter().enumerate() {
        let blocks = message["content"].as_array().unwrap();
        for (at, block) in blocks.iter().enumerate() {
            if marked(block) {
                assert_eq!(at, blocks.len() - 1, "a breakpoint ends its message");
                found.push(format!("message {index}"));
            }
        }
    }
    found
}

#[test]
fn breakpoints_end_the_prefix_and_the_two_newest_requests() {
    for rounds in [0, 1, 2, 5] {
        let history = history(rounds);
        let (body, bytes) = body("Be terse.", &history);
        let last = 2 * rounds;
        let mut expected = vec!["system".to_owned()];
        if rounds > 0 {
            expected.push(format!("message {}", last - 2));
        }
        expected.push(format!("message {last}"));
        assert_eq!(breakpoints(&body), expected, "{rounds} rounds");
        assert!(breakpoints(&body).len() <= 4, "the API allows four");
        // The inspector shows the breakpoints exactly as sent.
        wire::assert_inspector_matches_body(WireFormat::Anthropic, "Be terse.", &history, &bytes);
    }
    let (body, _) = body("", &history(1));
    assert_eq!(
        breakpoints(&body),
        ["tool 1", "message 0", "message 2"],
        "no system: the last tool"
    );
}

#[test]
fn a_merged_turn_and_an_empty_answer_do_not_move_the_breakpoints_off_the_newest_messages() {
    let history = wire::tricky_history();
    let (body, bytes) = body("S", &history);
    let messages = body["messages"].as_array().unwrap().len();
    assert_eq!(
        breakpoints(&body),
        [
            "system".to_owned(),
            format!("message {}", messages - 3),
            format!("message {}", messages - 1)
        ]
    );
    wire::assert_inspector_matches_body(WireFormat::Anthropic, "S", &history, &bytes);
}

/// The `usage` events of a three-answer run over `provider`.
async fn usage_events(provider: &str) -> Vec<Value> {
    let script = vec![
        llm::tool("read_file", json!({"path": "a"})),
        llm::tool("read_file", json!({"path": "a"})),
        llm::text("done"),
    ];
    let server = FakeLlm::start(script, Duration::ZERO).await;
    let (home, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mut command = keel(home.path());
    command.args(["-p", "go", "--output-format", "json", "--workdir"]).arg(work.path());
    match provider {
        "anthropic" => {
            command.env("ANTHROPIC_API_KEY", "k").env("ANTHROPIC_BASE_URL", server.anthropic_base())
        }
        _ => command.env("OPENAI_API_KEY", "k").env("OPENAI_BASE_URL", server.openai_base()),
    };
    let output = output_within(&mut command, "a run that reports cache use");
    assert!(output.status.success(), "{}", bin::text(&output.stderr));
    json_lines(&output).into_iter().filter(|event| event["type"] == "usage").collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn cache_reads_and_writes_reach_the_usage_events() {
    let pick = |event: &Value| {
        (
            event["input_tokens"].as_u64(),
            event["cache_read_tokens"].as_u64(),
            event["cache_write_tokens"].as_u64(),
        )
    };
    let anthropic = usage_events("anthropic").await;
    // Anthropic counts the cached part apart from input_tokens; keel's input is the whole prompt.
    assert_eq!(pick(&anthropic[0]), (Some(1000), Some(0), Some(900)));
    assert_eq!(pick(&anthropic[1]), (Some(1100), Some(900), Some(100)));
    let openai = usage_events("openai").await;
    assert_eq!(pick(&openai[0]), (Some(1000), Some(0), Some(0)));
    assert_eq!(pick(&openai[1]), (Some(1000), Some(900), Some(0)));
}

#[tokio::test]
async fn deepseeks_own_name_for_cache_hits_is_read_too() {
    let body = wire::openai_sse(&[
        json!({"choices": [{"index": 0, "delta": {"content": "hi"}, "finish_reason": "stop"}]}),
        json!({"choices": [], "usage": {"prompt_tokens": 50, "completion_tokens": 2,
            "prompt_cache_hit_tokens": 40, "prompt_cache_miss_tokens": 10}}),
    ]);
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    let chunks = futures_util::stream::iter([Ok::<_, std::io::Error>(bytes::Bytes::from(body))]);
    let completion = WireFormat::OpenAi.decode(chunks, &tx).await.unwrap();
    assert_eq!((completion.usage.input_tokens, completion.usage.cache_read_tokens), (50, 40));
}
