//! `State`'s list of tool runs, the tool pane's: a run is added when it starts and replaced as
//! it goes on and ends; and how each call ended, and what a search found, for its line.

use super::State;
use crate::agent::snapshot::{CallMark, ToolRun, ToolStatus};
use crate::tools::bash::hint::SandboxHint;
use crate::tools::{Effect, ToolCall};
use std::sync::Arc;

/// How many of the newest tool runs an update looks through: a run changes only while its
/// round runs, so it is among them, and a long session's thousands of older runs are not
/// searched at every call.
const TOOL_RUN_SEARCH: usize = 256;

impl State {
    /// Notes how call `call` ended, answered `result`, when it did not succeed or the sandbox
    /// had a hand in it, for its line in the conversation.
    pub fn mark_call(&mut self, call: &ToolCall, status: ToolStatus, result: &str) {
        let hint = (call.effect() == Some(Effect::RunsCommand))
            .then(|| SandboxHint::in_result(result))
            .flatten();
        if matches!(status, ToolStatus::Succeeded | ToolStatus::Running) && hint.is_none() {
            return;
        }
        let rejected =
            call.effect().is_some_and(Effect::updates_board) && status == ToolStatus::Failed;
        let reason = rejected.then(|| result.lines().next().unwrap_or_default().into());
        self.view.call_marks.insert(call.id.clone(), CallMark { status, hint, reason });
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
