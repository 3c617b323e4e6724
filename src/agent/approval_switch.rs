//! The person's `/approval`, wherever it arrives — between turns, while a turn and its children
//! run, at an approval prompt: the approval mode changes in the approvals every conversation
//! shares (`Services`), so it holds from each one's next call on, a running child's included. A
//! session may make its mode stricter, and looser again up to the mode it started in, never past
//! it: what the person (or a workspace's stricter file) chose at the start bounds the session.

use super::config::ApprovalMode;
use super::event::AgentEvent;
use super::services::Services;
use super::state::{Outbox, State};

/// Switches to `mode` (`None`: says which mode is in force), or tells the person why not.
pub(super) fn switch(
    services: &Services,
    state: &mut State,
    outbox: &Outbox,
    mode: Option<ApprovalMode>,
) {
    let switched = mode.map(|mode| services.approvals().switch(mode).map(|()| mode));
    let event = match switched {
        None => {
            let approvals = services.approvals();
            AgentEvent::Notice {
                text: format!(
                    "Approval mode: {} ({}). /approval ask, /approval read-only or /approval \
                     auto switches it, up to {}, the mode keel started in.",
                    approvals.mode().name(),
                    meaning(approvals.mode()),
                    approvals.loosest().name()
                ),
            }
        }
        Some(Ok(mode)) => AgentEvent::Notice {
            text: format!(
                "Approval mode: {} from the next call on, running child agents' too: {}.",
                mode.name(),
                meaning(mode)
            ),
        },
        Some(Err(loosest)) => AgentEvent::Error {
            text: format!(
                "The approval mode stays {}: this session started in {}, and /approval may not \
                 go looser than that. Start keel with a looser --approval for more.",
                services.approvals().mode().name(),
                loosest.name()
            ),
        },
    };
    state.emit(event);
    state.publish(outbox);
}

/// What a mode lets run, in a few words.
fn meaning(mode: ApprovalMode) -> &'static str {
    match mode {
        ApprovalMode::Ask => "commands and file changes are asked about",
        ApprovalMode::Auto => "everything inside the workspace runs without asking",
        ApprovalMode::ReadOnly => "every command and change is refused",
    }
}
