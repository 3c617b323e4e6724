//! `State`'s notes the model is owed: what keel must tell the model of something that happened
//! between its requests — an undo that put files back, a command the person ran (`!`). Each is
//! saved as it is owed and sent once, with the next request, as keel's own text after the
//! prompt or the tool results (as the person's board changes are; docs/board.md). A resumed
//! session, or one `keel undo` changed while it was closed, still owes what it owed.

use super::State;
use crate::agent::journal::Record;
use crate::message::ContentBlock;

impl State {
    /// Owes the model `text` with its next request.
    pub fn owe_model(&mut self, text: String) {
        self.record(&Record::ModelNote { text: text.clone() });
        self.model_notes.push(text);
    }

    /// The notes owed, as the blocks the next request carries; none once sent.
    pub fn take_model_notes(&mut self) -> Vec<ContentBlock> {
        if self.model_notes.is_empty() {
            return Vec::new();
        }
        self.record(&Record::ModelNotesTold);
        self.model_notes.drain(..).map(|text| ContentBlock::Note { text }).collect()
    }
}
