//! `State`'s side of undo: the turn's undo group begun, the snapshots around its commands
//! recorded, a failed snapshot told once, and an undo done (and owed to the model, `undo_note`), each written to the session log.

use super::State;
use crate::agent::event::AgentEvent;
use crate::agent::journal::Record;
use crate::agent::snapshot::TurnDiff;
use crate::runtime::Workspace;
use crate::runtime::undo::{ObjectId, Shadow, ShadowError, TurnChanges, UndoContext, UndoReport};
use std::sync::Arc;

impl State {
    /// Where the workspace is snapshotted around a turn's commands; `None` when the session
    /// is not saved.
    pub fn snapshot_source(&mut self) -> Option<Shadow> {
        if self.snapshot_failed {
            return None;
        }
        let written = self.undo.ignore_rules_written();
        let shadow = self.journal.shadow_for_snapshot();
        if let Some(err) = self.journal.take_untold() {
            self.not_saved(&err);
        }
        Some(shadow?.including_ignored_near(&written))
    }

    /// The turn's undo group begins, before its first tool that can change the workspace.
    pub fn begin_turn(&mut self) {
        self.record(&Record::Turn { snapshot: None });
        self.undo.begin_turn(None);
    }

    /// The turn's first command is about to run; `before` is the workspace as it is now.
    pub fn before_commands(&mut self, before: Option<ObjectId>) {
        let snapshot = before.as_ref().map(|id| id.as_str().to_owned());
        self.record(&Record::BeforeCommands { snapshot });
        self.undo.before_commands(before);
    }

    /// The turn is over; `after` is the workspace as it left it.
    pub fn end_turn(&mut self, after: ObjectId) {
        self.record(&Record::TurnEnd { snapshot: after.as_str().to_owned() });
        self.undo.end_turn(after);
    }

    /// A snapshot could not be taken: said once, and no more are tried this session.
    pub fn snapshot_failed(&mut self, err: &ShadowError) {
        if !self.snapshot_failed {
            self.snapshot_failed = true;
            let text = format!(
                "Undo will cover only what write_file and edit_file change, not what bash does: \
                 {err}."
            );
            // One that is not keel's as it was is a warning, which `-p` prints too.
            self.emit(match err {
                ShadowError::Untrusted { .. } => AgentEvent::Error { text },
                _ => AgentEvent::Notice { text },
            });
        }
    }

    /// Puts back what the newest prompt that changed anything changed, in `workspace`.
    pub fn undo(&mut self, workspace: &Workspace) -> UndoReport {
        let shadow = self.journal.shadow();
        let report = self.undo.undo(UndoContext { workspace, shadow: shadow.as_ref() });
        if report.undid {
            self.record(&Record::Undo);
        }
        if let Some(note) = crate::agent::undo_note::note(&report) {
            self.owe_model(note);
        }
        report
    }

    /// What the next undo would revert, worked out without touching anything (`/diff`).
    pub fn newest_changes(&self, workspace: &Workspace) -> Option<TurnChanges> {
        let shadow = self.journal.shadow();
        self.undo.newest_changes(UndoContext { workspace, shadow: shadow.as_ref() })
    }

    /// Hands the front ends a prompt's changes to show whole.
    pub fn show_turn_diff(&mut self, changes: TurnChanges) {
        let asked = self.view.turn_diff.as_ref().map_or(0, |shown| shown.asked) + 1;
        let TurnChanges { diffs, notes } = changes;
        self.view.turn_diff = Some(Arc::new(TurnDiff { asked, diffs, notes }));
    }
}
