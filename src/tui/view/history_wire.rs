//! The history the inspector shows, located in its wire format: where each message of the
//! `messages` array comes from, and each message's text, made when first drawn or searched and
//! kept (it does not depend on the width).

use super::super::lazy_list::Blocks;
use super::history_text::{MessageText, Row, rows};
use crate::agent::Snapshot;
use crate::llm::{WireFormat, WireSpan};
use crate::message::History;
use std::sync::Arc;

/// The history being inspected, located in its wire format.
#[derive(Debug, Default)]
pub(super) struct Wired {
    pub(super) history: History,
    pub(super) system: Arc<str>,
    pub(super) format: WireFormat,
    pub(super) spans: Vec<WireSpan>,
    /// Each message's text once made (it does not depend on the width).
    pub(super) texts: Vec<Option<Arc<MessageText>>>,
}

impl Wired {
    pub(super) fn of(snapshot: &Snapshot) -> Self {
        let spans = snapshot.wire_format.spans(&snapshot.system_prompt, &snapshot.history);
        Self {
            history: snapshot.history.clone(),
            system: Arc::clone(&snapshot.system_prompt),
            format: snapshot.wire_format,
            texts: vec![None; spans.len()],
            spans,
        }
    }

    /// Message `block`'s text, made afresh unless it was kept.
    fn text(&self, block: usize) -> Arc<MessageText> {
        if let Some(Some(text)) = self.texts.get(block) {
            return Arc::clone(text);
        }
        let message = self
            .spans
            .get(block)
            .and_then(|span| self.format.message_at(&self.system, &self.history, span));
        Arc::new(
            message.map_or(MessageText { lines: Vec::new() }, |message| {
                MessageText::new(block, &message)
            }),
        )
    }

    /// Message `block`'s text, kept for next time.
    pub(super) fn keep_text(&mut self, block: usize) -> Arc<MessageText> {
        let text = self.text(block);
        if let Some(slot) = self.texts.get_mut(block) {
            *slot = Some(Arc::clone(&text));
        }
        text
    }
}

/// A message laid out: its text and the rows it breaks into at the width.
pub(super) type Laid = (Arc<MessageText>, Vec<Row>);

impl Blocks for Wired {
    type Laid = Laid;

    fn count(&self) -> usize {
        self.spans.len()
    }

    fn lay_out(&self, index: usize, width: usize) -> Laid {
        let text = self.text(index);
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
