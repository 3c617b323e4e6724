//! When a turn snapshots the workspace for undo.
//!
//! A turn's undo group begins at its first tool that can change the workspace. What
//! `write_file` and `edit_file` change, their own records undo exactly, so they need no
//! snapshot. Only a command (`bash`) can change what no record holds: right before a turn's
//! first command the workspace is snapshotted in the shadow repository, and again when the turn
//! ends. A turn that ran no command runs no git at all, and one that ran no changing tool
//! records nothing.
//!
//! The closing snapshot is taken off the critical path: once a command has run, every request
//! sends the model the workspace as the turn has left it so far, and nothing of keel's changes it
//! until the answer's tools run. So the snapshot is started as the request goes out, while the
//! model thinks. If the answer ends the turn, that snapshot is the turn's closing one; if it asks
//! for tools, the snapshot is finished and dropped before any of them runs (they may change the
//! workspace), and the next request starts another.

use super::task::{Agent, TurnUndo};
use crate::tools::ToolName;
use crate::tools::undo::{ObjectId, ShadowError};
use tokio::task::JoinHandle;

/// A snapshot being taken on a blocking thread.
pub(super) type Closing = JoinHandle<Result<ObjectId, ShadowError>>;

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

    /// A request is going out: once the turn has run a command, its closing snapshot starts.
    pub(super) fn start_closing_snapshot(&mut self) {
        if self.turn_undo != TurnUndo::Commands || self.closing.is_some() {
            return;
        }
        if let Some(shadow) = self.state.snapshot_source() {
            self.closing = Some(tokio::task::spawn_blocking(move || shadow.snapshot()));
        }
    }

    /// The answer asks for tools: the snapshot taken meanwhile is not the turn's last, and must
    /// be finished before a tool changes what it reads.
    pub(super) async fn drop_closing_snapshot(&mut self) {
        if let Some(closing) = self.closing.take() {
            let _ = closing.await;
        }
    }

    /// The turn is over: a turn that ran a command is snapshotted as it left the workspace.
    pub(super) async fn end_undo_group(&mut self) {
        let closing = self.closing.take();
        if std::mem::replace(&mut self.turn_undo, TurnUndo::Idle) != TurnUndo::Commands {
            if let Some(closing) = closing {
                let _ = closing.await;
            }
            return;
        }
        let after = match closing {
            Some(closing) => self.taken(closing).await,
            None => self.snapshot().await,
        };
        if let Some(after) = after {
            self.state.end_turn(after);
        }
    }

    /// Snapshots the workspace off the async threads; `None` when the session has no shadow
    /// repository or the snapshot failed (the person is told once).
    async fn snapshot(&mut self) -> Option<ObjectId> {
        let shadow = self.state.snapshot_source()?;
        self.taken(tokio::task::spawn_blocking(move || shadow.snapshot())).await
    }

    /// The snapshot `taking` takes, once it is done; a failure is told once.
    async fn taken(&mut self, taking: Closing) -> Option<ObjectId> {
        match taking.await {
            Ok(Ok(tree)) => Some(tree),
            Ok(Err(err)) => {
                self.state.snapshot_failed(&err);
                None
            }
            Err(_) => None,
        }
    }
}
