//! Helpers shared by the provider and SSE tests: recorded streams of both protocols, SSE body
//! builders, settings with tiny retry delays, and a raw TCP server that can pause, stall or cut
//! a response half way (which wiremock, serving whole bodies, cannot).

use keel::llm::retry::RetryPolicy;
use keel::llm::{
    ChatRequest, Completion, HttpClient, HttpSettings, Protocol, StopReason, StreamEvent,
};
use keel::message::{ContentBlock, History, Usage};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;

/// An Anthropic stream as the API sends it: text with multi-byte characters, a ping, an unknown
/// event, a tool call whose input arrives in fragments, usage at the start and the end.
pub const ANTHROPIC_STREAM: &str = concat!(
    "event: message_start\n",
    r#"data: {"type":"message_start","message":{"id":"msg_01","type":"message","role":"assistant","model":"claude-test","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":25,"cache_creation_input_tokens":0,"cache_read_input_tokens":5,"output_tokens":1}}}"#,
    "\n\n",
    "event: content_block_start\n",
    r#"data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
    "\n\n",
    "event: ping\n",
    r#"data: {"type": "ping"}"#,
    "\n\n",
    "event: content_block_delta\n",
    r#"data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Let me look — "}}"#,
    "\n\n",
    ": a comment line\n",
    "event: content_block_delta\n",
    r#"data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"ünïcode 🚀 and \"quotes\"."}}"#,
    "\n\n",
    "event: something_new\n",
    "data: not even json\n\n",
    "event: content_block_stop\n",
    r#"data: {"type":"content_block_stop","index":0}"#,
    "\n\n",
    "event: content_block_start\n",
    r#"data: {"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_01","name":"bash","input":{}}}"#,
    "\n\n",
    "event: content_block_delta\n",
    r#"data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":""}}"#,
    "\n\n",
    "event: content_block_delta\n",
    r#"data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"comm"}}"#,
    "\n\n",
    "event: content_block_delta\n",
    r#"data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"and\": \"ls -la\"}"}}"#,
    "\n\n",
    "event: content_block_stop\n",
    r#"data: {"type":"content_block_stop","index":1}"#,
    "\n\n",
    "event: message_delta\n",
    r#"data: {"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":42}}"#,
    "\n\n",
    "event: message_stop\n",
    r#"data: {"type":"message_stop"}"#,
    "\n\n",
);

/// What [`ANTHROPIC_STREAM`] decodes to.
pub fn anthropic_completion() -> Completion {
    Completion {
        content: vec![
            ContentBlock::Text { text: "Let me look — ünïcode 🚀 and \"quotes\".".into() },
            ContentBlock::ToolUse {
                id: "toolu_01".into(),
                name: "bash".into(),
                input: json!({"command": "ls -la"}),
            },
        ],
        stop_reason: StopReason::ToolUse,
        usage: Usage {
            input_tokens: 30,
            output_tokens: 42,
            cache_read_tokens: 5,
            cache_write_tokens: 0,
        },
    }
}

/// An OpenAI stream: text, then two tool calls whose fragments are keyed by index (id and name
/// only in the first fragment; the second call has no arguments at all), the finish reason, a
/// usage chunk with no choices, and `[DONE]`.
pub const OPENAI_STREAM: &str = concat!(
    r#"data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}],"usage":null}"#,
    "\n\n",
    r#"data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Checking — ünïcode 🚀"},"finish_reason":null}],"usage":null}"#,
    "\n\n",
    ": keep-alive\n\n",
    r#"data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":" now."},"finish_reason":null}],"usage":null}"#,
    "\n\n",
    r#"data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"read_file","arguments":""}}]},"finish_reason":null}],"usage":null}"#,
    "\n\n",
    r#"data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"path\":"}}]},"finish_reason":null}],"usage":null}"#,
    "\n\n",
    r#"data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":" \"src/main.rs\"}"}}]},"finish_reason":null}],"usage":null}"#,
    "\n\n",
    r#"data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"todo","arguments":""}}]},"finish_reason":null}],"usage":null}"#,
    "\n\n",
    r#"data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}],"usage":null}"#,
    "\n\n",
    r#"data: {"id":"c1","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":120,"completion_tokens":17,"total_tokens":137}}"#,
    "\n\n",
    "data: [DONE]\n\n",
);

/// What [`OPENAI_STREAM`] decodes to.
pub fn openai_completion() -> Completion {
    Completion {
        content: vec![
            ContentBlock::Text { text: "Checking — ünïcode 🚀 now.".into() },
            ContentBlock::ToolUse {
                id: "call_a".into(),
                name: "read_file".into(),
                input: json!({"path": "src/main.rs"}),
            },
            ContentBlock::ToolUse { id: "call_b".into(), name: "todo".into(), input: json!({}) },
        ],
        stop_reason: StopReason::ToolUse,
        usage: Usage { input_tokens: 120, output_tokens: 17, ..Usage::default() },
    }
}

