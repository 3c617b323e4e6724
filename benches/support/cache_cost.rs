//! What a run's requests cost, priced as the provider prices them with the prompt cache as keel
//! marks it (a breakpoint after the tools and system prompt, one on the newest message): what a
//! request shares with the one before is a cache read, the rest a cache write, and what the model
//! wrote is output. Also, what of it the board took, part by part (`board_cost`).

use serde_json::Value;
use std::collections::HashSet;

/// The usual rough figure for English text and JSON.
pub const BYTES_PER_TOKEN: f64 = 4.0;
/// List prices, dollars per million tokens (Claude Sonnet): input, and the multipliers keel's
/// cache marks bring: writes ×1.25, reads ×0.1, output ×5.
pub const INPUT_PER_MTOK: f64 = 3.0;
pub const CACHE_WRITE: f64 = 1.25;
pub const CACHE_READ: f64 = 0.1;
pub const OUTPUT: f64 = 5.0;

/// What the board adds to a run, part by part, in the order of [`LABELS`]: the `todo` tool's
/// schema and description (in every request); the first plan's call (the model's output, then
/// carried) and its answer; the updates between it and the last one, calls and answers; the
/// last update, which closes the board, call and answer; and the reminders.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    Schema,
    PlanCall,
    PlanAnswer,
    UpdateCalls,
    UpdateAnswers,
    Closing,
    Reminders,
}

pub const LABELS: [&str; 7] = [
    "schema",
    "plan call",
    "plan answer",
    "update calls",
    "update answers",
    "closing update",
    "reminders",
];

/// The run's board calls by id: the first is the plan, the last closes the board.
pub struct Calls {
    plan: String,
    closing: String,
}

impl Calls {
    /// From the run's last request, which carries every call.
    pub fn of(bodies: &[Value]) -> Self {
        let ids: Vec<String> = bodies
            .last()
            .and_then(|body| body["messages"].as_array())
            .into_iter()
            .flatten()
            .flat_map(|message| message["content"].as_array().cloned().unwrap_or_default())
            .filter(|block| block["type"] == "tool_use" && block["name"] == "todo")
            .filter_map(|block| block["id"].as_str().map(str::to_owned))
            .collect();
        let first = ids.first().cloned().unwrap_or_default();
        Self { closing: ids.last().cloned().unwrap_or_default(), plan: first }
    }

    /// The part a call (or, with `answer`, its answer) belongs to.
    pub fn part(&self, id: &str, answer: bool) -> Part {
        match (id == self.plan, id == self.closing, answer) {
            (true, _, false) => Part::PlanCall,
            (true, _, true) => Part::PlanAnswer,
            (false, true, _) => Part::Closing,
            (false, false, false) => Part::UpdateCalls,
            (false, false, true) => Part::UpdateAnswers,
        }
    }
}

/// Bytes as the cache prices them.
#[derive(Debug, Default, Clone, Copy)]
pub struct Priced {
    /// Input bytes the request shared with the one before (cache reads) and new (writes).
    pub read: usize,
    pub write: usize,
    /// What the model wrote.
    pub output: usize,
}

impl Priced {
    /// Dollars at list prices with the cache as keel marks it.
    pub fn dollars(&self) -> f64 {
        let tokens = |bytes: usize| bytes as f64 / BYTES_PER_TOKEN;
        let input = tokens(self.read) * CACHE_READ
            + tokens(self.write) * CACHE_WRITE
            + tokens(self.output) * OUTPUT;
        input * INPUT_PER_MTOK / 1e6
    }

    pub fn add(&mut self, cached: bool, bytes: usize) {
        if cached {
            self.read += bytes;
        } else {
            self.write += bytes;
        }
    }
}

/// Where one run's bytes went, and how the cache priced them.
#[derive(Debug, Default)]
pub struct Cost {
    pub requests: usize,
    pub total: usize,
    /// The system prompt's bytes in each request.
    pub system: usize,
    /// The whole run as the cache prices it.
    pub priced: Priced,
    /// What of it the board's parts took, in `LABELS` order.
    pub parts: [Priced; LABELS.len()],
}

impl Cost {
    pub fn part(&mut self, part: Part) -> &mut Priced {
        &mut self.parts[part as usize]
    }

