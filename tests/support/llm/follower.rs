//! A scripted model that keeps no plan of its own: each answer is worked out only from what keel
//! renders back about the board. It reads the request from the end for the newest thing keel
//! said of the board — a `todo` answer, the reminder, compaction's note — and, when that is the
//! whole board, runs the command of the item in progress (or the first one not started) with the
//! `update` that completes it and starts the next, as the system prompt asks; with every item
//! completed it says it is done. When keel said nothing of the board yet it plans; when the
//! newest thing keel said is not a whole board, it cannot know where it stands and plans again
//! from the start (a re-plan). It gives up after [`MAX_RESPONSES`] answers.
//!
//! It serves a finite window as `window` does (the same refusals, counted usage, summaries, a
//! strict check of the history), with a fresh id for every call it makes.

use super::window::{self, Switches, refusal};
use super::{Protocol, Step, anthropic_sse_with, openai_sse_with, text, tool, valid};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use wiremock::{Request, Respond, ResponseTemplate};

/// Answers after which the model gives up.
pub const MAX_RESPONSES: usize = 100;
/// What it says when the board shows every item completed.
pub const DONE: &str = "Every step on the board is done.";
/// What it says when it gives up.
pub const GIVING_UP: &str = "Giving up: too many answers.";
/// The line of an item of the plan: its step's number, then what it does.
pub fn item_text(step: usize) -> String {
    format!("Step {step}: append its line to progress.log and print big.txt")
}

/// The command of step `step`.
pub fn command(step: usize) -> String {
    format!("echo 'step {step}' >> progress.log && cat big.txt")
}

/// The model, answering on one protocol.
pub struct Follower {
    pub steps: usize,
    /// Bytes of the model's own words beside each step's calls (they are never masked, so
    /// enough of them make keel summarise).
    pub chatter: usize,
    pub protocol: Protocol,
    pub switches: Switches,
    /// Answers given so far, on either protocol: each call's id is numbered by it.
    pub answered: Arc<AtomicUsize>,
}

impl Respond for Follower {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
        if let Some((max, words)) =
            self.switches.max_body.filter(|(max, _)| request.body.len() > *max)
        {
            let max_tokens = body["max_tokens"].as_u64().unwrap_or_default();
            return refusal(words, request.body.len(), max, max_tokens);
        }
        let messages = body["messages"].as_array().map_or(&[][..], Vec::as_slice);
        if let Some(problem) = valid::problem(self.protocol, &[], messages) {
            let error = json!({"type": "error", "error": {"type": "invalid_request_error", "message": problem}});
            return ResponseTemplate::new(400).set_body_string(error.to_string());
        }
        let step = if window::is_summary_request(&body) {
            text(window::SUMMARY)
        } else {
            self.next(&body)
        };
        let index = self.answered.fetch_add(1, Ordering::SeqCst);
        let counted = Some((request.body.len() / window::BYTES_PER_TOKEN) as u64);
        let sse = match self.protocol {
            Protocol::Anthropic => anthropic_sse_with(&step, index, counted),
            Protocol::OpenAi => openai_sse_with(&step, index, counted),
        };
        ResponseTemplate::new(200)
            .insert_header("content-type", "text/event-stream")
            .set_body_string(sse)
    }
}

impl Follower {
    /// The answer to a request, from the board keel rendered in it.
    fn next(&self, body: &Value) -> Step {
        if self.answered.load(Ordering::SeqCst) >= MAX_RESPONSES {
            return text(GIVING_UP);
        }
        let said = board_texts(self.protocol, body);
        let Some(newest) = said.last() else { return self.plan() };
        let Some(items) = parse_board(newest) else { return self.plan() };
        let open = items.iter().find(|(marker, _)| marker == "[>]");
        let open = open.or_else(|| items.iter().find(|(marker, _)| marker == "[ ]"));
        let Some((_, id)) = open else { return text(DONE) };
        let Ok(step) = id.parse::<usize>() else { return self.plan() };
        let mut entries = vec![json!({"id": id, "status": "completed"})];
        if step < self.steps {
            entries.push(json!({"id": (step + 1).to_string(), "status": "in_progress"}));
        }
        let words = format!("Step {step}: appending its line and printing the file. ");
        let chatter = words.repeat(self.chatter / words.len() + 1)[..self.chatter].to_owned();
        Step {
            text: chatter,
            tools: vec![
                ("bash".into(), json!({"command": command(step)})),
                ("todo".into(), json!({"update": entries})),
            ],
            ..Step::default()
        }
    }

