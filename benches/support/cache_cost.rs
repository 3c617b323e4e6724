//! What a run's requests cost, priced as the provider prices them with the prompt cache as the
//! `cache_control` marks in each request body set it (keel marks the system prompt, the newest
//! message and the newest of the request before): what an earlier request wrote and this one
//! reaches from a breakpoint is a cache read, the rest up to its last breakpoint a cache write,
//! what follows that full-price input, and what the model wrote is output. Also, what of it the
//! board took, part by part (`board_cost`).

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
    /// Input bytes read from the cache, written to it, and sent after the last breakpoint
    /// (neither: full input price).
    pub read: usize,
    pub write: usize,
    pub input: usize,
    /// What the model wrote.
    pub output: usize,
}

impl Priced {
    /// Dollars at list prices with the cache as keel marks it.
    pub fn dollars(&self) -> f64 {
        let tokens = |bytes: usize| bytes as f64 / BYTES_PER_TOKEN;
        let input = tokens(self.read) * CACHE_READ
            + tokens(self.write) * CACHE_WRITE
            + tokens(self.input)
            + tokens(self.output) * OUTPUT;
        input * INPUT_PER_MTOK / 1e6
    }

    pub fn add(&mut self, how: Cached, bytes: usize) {
        match how {
            Cached::Read => self.read += bytes,
            Cached::Written => self.write += bytes,
            Cached::Not => self.input += bytes,
        }
    }
}

/// How the cache took one piece of a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cached {
    /// Within the longest prefix an earlier request wrote: a cache read.
    Read,
    /// After it, up to the request's last breakpoint: a cache write.
    Written,
    /// After the last breakpoint: input at full price.
    Not,
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
        self.parts.iter().map(|part| part.read + part.write + part.input).sum()
    }

    pub fn dollars(&self) -> f64 {
        self.priced.dollars()
    }

    /// The run in a line: requests, bytes, tokens as the cache took them, and dollars.
    pub fn summary(&self) -> String {
        format!(
            "{} requests, {} bytes (~{} tokens), cache reads ~{} / writes ~{} / full-price input ~{} / output ~{} tokens, ${:.4} (${:.4} uncached)",
            self.requests,
            self.total,
            tokens(self.total),
            tokens(self.priced.read),
            tokens(self.priced.write),
            tokens(self.priced.input),
            tokens(self.priced.output),
            self.dollars(),
            self.dollars_uncached(),
        )
    }

    /// Dollars with no cache at all: every input byte at full price.
    pub fn dollars_uncached(&self) -> f64 {
        let tokens = |bytes: usize| bytes as f64 / BYTES_PER_TOKEN;
        (tokens(self.total) + tokens(self.priced.output) * OUTPUT) * INPUT_PER_MTOK / 1e6
    }
}

/// How far before a breakpoint the API looks for an earlier request's cache entry, in blocks.
const LOOKBACK_BLOCKS: usize = 20;

/// One piece of a request in the cache's order — the tools, each system block, then each
/// message's blocks — as it sees it: its text without the cache mark (the key of the prefix
/// it ends), its size, whether it carries a breakpoint, and the board's part it is, if any.
struct Piece {
    key: String,
    size: usize,
    /// Bytes of its message's framing (its role, the brackets) that come with it: the
    /// request's, not the piece's part's.
    framing: usize,
    marked: bool,
    part: Option<Part>,
}

/// A message as the model reads it: without the cache marks, which move every request.
pub fn unmarked(message: &Value) -> Value {
    let mut message = message.clone();
    for block in message["content"].as_array_mut().into_iter().flatten() {
        if let Some(block) = block.as_object_mut() {
            block.remove("cache_control");
        }
    }
    message
}

/// A block without its cache mark, and whether it had one.
fn unmark(block: &Value) -> (Value, bool) {
    let mut block = block.clone();
    let marked = block.as_object_mut().and_then(|fields| fields.remove("cache_control")).is_some();
    (block, marked)
}

/// The pieces of `body`, the board's among them named by `part_of`.
fn pieces(body: &Value, part_of: &mut dyn FnMut(&Value) -> Option<Part>) -> Vec<Piece> {
    let size = |value: &Value| value.to_string().len();
    let mut pieces = Vec::new();
    let tools: Vec<(Value, bool)> =
        body["tools"].as_array().into_iter().flatten().map(unmark).collect();
    if !tools.is_empty() {
        let unmarked: Vec<&Value> = tools.iter().map(|(tool, _)| tool).collect();
        let key = serde_json::to_string(&unmarked).unwrap_or_default();
        let marked = tools.iter().any(|(_, marked)| *marked);
        pieces.push(Piece { size: size(&body["tools"]), framing: 0, key, marked, part: None });
    }
    for block in body["system"].as_array().into_iter().flatten() {
        let (unmarked, marked) = unmark(block);
        let key = unmarked.to_string();
        pieces.push(Piece { key, size: size(block), framing: 0, marked, part: None });
    }
    for message in body["messages"].as_array().into_iter().flatten() {
        let role = message["role"].as_str().unwrap_or_default();
        let blocks = message["content"].as_array().cloned().unwrap_or_default();
        // The message's own framing goes with its first block.
        let mut framing = size(message) - blocks.iter().map(size).sum::<usize>();
        for (index, block) in blocks.iter().enumerate() {
            let (unmarked, marked) = unmark(block);
            // A new message starts a new turn: the same block elsewhere is another prefix.
            let key = format!("{role}{}{unmarked}", if index == 0 { "|" } else { "" });
            // The cache mark is the request's framing too, not the block's.
            let bytes = size(&unmarked);
            let framing = std::mem::take(&mut framing) + (size(block) - bytes);
            pieces.push(Piece { key, size: bytes, framing, marked, part: part_of(&unmarked) });
        }
    }
    pieces
}

