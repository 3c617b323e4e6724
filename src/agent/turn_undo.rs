//! When a turn snapshots the workspace for undo.
//!
//! A turn's undo group begins at its first tool that can change the workspace. What
//! `write_file` and `edit_file` change, their own records undo exactly, so they need no
//! snapshot. Only a command (`bash`) can change what no record holds: right before a turn's
//! first command the workspace is snapshotted in the shadow repository, and again when the turn
//! ends. A turn that ran no command runs no git at all, and one that ran no changing tool
//! records nothing.

use super::task::{Agent, TurnUndo};
use crate::tools::ToolName;
use crate::tools::undo::ObjectId;

impl Agent {
    /// Before a tool that can change the workspace: begins the turn's undo group, and before its
    /// first command snapshots the workspace.
    pub(super) async fn before_changing_tool(&mut self, tool: &ToolName) {
        if self.turn_undo == TurnUndo::Idle {
            self.state.begin_turn();
            self.turn_undo = TurnUndo::Files;
        }
        if self.turn_undo == TurnUndo::Files && !tool.records_its_changes() {
            let before = self.snapshot().await;
            self.turn_undo = if before.is_some() { TurnUndo::Commands } else { TurnUndo::Blind };
            self.state.before_commands(before);
        }
    }

    /// The turn is over: a turn that ran a command is snapshotted as it left the workspace.
    pub(super) async fn end_undo_group(&mut self) {
        if std::mem::replace(&mut self.turn_undo, TurnUndo::Idle) == TurnUndo::Commands
            && let Some(after) = self.snapshot().await
        {
            self.state.end_turn(after);
        }
    }

    /// Snapshots the workspace off the async threads; `None` when the session has no shadow
    /// repository or the snapshot failed (the person is told once).
    async fn snapshot(&mut self) -> Option<ObjectId> {
        let shadow = self.state.snapshot_source()?;
        match tokio::task::spawn_blocking(move || shadow.snapshot()).await {
            Ok(Ok(tree)) => Some(tree),
            Ok(Err(err)) => {
                self.state.snapshot_failed(&err);
                None
            }
            Err(_) => None,
        }
    }
}
