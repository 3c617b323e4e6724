//! One child run to its end, inside its `task` call's run: a place among the children running
//! at once, its board item started through the board's validation, its conversation made and
//! run while what it says is passed on to the parent ([`News`]) — the person's interrupt passed
//! on to it — and, once it ends, its item completed through the same validation when it
//! succeeded, and the answer the parent's model reads (`report`).
//!
//! A child is a future of its parent's task, borrowing the same services: no thread and no
//! second set of watchers. Whatever changes the parent's state is a message to the parent's run
//! stage, which owns it (`turn::road::seat`).

use super::Children;
use super::brief;
use super::news::{News, Progress, Start};
use super::report::{self, Cut};
use super::spawn::Ends;
use super::watch::{Child, Heard, drain, next_heard};
use crate::agent::command::Command;
use crate::agent::conversation::{Conversation, Link};
use crate::agent::event::{INTERRUPTED, TurnOutcome};
use crate::agent::snapshot::ChildStatus;
use crate::agent::turn::Stop;
use crate::agent::turn::road::seat::{BoardUpdate, Told, ask_board};
use crate::tools::task::Delegation;
use crate::tools::{ToolCall, ToolOutcome};
use tokio::sync::{mpsc::UnboundedSender, oneshot};

/// What a child's call answers when the parent's turn stopped before the child had a place.
const NOT_STARTED: &str = "the turn was interrupted before this child agent started.";
/// What a child's call answers when the parent's run stage is gone.
const NO_PARENT: &str = "The child agent never ran: the conversation that started it has ended.";

/// A child made and not yet run: its conversation, its link, its first message.
struct ReadyChild {
    conversation: Conversation,
    link: Link,
    message: String,
}

impl Children<'_> {
    /// Runs `delegation`, `call`'s step, in a child to its end; the call's answer.
    pub async fn run(&self, call: &ToolCall, delegation: Delegation) -> ToolOutcome {
        let Some(_place) = self.places.take(&self.cancel).await else {
            return ToolOutcome::error(format!("{INTERRUPTED}: {NOT_STARTED}"));
        };
        if let Some(item) = delegation.item()
            && let Err(why) = self.board(BoardUpdate::StartItem(item.to_owned())).await
        {
            return ToolOutcome::error(why);
        }
        let (answer, started) = oneshot::channel();
        self.tell(News::Starts { call: call.clone(), delegation: delegation.clone(), answer });
        let Ok(start) = started.await else {
            return ToolOutcome::error(NO_PARENT);
        };
        let id = start.id.clone();
        let (made, mut ends) = self.make(&delegation, start);
        let mut child = Child::new(id, call.clone(), delegation);
        self.watch(&mut child, &mut ends, made).await;
        let stop = self.cut.get().copied();
        child.status = status_of(&child, stop);
        let error = (child.status != ChildStatus::Done)
            .then(|| report::why_stopped(&child, stop.map(cut_of)));
        self.tell(News::Ended {
            id: child.id.clone(),
            status: child.status,
            rounds: child.rounds,
            usage: child.usage,
            error,
        });
        self.answer(&child, stop).await
    }

    /// The child's conversation and link, and its first message, as the parent stood at `start`.
    fn make(&self, delegation: &Delegation, start: Start) -> (ReadyChild, Ends) {
        let message = brief::first_message(
            start.request.as_deref(),
            start.board.as_ref(),
            delegation.item(),
            &delegation.prompt,
        );
        let (conversation, link, ends) = self.spawn(delegation, &start);
        (ReadyChild { conversation, link, message }, ends)
    }

    /// Runs the child's one turn to its end, hearing it meanwhile and passing the person's
    /// interrupt on; its conversation and channels end with it.
    async fn watch(&self, child: &mut Child, ends: &mut Ends, made: ReadyChild) {
        let ReadyChild { mut conversation, mut link, message } = made;
        let services = self.services;
        let turn = async move {
            let mut turn = conversation.turn(&mut link, services);
            turn.tell_request_shape();
            let _ = turn.run(Some(message)).await;
        };
        tokio::pin!(turn);
        let commands = ends.commands.clone();
        let mut told_cut = false;
        loop {
            tokio::select! {
                biased;
                Some(heard) = next_heard(ends) => self.hear(child, heard, &commands),
                () = &mut turn => break,
                () = self.cancel.cancelled(), if !told_cut => {
                    told_cut = true;
                    let command = match self.cut.get() {
                        Some(Stop::Quit) => Command::Quit,
                        _ => Command::Cancel,
                    };
                    let _ = commands.send(command);
                }
            }
        }
        for heard in drain(ends) {
            self.hear(child, heard, &commands);
        }
    }

    /// Takes in what the child said, and tells the parent.
    fn hear(&self, child: &mut Child, heard: Heard, commands: &UnboundedSender<Command>) {
        let id = child.id.clone();
        match heard {
            Heard::Record(record) => {
                child.learn_record(&record);
                self.tell(News::Record { id, record });
            }
            Heard::Event(event) => {
                if child.learn(&event) {
                    self.tell(News::Progress(Box::new(Progress {
                        id: id.clone(),
                        call: child.call.clone(),
                        started: child.started,
                        text: child.progress(),
                        tool: child.running.last().map(|(_, line)| line.clone()),
                        rounds: child.rounds,
                        usage: child.usage,
                    })));
                }
                self.tell(News::Event { id, event });
            }
            Heard::Snapshot(snapshot) => {
                self.tell(News::Snapshot { id, snapshot });
            }
            Heard::Asks(request) => {
                self.tell(News::Asks { id, request, commands: commands.clone() });
            }
        }
    }

    /// The answer to a child's call: its report (and the board, its item completed), or the
    /// error that says why it stopped.
    async fn answer(&self, child: &Child, stop: Option<Stop>) -> ToolOutcome {
        let mut outcome = if child.status == ChildStatus::Done {
            self.completed(child).await
        } else {
            let why = report::why_stopped(child, stop.map(cut_of));
            let mut text = report::failure(child, &why);
            if stop == Some(Stop::Interrupted) {
                text = format!("{INTERRUPTED}\n{text}");
            }
            ToolOutcome::error(text)
        };
        outcome.for_display = format!("{}\n\n{}", child.progress(), outcome.for_display);
        outcome.changes.clone_from(&child.changes);
        outcome.cut_short = outcome.is_error && child.status == ChildStatus::Interrupted;
        outcome
    }

    /// A child that finished: its item completed through the board's validation and its
    /// TaskCompleted hooks, and its report with the board; or, when the board (or a hook)
    /// refuses the completion, the report as an error.
    async fn completed(&self, child: &Child) -> ToolOutcome {
        let Some(item) = child.delegation.item() else {
            return ToolOutcome::ok(report::success(child, None));
        };
        match self.board(BoardUpdate::CompleteItem(item.to_owned())).await {
            Ok(board) => ToolOutcome::ok(report::success(child, Some(&board))),
            Err(why) => ToolOutcome::error(format!(
                "The child agent {} finished, but item #{item} could not be completed: {why}. Its \
                 report:\n\n{}",
                child.id,
                report::success(child, None)
            )),
        }
    }

    /// Has the parent's board take `update`: the board rendered, or why it was refused.
    async fn board(&self, update: BoardUpdate) -> Result<String, String> {
        ask_board(&self.told, update, NO_PARENT).await
    }

    /// Tells the parent's run stage.
    fn tell(&self, news: News) {
        let _ = self.told.send(Told::Child(news));
    }
}