/// The prefix keys of `pieces`: each piece's with every one before it.
fn prefix_keys(pieces: &[Piece]) -> Vec<u64> {
    use std::hash::{DefaultHasher, Hash, Hasher};
    let mut hasher = DefaultHasher::new();
    pieces
        .iter()
        .map(|piece| {
            piece.key.hash(&mut hasher);
            hasher.finish()
        })
        .collect()
}

/// Counts what the board took of each request, and what the cache made of it as the
/// breakpoints in each body mark it: at each breakpoint the API reads the longest prefix an
/// earlier request wrote (ending at most [`LOOKBACK_BLOCKS`] pieces before it), writes the rest
/// up to the last breakpoint, and takes what follows it at full price. `closing_output` is what
/// the model wrote after the last request (no request carries it).
pub fn cost(bodies: &[Value], sizes: &[usize], closing_output: usize) -> Cost {
    let mut cost = Cost { requests: sizes.len(), total: sizes.iter().sum(), ..Cost::default() };
    let mut before: Vec<Value> = Vec::new();
    let mut written: HashSet<u64> = HashSet::new();
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
        let mut todo_ids = HashSet::new();
        let mut part_of = |block: &Value| match block["type"].as_str() {
            Some("tool_use") if block["name"] == "todo" => {
                let id = block["id"].as_str().unwrap_or_default();
                todo_ids.insert(id.to_owned());
                Some(calls.part(id, false))
            }
            Some("tool_result")
                if todo_ids.contains(block["tool_use_id"].as_str().unwrap_or_default()) =>
            {
                Some(calls.part(block["tool_use_id"].as_str().unwrap_or_default(), true))
            }
            Some("text") if block["text"].as_str().is_some_and(|t| t.starts_with("<reminder>")) => {
                Some(Part::Reminders)
            }
            _ => None,
        };
        let pieces = pieces(body, &mut part_of);
        let keys = prefix_keys(&pieces);
        let marks: Vec<usize> = (0..pieces.len()).filter(|&at| pieces[at].marked).collect();
        let read_end = marks
            .iter()
            .filter_map(|&mark| {
                (mark.saturating_sub(LOOKBACK_BLOCKS)..=mark)
                    .rev()
                    .find(|&at| written.contains(&keys[at]))
            })
            .max()
            .map_or(0, |at| at + 1);
        let write_end = marks.last().map_or(0, |last| last + 1).max(read_end);
        let how = |at: usize| match at {
            at if at < read_end => Cached::Read,
            at if at < write_end => Cached::Written,
            _ => Cached::Not,
        };
        let mut counted = 0;
        for (at, piece) in pieces.iter().enumerate() {
            cost.priced.add(how(at), piece.size + piece.framing);
            counted += piece.size + piece.framing;
            if let Some(part) = piece.part {
                cost.part(part).add(how(at), piece.size);
            }
        }
        // The body's own framing (model, max_tokens, the arrays' brackets) is never cached.
        cost.priced.input += bytes.saturating_sub(counted);
        let schema: usize = body["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|tool| tool["name"] == "todo")
            .map(|tool| unmark(tool).0.to_string().len())
            .sum();
        cost.part(Part::Schema).add(how(0), schema);
        cost.system = body["system"].to_string().len();
        written.extend(marks.iter().map(|&mark| keys[mark]));
        before = messages;
    }
    cost.priced.output += closing_output;
    cost
}

/// Where a request's cache breakpoints sit, to price other placements than keel's.
#[derive(Debug, Clone, Copy)]
pub struct Breakpoints {
    /// On the (last) system block.
    pub system: bool,
    /// On the last block of these messages, counted from the end (1: the newest).
    pub from_end: &'static [usize],
}

/// `bodies` with their cache marks moved to `at`.
pub fn with_breakpoints(bodies: &[Value], at: Breakpoints) -> Vec<Value> {
    let mark = |block: &mut Value| {
        if let Some(fields) = block.as_object_mut() {
            fields.insert("cache_control".into(), serde_json::json!({"type": "ephemeral"}));
        }
    };
    bodies
        .iter()
        .map(|body| {
            let mut body = body.clone();
            for tool in body["tools"].as_array_mut().into_iter().flatten() {
                tool.as_object_mut().map(|fields| fields.remove("cache_control"));
            }
            let system = body["system"].as_array_mut();
            for block in system.into_iter().flatten() {
                block.as_object_mut().map(|fields| fields.remove("cache_control"));
            }
            if at.system
                && let Some(last) = body["system"].as_array_mut().and_then(|s| s.last_mut())
            {
                mark(last);
            }
            let messages: Vec<Value> =
                body["messages"].as_array().into_iter().flatten().map(unmarked).collect();
            let count = messages.len();
            body["messages"] = Value::Array(messages);
            for from_end in at.from_end {
                let Some(index) = count.checked_sub(*from_end) else { continue };
                let blocks = body["messages"][index]["content"].as_array_mut();
                if let Some(last) = blocks.and_then(|blocks| blocks.last_mut()) {
                    mark(last);
                }
            }
            body
        })
        .collect()
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
