//! A scripted LLM server on 127.0.0.1 that speaks the real wire protocols.
//!
//! It answers `POST /v1/messages` (Anthropic) and `POST /v1/chat/completions` (OpenAI-compatible)
//! with SSE streams shaped as the vendors send them (built in `sse_bodies`). Which step of the
//! script it plays is worked out from the request itself — one step per assistant message already
//! in it — so the server is stateless: a client that is killed and resumes picks up where the
//! history says it is. When the newest results say calls were interrupted or cut off by a crash,
//! it asks for exactly those calls again (having "checked their effects"), as a model would, and
//! that answer does not count as a step. [`raw::RawLlm`] serves the same script over a bare socket
//! and can hold an answer back, whole or half sent, for tests that kill keel while it waits.

pub mod chunked;
pub mod family;
pub mod follower;
pub mod raw;
pub mod reasoning;
mod sse_bodies;
pub mod valid;
pub mod window;

pub use sse_bodies::{anthropic_sse, anthropic_sse_with, openai_sse, openai_sse_with};

use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;
use std::time::Duration;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

/// One scripted answer: reasoning, text, then tool calls.
#[derive(Debug, Clone, Default)]
pub struct Step {
    pub text: String,
    pub tools: Vec<(String, Value)>,
    /// The answer stops at the output limit (`max_tokens`, `length`): the text as given, the
    /// last tool call's arguments cut in half.
    pub cut: bool,
    /// Reasoning before the answer: a signed `thinking` block (Anthropic) or `reasoning_content`
    /// deltas (OpenAI-compatible).
    pub thinking: Option<String>,
    /// A `redacted_thinking` block's data after the thinking (Anthropic).
    pub redacted: Option<String>,
}

impl Step {
    /// The same answer, cut at the output limit.
    pub fn cut(self) -> Self {
        Self { cut: true, ..self }
    }

    /// The same answer after this reasoning.
    pub fn thinking(self, thinking: &str) -> Self {
        Self { thinking: Some(thinking.to_owned()), ..self }
    }

    /// The same answer with a redacted thinking block holding `data`.
    pub fn redacted(self, data: &str) -> Self {
        Self { redacted: Some(data.to_owned()), ..self }
    }
}

pub fn text(text: &str) -> Step {
    Step { text: text.to_owned(), ..Step::default() }
}

pub fn tool(name: &str, input: Value) -> Step {
    Step { tools: vec![(name.to_owned(), input)], ..Step::default() }
}

/// A board of `total` items where the first `done` are completed and the next is in progress.
pub fn board(done: usize, total: usize) -> Value {
    let items: Vec<Value> = (1..=total)
        .map(|i| {
            let status = if i <= done {
                "completed"
            } else if i == done + 1 {
                "in_progress"
            } else {
                "pending"
            };
            json!({"id": i.to_string(), "text": format!("Step {i}"), "status": status})
        })
        .collect();
    json!({ "items": items })
}

/// The ten-step task: a plan, then for each step a file write, a command and a board update,
/// then a closing answer — 32 model requests in all. Each step appends its number to
/// `progress.log`, so a step done twice shows.
pub fn ten_step_task() -> Vec<Step> {
    const STEPS: usize = 10;
    let mut steps = vec![Step { text: "Planning.".into(), ..tool("todo", board(0, STEPS)) }];
    for k in 1..=STEPS {
        steps.push(tool(
            "write_file",
            json!({"path": format!("step_{k}.txt"), "content": format!("step {k}\n")}),
        ));
        let command = format!(
            "grep -qx 'step {k}' progress.log 2>/dev/null || cat step_{k}.txt >> progress.log"
        );
        steps.push(tool("bash", json!({ "command": command })));
        steps.push(tool("todo", board(k, STEPS)));
    }
    steps.push(text("All 10 steps are done."));
    steps
}

