//! `State`'s list of tool runs, the tool pane's: a run is added when it starts and replaced as
//! it goes on and ends; and how each call ended, and what a search found, for its line.

use super::State;
use crate::agent::snapshot::{ToolRun, ToolStatus};
use std::sync::Arc;

/// How many of the newest tool runs an update looks through: a run changes only while its
/// round runs, so it is among them, and a long session's thousands of older runs are not
/// searched at every call.
const TOOL_RUN_SEARCH: usize = 256;

impl State {
    /// Notes how call `id` ended, when it did not succeed, for its line in the conversation.
    pub fn mark_call(&mut self, id: &str, status: ToolStatus) {
        if !matches!(status, ToolStatus::Succeeded | ToolStatus::Running) {
            self.view.call_marks.insert(id.to_owned(), status);
        }
    }

    /// Notes what call `id`, a search, found, for its line in the conversation and the pane.
    pub fn note_tally(&mut self, id: &str, tally: &str) {
        self.view.call_tallies.insert(id.to_owned(), tally.into());
    }

    /// Replaces the tool run with the same id (among the newest), or adds it.
    pub fn update_tool(&mut self, run: ToolRun) {
        let tools = &self.view.tools;
        let mut newest = tools.iter().rev().take(TOOL_RUN_SEARCH);
        let found =
            newest.position(|existing| existing.id == run.id).map(|at| tools.len() - 1 - at);
        match found {
            Some(index) => {
                self.view.tools.set(index, Arc::new(run));
            }
            None => self.view.tools.push_back(Arc::new(run)),
        }
    }
}
