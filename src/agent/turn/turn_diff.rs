//! `/diff`: what the newest prompt that changed files changed in the workspace — what `/undo`
//! would revert — told in a line for each file, and handed whole to the front end to show
//! (`Snapshot::turn_diff`). Between turns only: a running turn's changes are not done yet.

use crate::agent::event::AgentEvent;
use crate::agent::turn::Turn;

impl Turn<'_> {
    /// Works out the newest undoable prompt's changes and shows them.
    pub(in crate::agent) fn show_turn_diff(&mut self) {
        let changes = self.state.newest_changes(self.tools.workspace());
        let text = match &changes {
            None => "Nothing to undo, so no changes to show.".to_owned(),
            Some(changes) if changes.diffs.is_empty() => {
                "The last prompt that changed files left them as they were.".to_owned()
            }
            Some(changes) => {
                let files: Vec<String> = changes
                    .diffs
                    .iter()
                    .map(|diff| format!("  {} {}", diff.path, diff.counts()))
                    .collect();
                format!(
                    "What the last prompt that changed files changed (what /undo reverts):\n{}",
                    files.join("\n")
                )
            }
        };
        self.emit(AgentEvent::Notice { text });
        if let Some(changes) = changes.filter(|changes| !changes.diffs.is_empty()) {
            self.state.show_turn_diff(changes);
        }
        self.state.publish(self.outbox);
    }
}
