//! The request the inspector shows: the whole body the provider's own encoding makes for the
//! history now (`WireFormat::encode`, the bytes `HttpClient` sends), cut into parts — the
//! parameters, the system prompt, the tools, then each message — without building a tree of the
//! whole body: each part stays raw JSON until it is drawn or searched, and its text is kept (it
//! does not depend on the width). Long parts are folded to their first lines until unfolded.

use super::text::{MessageText, Row, rows};
use crate::agent::Snapshot;
use crate::llm::{RequestShape, WireFormat};
use crate::message::History;
use crate::tui::lazy_list::Blocks;
use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::ops::Range;
use std::sync::Arc;

/// Lines of a folded part shown before the note saying how many more there are.
const FOLDED_LINES: usize = 24;

/// One part of the body; a range is where its raw JSON lies in the body.
#[derive(Debug)]
pub(super) enum Part {
    /// Every top-level field that is not the system prompt, the tools or the messages.
    Parameters(Value),
    System(Range<usize>),
    Tools {
        count: usize,
        raw: Range<usize>,
    },
    Message {
        index: usize,
        raw: Range<usize>,
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
    /// The body as encoded; the parts point into it.
    body: Arc<str>,
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
        let (body, parts): (Arc<str>, _) =
            match snapshot.wire_format.encode(&snapshot.request.model, &request) {
                Ok(body) => match String::from_utf8(body) {
                    Ok(body) => {
                        let parts = split(&body);
                        (body.into(), parts)
                    }
                    Err(err) => {
                        ("".into(), vec![Part::Broken(format!("the body is not UTF-8: {err}"))])
                    }
                },
                Err(err) => ("".into(), vec![Part::Broken(err.to_string())]),
            };
        let messages = parts.iter().filter(|part| matches!(part, Part::Message { .. })).count();
        Self {
            history: snapshot.history.clone(),
            system: Arc::clone(&snapshot.system_prompt),
            format: snapshot.wire_format,
            request: snapshot.request.clone(),
            body,
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
                    body.insert("system".into(), self.parse(raw));
                }
                Part::Tools { raw, .. } => {
                    body.insert("tools".into(), self.parse(raw));
                }
                Part::Message { raw, .. } => messages.push(self.parse(raw)),
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
            Some(Part::System(raw)) => MessageText::titled("system", &self.parse(raw)),
            Some(Part::Tools { count, raw }) => {
                MessageText::titled(&format!("tools ({count})"), &self.parse(raw))
            }
            Some(Part::Message { index, raw }) => MessageText::new(*index, &self.parse(raw)),
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

impl Wired {
    /// The part of the body at `raw`, as a JSON tree.
    fn parse(&self, raw: &Range<usize>) -> Value {
        let text = self.body.get(raw.clone()).unwrap_or_default();
        serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_owned()))
    }
}

/// The body's parts in the order shown: parameters, system, tools, messages. One pass over the
/// body, which is neither copied nor built into a tree: each part is where it lies.
fn split(body: &str) -> Vec<Part> {
    let fields = match serde_json::from_str::<TopLevel<'_>>(body) {
        Ok(TopLevel(fields)) => fields,
        Err(err) => return vec![Part::Broken(format!("the body is not a JSON object: {err}"))],
    };
    let at = |raw: &RawValue| {
        let start = raw.get().as_ptr() as usize - body.as_ptr() as usize;
        start..start + raw.get().len()
    };
    let mut parameters = Map::new();
    let (mut system, mut tools, mut messages) = (None, None, Vec::new());
    for (key, field) in fields {
        match (key.as_ref(), field) {
            ("system", Field::Raw(raw)) => system = Some(Part::System(at(raw))),
            ("tools", Field::Raw(raw)) => {
                let count =
                    serde_json::from_str::<Vec<&RawValue>>(raw.get()).map_or(0, |t| t.len());
                tools = Some(Part::Tools { count, raw: at(raw) });
            }
            (_, Field::Messages(list)) => {
                messages = list
                    .into_iter()
                    .enumerate()
                    .map(|(index, raw)| Part::Message { index, raw: at(raw) })
                    .collect();
            }
            (_, Field::Raw(raw)) => {
                let value = serde_json::from_str(raw.get())
                    .unwrap_or_else(|_| Value::String(raw.get().to_owned()));
                parameters.insert(key.into_owned(), value);
            }
        }
    }
    let mut parts = vec![Part::Parameters(Value::Object(parameters))];
    parts.extend(system);
    parts.extend(tools);
    parts.extend(messages);
    parts
}

/// A top-level field of the body: the messages, each where it lies, or any other field whole.
enum Field<'a> {
    Messages(Vec<&'a RawValue>),
    Raw(&'a RawValue),
}

/// The body's top-level fields, read in one pass (the messages split as they are read).
struct TopLevel<'a>(Vec<(Cow<'a, str>, Field<'a>)>);

impl<'de> Deserialize<'de> for TopLevel<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Fields;
        impl<'de> Visitor<'de> for Fields {
            type Value = TopLevel<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a request body")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut fields = Vec::new();
                while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                    let field = if key == "messages" {
                        Field::Messages(map.next_value()?)
                    } else {
                        Field::Raw(map.next_value()?)
                    };
                    fields.push((key, field));
                }
                Ok(TopLevel(fields))
            }
        }
        deserializer.deserialize_map(Fields)
    }
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
