//! What a front end can ask of the agent's worker.

use crate::board::BoardEdit;

/// A request from the person, sent over the agent's command channel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// A new prompt. While a turn runs it is queued and sent when the turn ends.
    Submit(String),
    /// Carry on with a resumed session's unfinished turn, without a new prompt.
    Continue,
    /// Interrupt the running turn: stop the stream, kill a running command.
    Cancel,
    /// The answer to an approval request (see `Snapshot::pending_approval`).
    Approve { id: String, decision: Decision },
    /// Start a new conversation with an empty board.
    Clear,
    /// Restore the files changed by the last user turn.
    Undo,
    /// Run the person's own command (`!command`) in the workspace, between turns; the model
    /// reads its output with the next request.
    Shell(String),
    /// Use another model from the next request on (`/model [PROVIDER] NAME`), with its context
    /// window; a provider whose key is set may be named too. Between turns.
    SwitchModel(String),
    /// Show what the newest prompt that changed files changed in the workspace — what undo
    /// would revert (`/diff`): the answer is `Snapshot::turn_diff`.
    ShowDiff,
    /// `/sandbox`: where commands run, and what of the environment they do not get.
    ShowSandbox,
    /// Compact the history now: the older work summarised, the board and the requests kept.
    Compact,
    /// Switch to the built-in demo (scripted model, fresh temporary workspace) and start it.
    StartDemo,
    /// Play the demo's prompt, the model being the demo's already (`keel --demo`): where no
    /// sandbox can be set up, the person is asked first whether to run it with the sandbox off.
    PlayDemo,
    /// The person changes the board (`/todo …` or a key on the board pane). It goes through the
    /// model's validation, and the model is told in its next request.
    EditBoard(BoardEdit),
    /// Turn plan mode on or off (`--plan`, Shift+Tab): the model may read, not change.
    PlanMode(bool),
    /// The person approves the plan on the board: plan mode ends and the board drives the work.
    ApprovePlan,
    /// `/approval MODE`: another approval mode from every conversation's next call on, running
    /// children's included — never looser than the session started in; `None` (`/approval`
    /// alone): say which is in force.
    Approval(Option<crate::agent::config::ApprovalMode>),
    /// List this workspace's saved sessions (`/resume`): the answer is `Snapshot::sessions`.
    ListSessions,
    /// Switch to saved session `id` (an id as listed): only between turns.
    Resume(String),
    /// Trust or forget the workspace's hooks (`/hooks trust`, `/hooks forget`).
    Hooks(crate::hooks::HooksCommand),
    /// End the agent's worker.
    Quit,
}

/// The person's answer to "may keel run this?".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Run it this once.
    Once,
    /// Run it, and do not ask again for this tool (for `bash`: this command's first word).
    Always,
    /// Do not run it; the model is told the user declined.
    Deny,
    /// Do not run it, and end the turn.
    DenyAndStop,
}
