//! The scripted server for a parent and its child agents (`task`): it tells a child's request
//! from the parent's by keel's child system prompt, and which child it is by a marker in the
//! child's first message (its prompt), then plays that conversation's own script — each step
//! worked out from the request itself, as [`super::answer`] does, so the server stays stateless.
//! A child's script may wait before each answer, and the server keeps every request with the
//! conversation it was for, in the order they came.

use super::{Protocol, ROUTES, Step, answer};
use serde_json::Value;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

/// How keel's child system prompt starts.
pub const CHILD_PROMPT_START: &str = "You are a child agent of keel";

/// One child's script: the marker its prompt holds, its steps, the wait before each answer.
#[derive(Debug, Clone)]
pub struct ChildScript {
    pub marker: String,
    pub steps: Vec<Step>,
    pub delay: Duration,
}

/// A child that answers `steps`, found by `marker` in its prompt.
pub fn child(marker: &str, steps: Vec<Step>) -> ChildScript {
    ChildScript { marker: marker.to_owned(), steps, delay: Duration::ZERO }
}

impl ChildScript {
    /// The same child, waiting `delay` before each answer.
    pub fn slow(self, delay: Duration) -> Self {
        Self { delay, ..self }
    }
}

/// Whose a request was: the parent's (`None`) or a child's (its marker).
pub type Whose = Option<String>;

/// The running server.
pub struct FamilyLlm {
    pub server: MockServer,
    seen: Arc<Mutex<Vec<Seen>>>,
}

/// One request as the server took it: whose it was, its body, its size on the wire.
type Seen = (Whose, Value, usize);

impl FamilyLlm {
    pub async fn start(parent: Vec<Step>, children: Vec<ChildScript>) -> Self {
        let server = MockServer::start().await;
        let seen = Arc::new(Mutex::new(Vec::new()));
        for (route, protocol) in ROUTES {
            let family = Family {
                parent: parent.clone(),
                children: children.clone(),
                protocol,
                seen: Arc::clone(&seen),
            };
            Mock::given(method("POST")).and(path(route)).respond_with(family).mount(&server).await;
        }
        Self { server, seen }
    }

    pub fn anthropic_base(&self) -> String {
        self.server.uri()
    }

    pub fn openai_base(&self) -> String {
        format!("{}/v1", self.server.uri())
    }

    /// Every request so far, with whose it was, in the order they came.
    pub fn requests(&self) -> Vec<(Whose, Value)> {
        self.seen
            .lock()
            .unwrap()
            .iter()
            .map(|(whose, body, _)| (whose.clone(), body.clone()))
            .collect()
    }

    /// Every request so far with its size in bytes as sent, in the order they came.
    pub fn sized(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    /// The parent's requests.
    pub fn parent(&self) -> Vec<Value> {
        self.requests()
            .into_iter()
            .filter(|(whose, _)| whose.is_none())
            .map(|(_, body)| body)
            .collect()
    }

    /// The requests of the child whose prompt holds `marker`.
    pub fn child(&self, marker: &str) -> Vec<Value> {
        self.requests()
            .into_iter()
            .filter(|(whose, _)| whose.as_deref() == Some(marker))
            .map(|(_, body)| body)
            .collect()
    }
}

struct Family {
    parent: Vec<Step>,
    children: Vec<ChildScript>,
    protocol: Protocol,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl Respond for Family {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
        let child = is_child(&body).then(|| {
            let first = first_user_text(&body);
            self.children.iter().find(|child| first.contains(&child.marker))
        });
        let (whose, steps, delay) = match child {
            None => (None, &self.parent, Duration::ZERO),
            Some(Some(child)) => (Some(child.marker.clone()), &child.steps, child.delay),
            Some(None) => (Some("?".to_owned()), &self.parent, Duration::ZERO),
        };
        self.seen.lock().unwrap().push((whose, body.clone(), request.body.len()));
        ResponseTemplate::new(200)
            .insert_header("content-type", "text/event-stream")
            .set_body_string(answer(steps, self.protocol, &body).1)
            .set_delay(delay)
    }
}

/// The system prompt a request carries, in either protocol.
pub fn system_text(body: &Value) -> String {
    match &body["system"] {
        Value::Array(blocks) => {
            blocks.iter().filter_map(|block| block["text"].as_str()).collect::<Vec<_>>().join("")
        }
        Value::String(text) => text.clone(),
        _ => body["messages"][0]["content"]
            .as_str()
            .filter(|_| body["messages"][0]["role"] == "system")
            .unwrap_or_default()
            .to_owned(),
    }
}

/// Whether a request is a child agent's.
pub fn is_child(body: &Value) -> bool {
    system_text(body).starts_with(CHILD_PROMPT_START)
}

/// The text of a request's first user message, in either protocol.
pub fn first_user_text(body: &Value) -> String {
    let Some(first) = body["messages"]
        .as_array()
        .and_then(|messages| messages.iter().find(|m| m["role"] == "user"))
    else {
        return String::new();
    };
    match &first["content"] {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => {
            blocks.iter().filter_map(|block| block["text"].as_str()).collect::<Vec<_>>().join("\n")
        }
        _ => String::new(),
    }
}

/// The names of the tools a request offers, in either protocol.
pub fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|tool| tool["name"].as_str().or_else(|| tool["function"]["name"].as_str()))
        .map(str::to_owned)
        .collect()
}
