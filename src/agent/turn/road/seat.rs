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

impl BoardUpdate {
    /// Whether the update sets new work going (a `todo` update, an item started), as against
    /// closing work done (a child's item completed).
    pub fn starts_work(&self) -> bool {
        !matches!(self, Self::CompleteItem(_))
    }
}

/// What a board update answers when the run stage that would take it is gone.
const CONVERSATION_ENDED: &str = "The conversation has ended.";

/// Has the run stage listening on `told` take `update`: the board rendered, or why it was
/// refused — `gone` when the run stage is no longer there to answer.
pub(in crate::agent) async fn ask_board(
    told: &UnboundedSender<Told>,
    update: BoardUpdate,
    gone: &str,
) -> Result<String, String> {
    let (answer, answered) = oneshot::channel();
    let _ = told.send(Told::Board { update, answer });
    answered.await.unwrap_or_else(|_| Err(gone.to_owned()))
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
            let update = BoardUpdate::Todo { call: call.id.clone(), input: input.clone() };
            ask_board(&self.told, update, CONVERSATION_ENDED).await
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

#[cfg(test)]
mod tests {
    use super::super::run::{Live, run_live, run_lives};
    use crate::agent::children::ChildSettings;
    use crate::agent::command::Command;
    use crate::agent::config::AgentConfig;
    use crate::agent::event::AgentEvent;
    use crate::agent::state::Outbox;
    use crate::agent::worker::Agent;
    use crate::board::Board;
    use crate::runtime::Workspace;
    use crate::tools::{ToolCall, ToolOutcome, Tools};
    use serde_json::{Value, json};
    use std::time::Instant;
    use tokio::sync::mpsc::{self, UnboundedReceiver, UnboundedSender};

    /// An agent over a fresh workspace, with no model: what runs here never reaches one. The
    /// person's end of its inbox (kept open), and its events.
    fn agent(
        config: AgentConfig,
    ) -> (Agent, tempfile::TempDir, UnboundedSender<Command>, UnboundedReceiver<AgentEvent>) {
        let dir = tempfile::tempdir().unwrap();
        let tools = Tools::new(Workspace::new(dir.path()).unwrap());
        let (commands, inbox) = mpsc::unbounded_channel();
        let (snapshots, _) = mpsc::unbounded_channel();
        let (events_tx, events) = mpsc::unbounded_channel();
        let outbox = Outbox { snapshots, events: events_tx, asks: None };
        (Agent::new(config, None, tools, outbox, inbox), dir, commands, events)
    }

    /// Runs `name` with `input` as the model's call would, through the run stage.
    async fn run(agent: &mut Agent, name: &str, input: Value) -> ToolOutcome {
        let call = ToolCall { id: format!("{name}-1"), name: name.into(), input };
        let tool = agent.conversation.toolset.find(name).unwrap();
        let tools = agent.services.tools.clone();
        let mut turn = agent.turn();
        let live = Live { tool: &*tool, call: &call, tools, gate: None, began: Instant::now() };
        let (outcome, stop) = run_live(turn.parts(), live, &mut None).await;
        assert_eq!(stop, None);
        outcome
    }

    #[tokio::test]
    async fn todo_answers_the_board_it_made_or_why_not_and_leaves_the_board_as_it_was() {
        let (mut agent, _dir, _commands, _events) = agent(AgentConfig::default());
        let items = json!({"items": [
            {"id": "1", "text": "Read it", "status": "in_progress"},
            {"id": "2", "text": "Fix it", "status": "pending"}
        ]});
        let mut expected = Board::default();
        let answer = expected.update(&items).unwrap();
        let valid = run(&mut agent, "todo", items).await;
        assert_eq!((valid.is_error, valid.for_model.as_str()), (false, answer.as_str()));
        assert_eq!(agent.conversation.state.view().board.render(), expected.render());

        let unknown = json!({"update": [{"id": "9", "status": "completed"}]});
        let refused = expected.clone().update(&unknown).unwrap_err().to_string();
        let invalid = run(&mut agent, "todo", unknown).await;
        assert_eq!((invalid.is_error, invalid.for_model.as_str()), (true, refused.as_str()));
        assert_eq!(agent.conversation.state.view().board.render(), expected.render());
    }

    #[tokio::test]
    async fn explorers_start_in_order_and_no_more_run_at_once_than_their_places() {
        let children = ChildSettings { max_parallel: 2, ..ChildSettings::default() };
        let (mut agent, _dir, _commands, mut events) =
            agent(AgentConfig { children, ..AgentConfig::default() });
        let task = agent.conversation.toolset.find("task").unwrap();
        let calls: Vec<ToolCall> = (1..=3)
            .map(|n| ToolCall {
                id: format!("t{n}"),
                name: "task".into(),
                input: json!({"prompt": format!("Look {n}")}),
            })
            .collect();
        let tools = agent.services.tools.clone();
        let lives = calls
            .iter()
            .map(|call| Live {
                tool: &*task,
                call,
                tools: tools.clone(),
                gate: None,
                began: Instant::now(),
            })
            .collect();
        let (outcomes, stop) = run_lives(agent.turn().parts(), lives, &mut None).await;
        assert_eq!(stop, None);
        assert_eq!(outcomes.len(), 3);
        assert!(outcomes.iter().all(|outcome| outcome.is_error), "no model answers a child");
        let mut told = Vec::new();
        while let Ok(event) = events.try_recv() {
            match event {
                AgentEvent::AgentStart { agent, call_id, .. } => {
                    told.push(format!("+{agent}:{call_id}"))
                }
                AgentEvent::AgentEnd { agent, .. } => told.push(format!("-{agent}")),
                _ => {}
            }
        }
        let started: Vec<&String> = told.iter().filter(|line| line.starts_with('+')).collect();
        assert_eq!(started, ["+a1:t1", "+a2:t2", "+a3:t3"], "{told:?}");
        let third = told.iter().position(|line| line.starts_with("+a3")).unwrap();
        assert!(told[..third].iter().any(|line| line.starts_with('-')), "{told:?}");
        let mut running = 0;
        for line in &told {
            running += if line.starts_with('+') { 1 } else { -1 };
            assert!(running <= 2, "{told:?}");
        }
    }
}