/// How a child whose turn is over stands: its own turn's outcome, or the parent's stop.
fn status_of(child: &Child, stop: Option<Stop>) -> ChildStatus {
    match (&child.ended, stop) {
        (Some(ended), _) if ended.outcome == TurnOutcome::Success => ChildStatus::Done,
        (_, Some(_)) => ChildStatus::Interrupted,
        (Some(ended), _) => match ended.outcome {
            TurnOutcome::MaxRounds => ChildStatus::Stopped,
            TurnOutcome::Interrupted => ChildStatus::Interrupted,
            _ => ChildStatus::Failed,
        },
        (None, None) => ChildStatus::Failed,
    }
}

/// Why the parent stopped, as a child's report says it.
fn cut_of(stop: Stop) -> Cut {
    match stop {
        Stop::Interrupted => Cut::Interrupted,
        Stop::Quit => Cut::Quitting,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::children::watch::Ended;
    use serde_json::json;

    #[test]
    fn a_child_its_budget_stopped_is_reported_with_the_reason_and_its_item_left_open() {
        let input = json!({"prompt": "Fix it", "item": "2"});
        let call = ToolCall { id: "t1".into(), name: "task".into(), input: input.clone() };
        let delegation = Delegation::decode(&input).unwrap();
        let mut child = Child::new("a1".into(), call, delegation);
        child.did.push("read_file a.rs → done".into());
        let reason = crate::agent::children::Budget { rounds: 3, input_tokens: 1_000 }
            .spent(3, 0, || 0)
            .unwrap();
        child.ended = Some(Ended {
            outcome: TurnOutcome::MaxRounds,
            text: String::new(),
            error: Some(reason),
        });
        assert_eq!(status_of(&child, None), ChildStatus::Stopped);
        assert_eq!(status_of(&child, Some(Stop::Interrupted)), ChildStatus::Interrupted);
        let why = report::why_stopped(&child, None);
        assert_eq!(
            report::failure(&child, &why),
            "The child agent a1 (item #2) stopped before it finished: it used its budget of 3 \
             model responses (max_child_rounds). Item #2 stays in progress.\nWhat it did (1 tool \
             call):\n- read_file a.rs → done"
        );
    }
}