    /// The bytes of the board's parts in the requests sent.
    pub fn board(&self) -> usize {
        self.parts.iter().map(|part| part.read + part.write).sum()
    }

    pub fn dollars(&self) -> f64 {
        self.priced.dollars()
    }

    /// Dollars with no cache at all: every input byte at full price.
    pub fn dollars_uncached(&self) -> f64 {
        let tokens = |bytes: usize| bytes as f64 / BYTES_PER_TOKEN;
        (tokens(self.total) + tokens(self.priced.output) * OUTPUT) * INPUT_PER_MTOK / 1e6
    }
}

/// A message as the cache sees it: without the cache marks, which move every request.
pub fn unmarked(message: &Value) -> Value {
    let mut message = message.clone();
    for block in message["content"].as_array_mut().into_iter().flatten() {
        if let Some(block) = block.as_object_mut() {
            block.remove("cache_control");
        }
    }
    message
}

/// Counts what the board took of each request, and what the cache made of it; `closing_output`
/// is what the model wrote after the last request (no request carries it).
pub fn cost(bodies: &[Value], sizes: &[usize], closing_output: usize) -> Cost {
    let size = |value: &Value| value.to_string().len();
    let mut cost = Cost { requests: sizes.len(), total: sizes.iter().sum(), ..Cost::default() };
    let mut before: Vec<Value> = Vec::new();
    let calls = Calls::of(bodies);
    for (body, &bytes) in bodies.iter().zip(sizes) {
        let messages: Vec<Value> =
            body["messages"].as_array().into_iter().flatten().map(unmarked).collect();
        // The model's answer to the request before is the first message this one adds.
        if let Some(answer) = messages.get(before.len()).filter(|_| !before.is_empty()) {
            cost.priced.output += output(answer);
            for block in answer["content"].as_array().into_iter().flatten() {
                if block["type"] == "tool_use" && block["name"] == "todo" {
                    let part = calls.part(block["id"].as_str().unwrap_or_default(), false);
                    cost.part(part).output += "todo".len() + block["input"].to_string().len();
                }
            }
        }
        let shared = if before.is_empty() {
            0
        } else {
            messages.iter().zip(&before).take_while(|(a, b)| a == b).count()
        };
        let cached = if before.is_empty() {
            0
        } else {
            size(&body["tools"])
                + size(&body["system"])
                + messages[..shared].iter().map(size).sum::<usize>()
        };
        cost.system = size(&body["system"]);
        cost.priced.read += cached;
        cost.priced.write += bytes.saturating_sub(cached);
        let tools = body["tools"].as_array().cloned().unwrap_or_default();
        let schema = tools.iter().filter(|tool| tool["name"] == "todo").map(size).sum::<usize>();
        cost.part(Part::Schema).add(!before.is_empty(), schema);
        let mut todo_ids = HashSet::new();
        for (index, message) in messages.iter().enumerate() {
            let cached = index < shared;
            for block in message["content"].as_array().into_iter().flatten() {
                let part = match block["type"].as_str() {
                    Some("tool_use") if block["name"] == "todo" => {
                        let id = block["id"].as_str().unwrap_or_default();
                        todo_ids.insert(id.to_owned());
                        calls.part(id, false)
                    }
                    Some("tool_result")
                        if todo_ids.contains(block["tool_use_id"].as_str().unwrap_or_default()) =>
                    {
                        calls.part(block["tool_use_id"].as_str().unwrap_or_default(), true)
                    }
                    Some("text")
                        if block["text"].as_str().is_some_and(|t| t.starts_with("<reminder>")) =>
                    {
                        Part::Reminders
                    }
                    _ => continue,
                };
                cost.part(part).add(cached, size(block));
            }
        }
        before = messages;
    }
    cost.priced.output += closing_output;
    cost
}

/// What the model wrote of an answer: its text, and each call's name and input (the call's id
/// and the blocks' framing come from the API, not the model).
pub fn output(answer: &Value) -> usize {
    answer["content"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|block| match block["type"].as_str() {
            Some("text") => block["text"].as_str().map_or(0, str::len),
            Some("tool_use") => {
                block["name"].as_str().map_or(0, str::len) + block["input"].to_string().len()
            }
            _ => block.to_string().len(),
        })
        .sum()
}

pub fn tokens(bytes: usize) -> usize {
    (bytes as f64 / BYTES_PER_TOKEN) as usize
}
