//! `State`'s methods for a long session: the history compacted (and saved so), and the share of
//! the context window the next request takes.

use super::State;
use crate::agent::journal::Record;
use crate::agent::journal::compaction::{Compaction, apply_masks};
use crate::agent::snapshot::ContextUse;

impl State {
    /// How much of the context window the next request takes, for the status bar.
    pub fn set_context(&mut self, context: ContextUse) {
        self.view.context = context;
    }

    /// Compacts the history as `compaction` says, saving it (the conversation keeps everything;
    /// its `compaction` event marks where the model's view was compacted). Fails, changing
    /// nothing, if its masks name calls the history does not hold.
    pub fn compact(&mut self, compaction: Compaction) -> Result<(), String> {
        let mut history = match &compaction.history {
            Some(history) => history.iter().cloned().collect(),
            None => self.view.history.clone(),
        };
        apply_masks(history.iter_mut(), &compaction.masks)?;
        self.record(&Record::Compaction(compaction.clone()));
        self.view.history = history;
        Ok(())
    }
}
