//! When a turn snapshots the workspace for undo.
//!
//! A turn's undo group begins at its first tool that can change the workspace. What
//! `write_file` and `edit_file` change, their own records undo exactly, so they need no
//! snapshot. Only a command (`bash`) can change what no record holds: before a turn's first
//! command runs the workspace is snapshotted in the shadow repository, and again when the turn
//! ends. A turn that ran no command runs no git at all, and one that ran no changing tool
//! records nothing.
//!
//! The closing snapshot is started early, as the round of a command that left nothing running
//! ends, while the model is asked what next: if nothing that can change the workspace runs
//! after it (the model only reads, or answers), it is the turn's closing snapshot. A tool that
//! can change the workspace waits for it to finish and sets it aside; the turn's end then
//! snapshots as before.
//!
//! The opening snapshot is started as the call is taken up, and written while the call is
//! approved and its sandbox starts: the shell waits at its [gate](crate::runtime::gate) until the
//! snapshot is recorded. A tool that cannot wait at a gate (an MCP tool that changes things)
//! waits for it before it runs. A call that does not run has it recorded all the same, as
//! before any command.

use crate::agent::state::State;
use crate::agent::turn::handle::Handle;
use crate::runtime::gate::{self, Gate, Opener};
use crate::runtime::undo::{ObjectId, ShadowError};
use crate::tools::{Effect, ToolCall};
use tokio::task::{JoinError, JoinHandle};

/// What taking a snapshot off the async threads gives.
type Taken = Result<Result<ObjectId, ShadowError>, JoinError>;

/// A snapshot being taken off the async threads.
pub(in crate::agent) type Snapshotting = JoinHandle<Result<ObjectId, ShadowError>>;

/// Where the running turn's undo group stands.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(in crate::agent) enum TurnUndo {
    /// No tool that can change the workspace has run in this turn (or no turn is running).
    #[default]
    Idle,
    /// The group has begun; only file tools, whose records undo them, have run.
    Files,
    /// A command ran with a snapshot before it: the turn owes one after it.
    Commands,
    /// A command ran with no snapshot before it (none could be taken).
    Blind,
}

/// A conversation's undo group for the turn running now.
#[derive(Debug, Default)]
pub(in crate::agent) struct UndoGroup {
    pub stage: TurnUndo,
    /// The turn's closing snapshot, taken early: as the round of its last command ended.
    pub closing: Option<Snapshotting>,
}

/// The opening snapshot being taken while a command is approved and its sandbox starts, and
/// the gate the command waits at until the snapshot is recorded.
pub(in crate::agent) struct Opening {
    pub(in crate::agent) task: Snapshotting,
    pub(in crate::agent) opener: Opener,
    pub(in crate::agent) gate: Gate,
}

impl UndoGroup {
    /// Before a tool that can change the workspace: begins the turn's undo group. Returns whether
    /// the workspace must be snapshotted before this tool runs (it is the turn's first command).
    pub async fn before_changing_tool(&mut self, state: &mut State, effect: Effect) -> bool {
        // Taken before this tool, the early closing snapshot is not the turn's last state.
        if let Some(early) = self.closing.take() {
            let _ = early.await;
        }
        if self.stage == TurnUndo::Idle {
            state.begin_turn();
            self.stage = TurnUndo::Files;
        }
        self.stage == TurnUndo::Files && !effect.records_its_changes()
    }

    /// Starts the snapshot before the turn's first command, and the gate that holds the command
    /// until it is recorded ([`opening_taken`]); `None` when no snapshot can be taken (recorded
    /// as such: the command runs at once).
    pub fn start_snapshot_before_commands(&mut self, state: &mut State) -> Option<Opening> {
        let Some(shadow) = state.snapshot_source() else {
            self.before_commands(state, None);
            return None;
        };
        let (opener, gate) = gate::closed();
        let task = tokio::task::spawn_blocking(move || shadow.snapshot());
        Some(Opening { task, opener, gate })
    }

    /// A round whose last changing tool was a command that left nothing running has ended:
    /// the workspace is as the turn leaves it unless a later tool changes it, so the closing
    /// snapshot is started now, while the model is asked what next.
    pub fn start_closing_snapshot(&mut self, state: &mut State) {
        if self.stage == TurnUndo::Commands && self.closing.is_none() {
            self.closing = state
                .snapshot_source()
                .map(|shadow| tokio::task::spawn_blocking(move || shadow.snapshot()));
        }
    }

    /// The turn is over: a turn that ran a command is snapshotted as it left the workspace (by
    /// the early closing snapshot, when nothing could change it since).
    pub async fn end(&mut self, state: &mut State) {
        let early = self.closing.take();
        if std::mem::take(&mut self.stage) != TurnUndo::Commands {
            if let Some(early) = early {
                let _ = early.await;
            }
            return;
        }
        let after = match early {
            Some(early) => {
                let taken = early.await;
                snapshot_taken(state, taken)
            }
            None => snapshot(state).await,
        };
        if let Some(after) = after {
            state.end_turn(after);
        }
    }

    /// Records the snapshot before the turn's first command (`None`: none could be taken, and
    /// undo will not cover what commands do).
    fn before_commands(&mut self, state: &mut State, before: Option<ObjectId>) {
        self.stage = if before.is_some() { TurnUndo::Commands } else { TurnUndo::Blind };
        state.before_commands(before);
    }
}

/// Waits for the opening snapshot, if one is being taken, and settles it ([`opening_taken`]).
pub(in crate::agent) async fn settle_opening(
    conv: &mut Handle<'_>,
    opening: &mut Option<Opening>,
    call: &ToolCall,
) {
    if let Some(opening) = opening.take() {
        let taken = opening.task.await;
        opening_taken(conv, taken, opening.opener, call);
    }
}

/// The opening snapshot is written: it is recorded, the call is taken up, and then the command
/// may run.
pub(in crate::agent) fn opening_taken(
    conv: &mut Handle<'_>,
    taken: Taken,
    opener: Opener,
    call: &ToolCall,
) {
    let before = snapshot_taken(conv.state, taken);
    conv.undo.before_commands(conv.state, before);
    conv.take_up(call);
    opener.open();
}

/// Snapshots the workspace off the async threads; `None` when the session has no shadow
/// repository or the snapshot failed (the person is told once).
async fn snapshot(state: &mut State) -> Option<ObjectId> {
    let shadow = state.snapshot_source()?;
    let taken = tokio::task::spawn_blocking(move || shadow.snapshot()).await;
    snapshot_taken(state, taken)
}

/// The snapshot `taken`, or `None` when it failed (the person is told once).
fn snapshot_taken(state: &mut State, taken: Taken) -> Option<ObjectId> {
    match taken {
        Ok(Ok(tree)) => Some(tree),
        Ok(Err(err)) => {
            state.snapshot_failed(&err);
            None
        }
        Err(_) => None,
    }
}
