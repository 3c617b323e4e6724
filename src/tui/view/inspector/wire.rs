//! The request the inspector shows: the last body sent, byte for byte as it went on the wire
//! (`Snapshot::last_sent`), or — labelled as such — a preview of the next one, made by the
//! provider's own encoding (`WireFormat::encode`) when nothing has been sent yet. It is cut into
//! parts in the body's own order — the parameters, the system prompt, the tools, then each
//! message — without building a tree of the whole body: each part stays raw JSON until it is
//! drawn or searched, and is shown as it is, keys in the wire's order, so a `cache_control` is
//! where it was sent. Its text is kept (it does not depend on the width). Long parts are folded
//! to their first lines until unfolded.

use super::text::{Laid, MessageText, rows};
use crate::agent::Snapshot;
use crate::llm::{RequestShape, WireFormat};
use crate::message::History;
use crate::tui::lazy_list::Blocks;
use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::ops::Range;
use std::sync::Arc;
use std::time::SystemTime;

/// Lines of a folded part shown before the note saying how many more there are.
const FOLDED_LINES: usize = 24;

/// One part of the body; a range is where its raw JSON lies in the body.
#[derive(Debug)]
pub(super) enum Part {
    /// A run of top-level fields that are not the system prompt, the tools or the messages:
    /// each name as written on the wire, and where its value lies.
    Parameters(Vec<(String, Range<usize>)>),
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

/// Where the body shown came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) enum Source {
    /// Sent at that time: the bytes that went on the wire.
    Sent(SystemTime),
    /// Nothing sent yet in this conversation: the body the next request would carry now.
    #[default]
    Preview,
}

/// The request being inspected.
#[derive(Debug, Default)]
pub(super) struct Wired {
    pub(super) source: Source,
    /// For a preview: what it was made from.
    pub(super) history: History,
    system: Arc<str>,
    request: RequestShape,
    pub(super) format: WireFormat,
    /// The body; the parts point into it.
    body: bytes::Bytes,
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
        let (source, format, body) = match &snapshot.last_sent {
            Some(sent) => (Source::Sent(sent.at), sent.format, Ok(sent.body.clone())),
            None => {
                let request = snapshot.request.request(&snapshot.system_prompt, &snapshot.history);
                let body = snapshot.wire_format.encode(&snapshot.request.model, &request);
                (Source::Preview, snapshot.wire_format, body.map(bytes::Bytes::from))
            }
        };
        let parts = match body.as_ref().map(|body| std::str::from_utf8(body)) {
            Ok(Ok(text)) => split(text),
            Ok(Err(err)) => vec![Part::Broken(format!("the body is not UTF-8: {err}"))],
            Err(err) => vec![Part::Broken(err.to_string())],
        };
        let messages = parts.iter().filter(|part| matches!(part, Part::Message { .. })).count();
        Self {
            source,
            history: snapshot.history.clone(),
            system: Arc::clone(&snapshot.system_prompt),
            request: snapshot.request.clone(),
            format,
            body: body.unwrap_or_default(),
            texts: vec![None; parts.len()],
            parts,
            messages,
            folded,
        }
    }

    /// Whether `snapshot` would show the same body.
    pub(super) fn same_as(&self, snapshot: &Snapshot) -> bool {
        match (&snapshot.last_sent, self.source) {
            (Some(sent), Source::Sent(at)) => {
                at == sent.at && self.format == sent.format && self.body == sent.body
            }
            (None, Source::Preview) => {
                self.format == snapshot.wire_format
                    && self.system == snapshot.system_prompt
                    && self.request == snapshot.request
                    && self.history.ptr_eq(&snapshot.history)
            }
            _ => false,
        }
    }

    /// The bytes of the body shown.
    pub(super) fn bytes(&self) -> &[u8] {
        &self.body
    }

    /// The body put back together from the text of every part as it is shown, unfolded, less
    /// the layout: for tests that hold it to the bytes the server received.
    pub(super) fn shown_json(&self) -> String {
        let mut fields = Vec::new();
        let mut messages = Vec::new();
        for (block, part) in self.parts.iter().enumerate() {
            let json = self.text(block).json();
            match part {
                Part::Parameters(_) => {
                    let inner = json.strip_prefix('{').and_then(|json| json.strip_suffix('}'));
                    fields.push(inner.unwrap_or(&json).to_owned());
                }
                Part::System(_) => fields.push(format!("\"system\":{json}")),
                Part::Tools { .. } => fields.push(format!("\"tools\":{json}")),
                Part::Message { index, .. } => {
                    if *index == 0 {
                        fields.push(String::new());
                    }
                    messages.push(json);
                }
                Part::Broken(_) => {}
            }
        }
        let messages = format!("\"messages\":[{}]", messages.join(","));
        let fields: Vec<String> = fields
            .into_iter()
            .map(|field| if field.is_empty() { messages.clone() } else { field })
            .collect();
        format!("{{{}}}", fields.join(","))
    }

    /// Part `block`'s whole text, made afresh unless it was kept.
    fn text(&self, block: usize) -> Arc<MessageText> {
        if let Some(Some(text)) = self.texts.get(block) {
            return Arc::clone(text);
        }
        let text = match self.parts.get(block) {
            Some(Part::Parameters(fields)) => {
                let fields: Vec<String> = fields
                    .iter()
                    .map(|(key, value)| format!("{key}:{}", self.raw(value)))
                    .collect();
                MessageText::raw("request", &format!("{{{}}}", fields.join(",")))
            }
            Some(Part::System(raw)) => MessageText::raw("system", self.raw(raw)),
            Some(Part::Tools { count, raw }) => {
                MessageText::raw(&format!("tools ({count})"), self.raw(raw))
            }
            Some(Part::Message { index, raw }) => {
                let raw = self.raw(raw);
                let role = serde_json::from_str::<Role<'_>>(raw).ok().and_then(|role| role.role);
                let role = role.as_deref().unwrap_or("message");
                MessageText::raw(&format!("messages[{index}] · {role}"), raw)
            }
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

    /// The text of the body at `raw`.
    fn raw(&self, raw: &Range<usize>) -> &str {
        self.body.get(raw.clone()).and_then(|bytes| std::str::from_utf8(bytes).ok()).unwrap_or("")
    }
}

/// A message's role, read without reading the rest.
#[derive(serde::Deserialize)]
struct Role<'a> {
    #[serde(borrow)]
    role: Option<Cow<'a, str>>,
}

