//! The request the inspector shows: the whole body the provider's own encoding makes for the
//! history now (`WireFormat::encode`, the bytes `HttpClient` sends), cut into parts — the
//! parameters, the system prompt, the tools, then each message — without building a tree of the
//! whole body: each part stays raw JSON until it is drawn or searched, and its text is kept (it
//! does not depend on the width). Long parts are folded to their first lines until unfolded.

use super::super::lazy_list::Blocks;
use super::history_text::{MessageText, Row, rows};
use crate::agent::Snapshot;
use crate::llm::{RequestShape, WireFormat};
use crate::message::History;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::sync::Arc;

/// Lines of a folded part shown before the note saying how many more there are.
const FOLDED_LINES: usize = 24;

/// One part of the body.
#[derive(Debug)]
pub(super) enum Part {
    /// Every top-level field that is not the system prompt, the tools or the messages.
    Parameters(Value),
    System(Box<RawValue>),
    Tools {
        count: usize,
        raw: Box<RawValue>,
    },
    Message {
        index: usize,
        raw: Box<RawValue>,
    },
    /// The body could not be made or read: what went wrong.
    Broken(String),
}

/// The request being inspected.
#[derive(Debug, Default)]
pub(super) struct Wired {
    pub(super) history: History,
    pub(super) system: Arc<str>,
    pub(super) format: WireFormat,
    pub(super) request: RequestShape,
    pub(super) parts: Vec<Part>,
    /// How many of the parts are messages.
    pub(super) messages: usize,
    /// Each part's text once made.
    pub(super) texts: Vec<Option<Arc<MessageText>>>,
    /// Long parts show only their first lines.
    pub(super) folded: bool,
}

impl Wired {
    pub(super) fn of(snapshot: &Snapshot, folded: bool) -> Self {
        let request = snapshot.request.request(&snapshot.system_prompt, &snapshot.history);
        let parts = match snapshot.wire_format.encode(&snapshot.request.model, &request) {
            Ok(body) => split(&body),
            Err(err) => vec![Part::Broken(err.to_string())],
        };
        let messages = parts.iter().filter(|part| matches!(part, Part::Message { .. })).count();
        Self {
            history: snapshot.history.clone(),
            system: Arc::clone(&snapshot.system_prompt),
            format: snapshot.wire_format,
            request: snapshot.request.clone(),
            texts: vec![None; parts.len()],
            parts,
            messages,
            folded,
        }
    }

    /// Whether `snapshot` would make the same body.
    pub(super) fn same_as(&self, snapshot: &Snapshot) -> bool {
        self.format == snapshot.wire_format
            && self.system == snapshot.system_prompt
            && self.request == snapshot.request
            && self.history.ptr_eq(&snapshot.history)
    }

    /// The whole body as the inspector holds it, for tests that hold it to what was sent.
    pub(super) fn body(&self) -> Value {
        let mut body = Map::new();
        let mut messages = Vec::new();
        for part in &self.parts {
            match part {
                Part::Parameters(Value::Object(fields)) => body.extend(fields.clone()),
                Part::Parameters(_) | Part::Broken(_) => {}
                Part::System(raw) => {
                    body.insert("system".into(), parse(raw));
                }
                Part::Tools { raw, .. } => {
                    body.insert("tools".into(), parse(raw));
                }
                Part::Message { raw, .. } => messages.push(parse(raw)),
            }
        }
        body.insert("messages".into(), Value::Array(messages));
        Value::Object(body)
    }

    /// Part `block`'s whole text, made afresh unless it was kept.
    fn text(&self, block: usize) -> Arc<MessageText> {
        if let Some(Some(text)) = self.texts.get(block) {
            return Arc::clone(text);
        }
        let text = match self.parts.get(block) {
            Some(Part::Parameters(value)) => MessageText::titled("request", value),
            Some(Part::System(raw)) => MessageText::titled("system", &parse(raw)),
            Some(Part::Tools { count, raw }) => {
                MessageText::titled(&format!("tools ({count})"), &parse(raw))
            }
            Some(Part::Message { index, raw }) => MessageText::new(*index, &parse(raw)),
            Some(Part::Broken(why)) => MessageText::titled("request", &Value::String(why.clone())),
            None => MessageText { lines: Vec::new() },
        };
        Arc::new(text)
    }

    /// Part `block`'s whole text, kept for next time.
    pub(super) fn keep_text(&mut self, block: usize) -> Arc<MessageText> {
        let text = self.text(block);
        if let Some(slot) = self.texts.get_mut(block) {
            *slot = Some(Arc::clone(&text));
        }
        text
    }

    /// Whether line `line` of part `block` is folded away.
    pub(super) fn hides(&self, block: usize, line: usize) -> bool {
        self.folded && line > FOLDED_LINES && self.text(block).folded(FOLDED_LINES).is_some()
    }
}

fn parse(raw: &RawValue) -> Value {
    serde_json::from_str(raw.get()).unwrap_or_else(|_| Value::String(raw.get().to_owned()))
}

/// The body's parts in the order shown: parameters, system, tools, messages.
fn split(body: &[u8]) -> Vec<Part> {
    let fields: BTreeMap<String, Box<RawValue>> = match serde_json::from_slice(body) {
        Ok(fields) => fields,
        Err(err) => return vec![Part::Broken(format!("the body is not a JSON object: {err}"))],
    };
    let mut parameters = Map::new();
    let (mut system, mut tools, mut messages) = (None, None, Vec::new());
    for (key, raw) in fields {
        match key.as_str() {
            "system" => system = Some(Part::System(raw)),
            "tools" => {
                let count =
                    serde_json::from_str::<Vec<&RawValue>>(raw.get()).map_or(0, |t| t.len());
                tools = Some(Part::Tools { count, raw });
            }
            "messages" => match serde_json::from_str::<Vec<Box<RawValue>>>(raw.get()) {
                Ok(list) => {
                    messages = list
                        .into_iter()
                        .enumerate()
                        .map(|(index, raw)| Part::Message { index, raw })
                        .collect();
                }
                Err(err) => messages = vec![Part::Broken(format!("messages: {err}"))],
            },
            _ => {
                parameters.insert(key, parse(&raw));
            }
        }
    }
    let mut parts = vec![Part::Parameters(Value::Object(parameters))];
    parts.extend(system);
    parts.extend(tools);
    parts.extend(messages);
    parts
}

/// A part laid out: its text (folded or whole) and the rows it breaks into at the width.
pub(super) type Laid = (Arc<MessageText>, Vec<Row>);

impl Blocks for Wired {
    type Laid = Laid;

    fn count(&self) -> usize {
        self.parts.len()
    }

    fn lay_out(&self, index: usize, width: usize) -> Laid {
        let text = self.text(index);
        let text = match self.folded.then(|| text.folded(FOLDED_LINES)).flatten() {
            Some(folded) => Arc::new(folded),
            None => text,
        };
        let rows = rows(&text, width);
        (text, rows)
    }

    fn rows(laid: &Laid) -> usize {
        laid.1.len()
    }

    fn is_stable(&self, _index: usize) -> bool {
        true
    }
}