/// The five-round task: a plan, a read, a write, a command with the board finished, then a
/// closing answer — five model requests, the shape of a small everyday task.
pub fn five_round_task() -> Vec<Step> {
    vec![
        Step { text: "Planning.".into(), ..tool("todo", board(0, 2)) },
        tool("read_file", json!({"path": "notes.txt"})),
        tool("write_file", json!({"path": "notes.txt", "content": "hello, world\n"})),
        Step {
            text: String::new(),
            tools: vec![
                ("bash".into(), json!({"command": "cat notes.txt"})),
                ("todo".into(), board(2, 2)),
            ],
            ..Step::default()
        },
        text("Done: notes.txt now says hello, world."),
    ]
}

/// Which protocol a request spoke.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    Anthropic,
    OpenAi,
}

/// Where each protocol's requests come.
pub(crate) const ROUTES: [(&str, Protocol); 2] =
    [("/v1/messages", Protocol::Anthropic), ("/v1/chat/completions", Protocol::OpenAi)];

/// The running server.
pub struct FakeLlm {
    pub server: MockServer,
}

impl FakeLlm {
    /// Serves `steps` on both protocols, waiting `delay` before each answer.
    pub async fn start(steps: Vec<Step>, delay: Duration) -> Self {
        Self::serve(steps, delay, false).await
    }

    /// Like [`FakeLlm::start`], but refusing with a 400, as the vendors do, any request that
    /// does not send an earlier answer's reasoning back exactly (see `reasoning`).
    pub async fn start_checking(steps: Vec<Step>) -> Self {
        Self::serve(steps, Duration::ZERO, true).await
    }

    /// Like [`FakeLlm::start`], with the switches of a finite context window (see `window`).
    pub async fn start_with(steps: Vec<Step>, switches: window::Switches) -> Self {
        Self::serve_with(steps, Duration::ZERO, false, switches).await
    }

    /// A server whose model follows only the board keel renders back to it, over `steps` steps
    /// with `chatter` bytes of its own words beside each (see `follower`), with the switches of
    /// a finite context window.
    pub async fn start_following(steps: usize, chatter: usize, switches: window::Switches) -> Self {
        let server = MockServer::start().await;
        let answered = Arc::new(AtomicUsize::new(0));
        for (route, protocol) in ROUTES {
            let answered = Arc::clone(&answered);
            let model = follower::Follower { steps, chatter, protocol, switches, answered };
            Mock::given(method("POST")).and(path(route)).respond_with(model).mount(&server).await;
        }
        Self { server }
    }

    async fn serve(steps: Vec<Step>, delay: Duration, checking: bool) -> Self {
        Self::serve_with(steps, delay, checking, window::Switches::default()).await
    }

    async fn serve_with(
        steps: Vec<Step>,
        delay: Duration,
        checking: bool,
        switches: window::Switches,
    ) -> Self {
        let server = MockServer::start().await;
        for (route, protocol) in ROUTES {
            Mock::given(method("POST"))
                .and(path(route))
                .respond_with(Script { steps: steps.clone(), protocol, delay, checking, switches })
                .mount(&server)
                .await;
        }
        Self { server }
    }

    /// The base URL as `ANTHROPIC_BASE_URL` takes it (no `/v1`).
    pub fn anthropic_base(&self) -> String {
        self.server.uri()
    }

    /// The base URL as `OPENAI_BASE_URL` takes it (with `/v1`).
    pub fn openai_base(&self) -> String {
        format!("{}/v1", self.server.uri())
    }

    /// The bodies of the requests received so far, byte for byte.
    pub async fn raw_bodies(&self) -> Vec<Vec<u8>> {
        let requests = self.server.received_requests().await.unwrap_or_default();
        requests.into_iter().map(|request| request.body).collect()
    }

    /// The JSON bodies of the requests received so far.
    pub async fn bodies(&self) -> Vec<Value> {
        self.server
            .received_requests()
            .await
            .unwrap_or_default()
            .iter()
            .filter_map(|request| serde_json::from_slice(&request.body).ok())
            .collect()
    }
}