    /// The plan, from the start: every step, the first in progress.
    fn plan(&self) -> Step {
        let items: Vec<Value> = (1..=self.steps)
            .map(|k| {
                let status = if k == 1 { "in_progress" } else { "pending" };
                json!({"id": k.to_string(), "text": item_text(k), "status": status})
            })
            .collect();
        tool("todo", json!({ "items": items }))
    }
}

/// What keel said of the board in a request, oldest first: the answers to `todo` calls that
/// were taken (not errors, not the line a superseded one becomes), and keel's own notes.
pub fn board_texts(protocol: Protocol, body: &Value) -> Vec<String> {
    let messages = body["messages"].as_array().map_or(&[][..], Vec::as_slice);
    let mut todo_calls = Vec::new();
    let mut said = Vec::new();
    let note = |text: &str| {
        ["<reminder>", "<board-edit>", "keel compacted the conversation"]
            .iter()
            .any(|mark| text.contains(mark))
    };
    for message in messages {
        match protocol {
            Protocol::Anthropic => {
                for block in message["content"].as_array().into_iter().flatten() {
                    let content = block["content"].as_str().unwrap_or_default();
                    match block["type"].as_str() {
                        Some("tool_use") if block["name"] == "todo" => {
                            todo_calls.push(block["id"].clone())
                        }
                        Some("tool_result")
                            if todo_calls.contains(&block["tool_use_id"])
                                && block["is_error"] != json!(true) =>
                        {
                            said.push(content.to_owned());
                        }
                        Some("text") => {
                            let text = block["text"].as_str().unwrap_or_default();
                            if note(text) {
                                said.push(text.to_owned());
                            }
                        }
                        _ => {}
                    }
                }
                if let Some(text) = message["content"].as_str().filter(|text| note(text)) {
                    said.push(text.to_owned());
                }
            }
            Protocol::OpenAi => {
                for call in message["tool_calls"].as_array().into_iter().flatten() {
                    if call["function"]["name"] == "todo" {
                        todo_calls.push(call["id"].clone());
                    }
                }
                let content = message["content"].as_str().unwrap_or_default();
                match message["role"].as_str() {
                    Some("tool")
                        if todo_calls.contains(&message["tool_call_id"])
                            && !content.starts_with("Error: ") =>
                    {
                        said.push(content.to_owned());
                    }
                    Some("user") if note(content) => said.push(content.to_owned()),
                    _ => {}
                }
            }
        }
    }
    said.retain(|text| !text.starts_with("[board superseded"));
    said
}

/// The items of the whole board `text` carries, as (marker, id), when it carries one: item lines
/// as docs/board.md draws them, a blank line, and the progress line that counts them.
pub fn parse_board(text: &str) -> Option<Vec<(String, String)>> {
    if text.trim_end().ends_with("No todos.") {
        return Some(Vec::new());
    }
    let lines: Vec<&str> = text.lines().collect();
    let progress =
        lines.iter().rposition(|line| line.ends_with(" completed)") && line.starts_with('('))?;
    let total: usize =
        lines[progress].trim_start_matches('(').split(['/', ' ']).nth(1)?.parse().ok()?;
    if progress < 2 || !lines[progress - 1].is_empty() {
        return None;
    }
    let items: Vec<(String, String)> = lines[..progress - 1]
        .iter()
        .rev()
        .map_while(|line| {
            let (marker, rest) = line.split_at_checked(3)?;
            let id = rest.strip_prefix(" #")?.split_once(": ")?.0;
            ["[ ]", "[>]", "[x]"].contains(&marker).then(|| (marker.to_owned(), id.to_owned()))
        })
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    (items.len() == total).then_some(items)
}