/// An Anthropic SSE body: each value becomes `event: <its type>` and `data: <it>`.
pub fn anthropic_sse(events: &[Value]) -> String {
    events
        .iter()
        .map(|event| {
            let name = event["type"].as_str().unwrap_or("message");
            format!("event: {name}\ndata: {event}\n\n")
        })
        .collect()
}

/// An OpenAI SSE body: each value a `data:` event, then `data: [DONE]`.
pub fn openai_sse(chunks: &[Value]) -> String {
    let mut body: String = chunks.iter().map(|chunk| format!("data: {chunk}\n\n")).collect();
    body.push_str("data: [DONE]\n\n");
    body
}

/// A short Anthropic answer of plain text.
pub fn anthropic_text_stream(text: &str) -> String {
    anthropic_sse(&[
        json!({"type":"message_start","message":{"usage":{"input_tokens":3,"output_tokens":1}}}),
        json!({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}),
        json!({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":text}}),
        json!({"type":"content_block_stop","index":0}),
        json!({"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":5}}),
        json!({"type":"message_stop"}),
    ])
}

/// Retries that wait a millisecond or two.
pub fn fast_retry(max_retries: u32) -> RetryPolicy {
    RetryPolicy {
        max_retries,
        initial_delay: Duration::from_millis(1),
        max_delay: Duration::from_millis(5),
    }
}

/// Settings for a test server at `base_url`: generous timeouts, quick retries.
pub fn settings(base_url: &str, max_retries: u32) -> HttpSettings {
    HttpSettings {
        base_url: base_url.to_owned(),
        api_key: "test-key".to_owned(),
        model: "test-model".to_owned(),
        connect_timeout: Duration::from_secs(5),
        idle_timeout: Duration::from_secs(10),
        stall_timeout: Duration::from_secs(10),
        retry: fast_retry(max_retries),
    }
}

/// The `messages` array of the body a client of protocol `P` sends for `history` (no tools):
/// what the wire rules are checked against, encoded exactly as a request is.
pub fn sent_messages<P: Protocol>(system: &str, history: &History) -> Vec<Value> {
    let client = HttpClient::<P>::new(settings("http://127.0.0.1:9", 0)).unwrap();
    let request = ChatRequest {
        system,
        messages: history,
        tools: &[],
        max_tokens: 64,
        thinking_budget: None,
    };
    let body: Value = serde_json::from_slice(&client.request_bytes(&request).unwrap()).unwrap();
    body["messages"].as_array().unwrap().clone()
}

/// `messages` without their cache breakpoints, for the tests of the other wire rules.
pub fn without_cache_marks(mut messages: Vec<Value>) -> Vec<Value> {
    for message in &mut messages {
        for block in message["content"].as_array_mut().into_iter().flatten() {
            block.as_object_mut().unwrap().remove("cache_control");
        }
    }
    messages
}

/// Everything sent on an event channel so far.
pub fn drain(events: &mut mpsc::UnboundedReceiver<StreamEvent>) -> Vec<StreamEvent> {
    let mut seen = Vec::new();
    while let Ok(event) = events.try_recv() {
        seen.push(event);
    }
    seen
}

/// The text deltas of `events`, joined.
pub fn streamed_text(events: &[StreamEvent]) -> String {
    events
        .iter()
        .filter_map(|event| match event {
            StreamEvent::TextDelta(text) => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

/// The `Retrying` events among `events`, as (attempt, delay, reason).
pub fn retries(events: &[StreamEvent]) -> Vec<(u32, Duration, String)> {
    events
        .iter()
        .filter_map(|event| match event {
            StreamEvent::Retrying { attempt, delay, reason } => {
                Some((*attempt, *delay, reason.clone()))
            }
            _ => None,
        })
        .collect()
}

/// One step of a raw server's reply.
#[derive(Debug, Clone)]
pub enum Step {
    Send(Vec<u8>),
    Pause(Duration),
    /// Keep the connection open and silent (until the test ends).
    Hang,
}

/// The steps of the reply to one connection; the connection closes after the last.
#[derive(Debug, Clone)]
pub struct Reply(pub Vec<Step>);

impl Reply {
    /// A 200 event stream whose body ends with the connection.
    pub fn sse(body: &str) -> Self {
        Self(vec![Step::Send(sse_head()), Step::Send(body.as_bytes().to_vec())])
    }

    /// The first `bytes` of `body`, then the connection closes.
    pub fn cut(body: &str, bytes: usize) -> Self {
        Self(vec![Step::Send(sse_head()), Step::Send(body.as_bytes()[..bytes].to_vec())])
    }

    /// The first `bytes` of `body`, a pause, then the rest.
    pub fn paused(body: &str, bytes: usize, pause: Duration) -> Self {
        Self(vec![
            Step::Send(sse_head()),
            Step::Send(body.as_bytes()[..bytes].to_vec()),
            Step::Pause(pause),
            Step::Send(body.as_bytes()[bytes..].to_vec()),
        ])
    }

    /// The first `bytes` of `body`, then silence.
    pub fn stall(body: &str, bytes: usize) -> Self {
        Self(vec![
            Step::Send(sse_head()),
            Step::Send(body.as_bytes()[..bytes].to_vec()),
            Step::Hang,
        ])
    }
}

fn sse_head() -> Vec<u8> {
    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\nconnection: close\r\n\r\n".to_vec()
}

/// A server on 127.0.0.1 that answers the n-th connection with the n-th reply (the last one
/// repeats), reading each request whole first.
pub struct RawServer {
    pub base_url: String,
    connections: Arc<AtomicUsize>,
    task: tokio::task::JoinHandle<()>,
}

impl RawServer {
    pub async fn start(replies: Vec<Reply>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base_url = format!("http://{}", listener.local_addr().unwrap());
        let connections = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&connections);
        let task = tokio::spawn(async move {
            loop {
                let Ok((socket, _)) = listener.accept().await else {
                    return;
                };
                let n = counter.fetch_add(1, Ordering::SeqCst);
                let reply = replies[n.min(replies.len() - 1)].clone();
                tokio::spawn(serve(socket, reply));
            }
        });
        Self { base_url, connections, task }
    }

    /// How many connections were accepted.
    pub fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }
}

impl Drop for RawServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn serve(mut socket: TcpStream, reply: Reply) {
    if read_request(&mut socket).await.is_none() {
        return;
    }
    for step in reply.0 {
        match step {
            Step::Send(bytes) => {
                if socket.write_all(&bytes).await.is_err() {
                    return;
                }
                let _ = socket.flush().await;
            }
            Step::Pause(duration) => tokio::time::sleep(duration).await,
            Step::Hang => {
                tokio::time::sleep(Duration::from_secs(120)).await;
            }
        }
    }
    let _ = socket.shutdown().await;
}

/// Reads the request head and a `content-length` body; returns the body.
async fn read_request(socket: &mut TcpStream) -> Option<Vec<u8>> {
    let mut data = Vec::new();
    let mut buffer = [0_u8; 8192];
    let head_end = loop {
        let read = socket.read(&mut buffer).await.ok()?;
        if read == 0 {
            return None;
        }
        data.extend_from_slice(&buffer[..read]);
        if let Some(at) = data.windows(4).position(|window| window == b"\r\n\r\n") {
            break at + 4;
        }
    };
    let head = String::from_utf8_lossy(&data[..head_end]).to_ascii_lowercase();
    let length: usize = head
        .lines()
        .find_map(|line| line.strip_prefix("content-length:"))
        .and_then(|value| value.trim().parse().ok())
        .unwrap_or(0);
    while data.len() < head_end + length {
        let read = socket.read(&mut buffer).await.ok()?;
        if read == 0 {
            return None;
        }
        data.extend_from_slice(&buffer[..read]);
    }
    Some(data[head_end..].to_vec())
}

/// A history with every shape the wire rules treat specially: an empty answer between two user
/// turns, results stored after a reminder, an error result, several results in one turn, and a
/// turn of only tool calls.
pub fn tricky_history() -> keel::message::History {
    use keel::message::{ContentBlock, Message, Role};
    let call = |id: &str| ContentBlock::ToolUse {
        id: id.into(),
        name: "bash".into(),
        input: serde_json::json!({"command": "ls"}),
    };
    let result = |id: &str, is_error| ContentBlock::ToolResult {
        tool_use_id: id.into(),
        content: format!("result of {id}"),
        is_error,
    };
    let reminder =
        ContentBlock::Reminder { text: "<reminder>Update your todos.</reminder>".into() };
    keel::message::History::from(vec![
        Message::user_text("Go."),
        Message::assistant(vec![ContentBlock::Text { text: String::new() }]),
        Message::user_text("Still there?"),
        Message::assistant(vec![
            ContentBlock::Text { text: "Yes.".into() },
            call("t1"),
            call("t2"),
        ]),
        Message {
            role: Role::User,
            content: vec![reminder, result("t1", false), result("t2", true)],
        },
        Message::user_text("And the README."),
        Message::assistant(vec![call("t3")]),
        Message { role: Role::User, content: vec![result("t3", false)] },
        Message::assistant(vec![ContentBlock::Text { text: "Done.".into() }]),
    ])
}

/// Checks that the inspector's messages for `history` — located by `WireFormat::spans`, then
/// converted one by one — are the `messages` array of `body`, the request as sent. Returns how
/// many there are.
pub fn assert_inspector_matches_body(
    format: keel::llm::WireFormat,
    system: &str,
    history: &keel::message::History,
    body: &[u8],
) -> usize {
    let body: serde_json::Value = serde_json::from_slice(body).expect("the body is JSON");
    let sent = body["messages"].as_array().cloned().expect("a messages array");
    let shown: Vec<serde_json::Value> = format
        .spans(system, history)
        .iter()
        .map(|span| format.message_at(system, history, span).expect("a message at each span"))
        .collect();
    assert_eq!(shown, sent);
    assert_eq!(format.messages(system, history), sent);
    sent.len()
}