/// The body's parts in its own order: runs of parameters, the system prompt, the tools, the
/// messages. One pass over the body, which is neither copied nor built into a tree: each part is
/// where it lies.
fn split(body: &str) -> Vec<Part> {
    let fields = match serde_json::from_str::<TopLevel<'_>>(body) {
        Ok(TopLevel(fields)) => fields,
        Err(err) => return vec![Part::Broken(format!("the body is not a JSON object: {err}"))],
    };
    let at = |raw: &str| {
        let start = raw.as_ptr() as usize - body.as_ptr() as usize;
        start..start + raw.len()
    };
    let mut parts = Vec::new();
    for (key, field) in fields {
        let part = match (key.as_ref(), field) {
            ("system", Field::Raw(raw)) => Part::System(at(raw.get())),
            ("tools", Field::Raw(raw)) => {
                let count =
                    serde_json::from_str::<Vec<&RawValue>>(raw.get()).map_or(0, |t| t.len());
                Part::Tools { count, raw: at(raw.get()) }
            }
            (_, Field::Messages(list)) => {
                parts.extend(
                    list.into_iter()
                        .enumerate()
                        .map(|(index, raw)| Part::Message { index, raw: at(raw.get()) }),
                );
                continue;
            }
            (_, Field::Raw(raw)) => {
                let field = (wire_key(body, &key), at(raw.get()));
                if let Some(Part::Parameters(fields)) = parts.last_mut() {
                    fields.push(field);
                    continue;
                }
                Part::Parameters(vec![field])
            }
        };
        parts.push(part);
    }
    parts
}

/// A top-level key as the body wrote it, quotes and escapes included: the text itself when it
/// was read in place, else the key written again.
fn wire_key(body: &str, key: &str) -> String {
    let start = (key.as_ptr() as usize).checked_sub(body.as_ptr() as usize);
    let quoted = start.and_then(|start| body.get(start.checked_sub(1)?..start + key.len() + 1));
    match quoted {
        Some(quoted) if quoted.starts_with('"') && quoted.ends_with('"') => quoted.to_owned(),
        _ => serde_json::to_string(key).unwrap_or_default(),
    }
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
}
