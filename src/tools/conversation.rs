//! A call's handle on the conversation it runs in: what `todo` and `task` need besides the
//! workspace. The board is the conversation's, and a child is a second conversation of the
//! same agent, so both tools run through this handle (`agent::turn::road` hands one in the
//! call's [`ToolContext`](super::ToolContext)); outside a conversation (the tests, the benches,
//! `Tools::run`) there is none, and they answer so.
//!
//! The handle is shared (`&self`): the explorers of one response run at once, each holding it.

use super::task::Delegation;
use super::{ToolCall, ToolContext, ToolOutcome};
use futures_util::future::BoxFuture;
use serde_json::Value;
use std::future::Future;

/// What a tool may ask of the conversation its call runs in.
pub trait Conversation: Send + Sync {
    /// Applies `call`'s board update (`input`, either form) through the board's validation and
    /// the TaskCompleted hooks of every item it completes: the whole board rendered, or why it
    /// was refused (the board then stays as it was).
    fn update_board<'a>(
        &'a self,
        call: &'a ToolCall,
        input: &'a Value,
    ) -> BoxFuture<'a, Result<String, String>>;

    /// Runs `delegation`, `call`'s step, in a child conversation to its end: its report (the
    /// board after it, its item completed), or the error that says why it stopped.
    fn delegate<'a>(
        &'a self,
        call: &'a ToolCall,
        delegation: Delegation,
    ) -> BoxFuture<'a, ToolOutcome>;
}

/// Runs `run` with the handle of the conversation `ctx` holds; where none holds the call,
/// answers `missing`, which says what the tool needs one for.
pub async fn through<'a, Run, Ran>(ctx: &'a ToolContext<'a>, missing: &str, run: Run) -> ToolOutcome
where
    Run: FnOnce(&'a dyn Conversation) -> Ran,
    Ran: Future<Output = ToolOutcome>,
{
    match ctx.conversation {
        Some(conversation) => run(conversation).await,
        None => ToolOutcome::error(missing),
    }
}
