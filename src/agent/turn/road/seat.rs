//! A call's handle on its conversation ([`Seat`], the tools' `Conversation`): what `todo` and
//! `task` run through. The parent's run stage is the one owner of its state, so the handle
//! changes none of it: a board update is a message ([`Told::Board`]) the run stage applies —
//! validation, TaskCompleted hooks — answering with the board or why it was refused; a child
//! runs inside the call's own run ([`Children::run`]), and what it tells the parent is a
//! message too ([`Told::Child`]). The handle is shared: the explorers of one response run at
//! once, each holding it.

use crate::agent::children::Children;
use crate::agent::children::news::News;
use crate::tools::conversation::Conversation;
use crate::tools::task::Delegation;
use crate::tools::{ToolCall, ToolOutcome};
use futures_util::future::BoxFuture;
use serde_json::Value;
use tokio::sync::{mpsc::UnboundedSender, oneshot};

/// What a running call tells its conversation's run stage.
pub(in crate::agent) enum Told {
    /// A board update to apply, and where its answer goes: the board rendered, or why not.
    Board { update: BoardUpdate, answer: oneshot::Sender<Result<String, String>> },
    /// What a child does.
    Child(News),
}

/// A board update a call asks for.
pub(in crate::agent) enum BoardUpdate {
    /// `todo` call `call`'s `input`.
    Todo { call: String, input: Value },
    /// A child starts on this item (`children::item`).
    StartItem(String),
    /// A child finished this item.
    CompleteItem(String),
}

/// A call's handle on its conversation.
pub(in crate::agent) struct Seat<'a> {
    told: UnboundedSender<Told>,
    pub children: Children<'a>,
}

impl<'a> Seat<'a> {
    /// The handle whose calls tell the run stage on `told`, with the conversation's `children`.
    pub fn new(told: UnboundedSender<Told>, children: Children<'a>) -> Self {
        Self { told, children }
    }
}

impl Conversation for Seat<'_> {
    fn update_board<'a>(
        &'a self,
        call: &'a ToolCall,
        input: &'a Value,
    ) -> BoxFuture<'a, Result<String, String>> {
        Box::pin(async move {
            let (answer, answered) = oneshot::channel();
            let update = BoardUpdate::Todo { call: call.id.clone(), input: input.clone() };
            let _ = self.told.send(Told::Board { update, answer });
            answered.await.unwrap_or_else(|_| Err("The conversation has ended.".to_owned()))
        })
    }

    fn delegate<'a>(
        &'a self,
        call: &'a ToolCall,
        delegation: Delegation,
    ) -> BoxFuture<'a, ToolOutcome> {
        Box::pin(self.children.run(call, delegation))
    }
}