struct Script {
    steps: Vec<Step>,
    protocol: Protocol,
    delay: Duration,
    checking: bool,
    switches: window::Switches,
}

impl Respond for Script {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
        if let Some(reply) =
            window::respond(&self.steps, self.protocol, self.switches, &request.body, &body)
        {
            return reply;
        }
        let messages = body["messages"].as_array().cloned().unwrap_or_default();
        if self.checking
            && let Some(refusal) = reasoning::refusal(self.protocol, &self.steps, &messages)
        {
            return ResponseTemplate::new(400)
                .insert_header("content-type", "application/json")
                .set_body_string(refusal.to_string());
        }
        ResponseTemplate::new(200)
            .insert_header("content-type", "text/event-stream")
            .set_body_string(answer(&self.steps, self.protocol, &body).1)
            .set_delay(self.delay)
    }
}

/// The text of an answer that asks again for calls that were cut short.
pub const RETRY_TEXT: &str = "Checked what those calls left; trying them again.";
/// What a result says when its call was cut short, by the person or by a crash (not a call the
/// output limit cut, which the model is told to send again differently).
const CUT_SHORT: [&str; 2] = ["interrupted", "the keel process stopped while this ran"];

/// Which step a request asks for (`None`: a retry of cut-short calls) and the SSE answer.
pub fn answer(steps: &[Step], protocol: Protocol, body: &Value) -> (Option<usize>, String) {
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let answered = messages.iter().filter(|m| m["role"] == "assistant").count();
    let (index, step) = match cut_short_calls(&messages) {
        calls if !calls.is_empty() => (None, Step { tools: calls, ..text(RETRY_TEXT) }),
        _ => {
            let retries = messages
                .iter()
                .filter(|m| m["role"] == "assistant" && assistant_text(m).contains(RETRY_TEXT))
                .count();
            let index = answered - retries;
            (Some(index), steps.get(index).cloned().unwrap_or_else(|| text("The script is over.")))
        }
    };
    let sse = match protocol {
        Protocol::Anthropic => anthropic_sse(&step, answered),
        Protocol::OpenAi => openai_sse(&step, answered),
    };
    (index, sse)
}

fn assistant_text(message: &Value) -> String {
    match &message["content"] {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => {
            blocks.iter().filter_map(|b| b["text"].as_str()).collect::<Vec<_>>().join("")
        }
        _ => String::new(),
    }
}

/// The calls of the newest answer whose results say they were cut short, in order.
fn cut_short_calls(messages: &[Value]) -> Vec<(String, Value)> {
    let cut = |text: &Value| text.as_str().is_some_and(|t| CUT_SHORT.iter().any(|w| t.contains(w)));
    let Some(last) = messages.iter().rposition(|m| m["role"] == "assistant") else {
        return Vec::new();
    };
    let after = &messages[last + 1..];
    // Anthropic: tool_use blocks, answered by tool_result blocks in the next user message.
    if let Some(blocks) = messages[last]["content"].as_array() {
        let results: Vec<&Value> = after
            .iter()
            .flat_map(|m| m["content"].as_array().into_iter().flatten())
            .filter(|b| b["type"] == "tool_result")
            .collect();
        return blocks
            .iter()
            .filter(|b| b["type"] == "tool_use")
            .filter(|b| results.iter().any(|r| r["tool_use_id"] == b["id"] && cut(&r["content"])))
            .map(|b| (b["name"].as_str().unwrap_or_default().to_owned(), b["input"].clone()))
            .collect();
    }
    // OpenAI-compatible: tool_calls, answered by the `tool` messages that follow.
    messages[last]["tool_calls"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| after.iter().any(|m| m["tool_call_id"] == c["id"] && cut(&m["content"])))
        .map(|c| {
            let arguments = c["function"]["arguments"].as_str().unwrap_or("{}");
            let input = serde_json::from_str(arguments).unwrap_or(Value::Null);
            (c["function"]["name"].as_str().unwrap_or_default().to_owned(), input)
        })
        .collect()
}
