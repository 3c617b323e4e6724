//! `State`'s board methods beyond the model's own updates: the person's edits and the note that
//! tells the model of them, plan mode, and the steps the model has done to files. Each change a
//! resumed session needs is saved as it is made, like the rest of `State`.

use super::State;
use crate::agent::event::AgentEvent;
use crate::agent::journal::Record;
use crate::agent::reminder::ReminderCounts;
use crate::agent::steps_done::{Repeated, Step, StepItem, StepLog};
use crate::board::{BoardEdit, EditError, SUPERSEDED};
use crate::message::{ContentBlock, Message, Role};
use crate::tools::ToolOutcome;
use serde_json::Value;

/// The tags around the note that tells the model what the person changed.
const EDIT_NOTE_OPEN: &str = "<board-edit>";
const EDIT_NOTE_CLOSE: &str = "</board-edit>";

/// Why the person's edit was not made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BoardEditRefused {
    #[error("the board is off in this session (--no-todo)")]
    BoardOff,
    #[error("{0}")]
    Edit(#[from] EditError),
}

impl State {
    /// Whether the model has the board (`--no-todo` takes it away).
    pub fn board_on(&self) -> bool {
        self.board_on
    }

    /// The round running now (or about to), counting from 1.
    pub fn current_round(&self) -> u32 {
        self.counts.round.saturating_add(1)
    }

    /// Applies the person's edit through the board's validation; the model is told in its next
    /// request. Returns what was done, in a few words. A refused edit changes nothing.
    pub fn edit_board(&mut self, edit: &BoardEdit) -> Result<String, BoardEditRefused> {
        if !self.board_on {
            return Err(BoardEditRefused::BoardOff);
        }
        let (board, said) = edit.apply(&self.view.board)?;
        self.set_board(board);
        if std::mem::take(&mut self.in_progress_changed) {
            // The person's change starts the count now, not at the end of a round.
            self.set_counts(ReminderCounts { rounds_in_progress: 0, ..self.counts });
        }
        self.record(&Record::BoardEdit { change: said.clone() });
        self.board_edits.push(said.clone());
        Ok(said)
    }

    /// The note for the next request, if the person changed the board since the model last
    /// heard: what they changed, and the board as it now stands.
    pub fn take_board_note(&mut self) -> Option<ContentBlock> {
        if self.board_edits.is_empty() {
            return None;
        }
        let changes: Vec<String> =
            self.board_edits.drain(..).map(|change| format!("- {change}")).collect();
        self.record(&Record::BoardEditsTold);
        let text = format!(
            "{EDIT_NOTE_OPEN}The person changed the board:\n{}\n\nThe board now:\n{}{EDIT_NOTE_CLOSE}",
            changes.join("\n"),
            self.view.board.render()
        );
        Some(ContentBlock::Reminder { text })
    }

    /// Appends a prompt to the history: the person's text, then in plan mode the note that says
    /// what plan mode allows (`plan_note`), then the person's board changes the model has not
    /// heard of.
    pub fn push_prompt(&mut self, text: String, plan_note: impl FnOnce() -> String) {
        let mut content = vec![ContentBlock::Text { text }];
        if self.view.plan_mode {
            content.push(ContentBlock::Reminder { text: plan_note() });
        }
        content.extend(self.take_board_note());
        self.push_message(Message { role: Role::User, content });
    }

    pub fn set_plan_mode(&mut self, on: bool) {
        self.view.plan_mode = on;
        if !on {
            self.view.plan_ready = false;
        }
    }

    /// A plan waits for the person's approval (or no longer does).
    pub fn set_plan_ready(&mut self, ready: bool) {
        self.view.plan_ready = ready;
    }

    /// Notes a write or an edit the model made to `path` in the round running now, under the
    /// item in progress.
    pub fn record_step(&mut self, path: String, content: u64, edit: Option<u64>) {
        let item = self
            .view
            .board
            .in_progress()
            .map(|item| StepItem { id: item.id.clone(), text: item.text.clone() });
        let step = Step { path, round: self.current_round(), item, content, edit };
        self.record(&Record::Step { step: step.clone() });
        self.steps.push(step);
    }

    /// The step a repeated call on `path` repeats.
    pub fn find_step(&self, path: &str, repeated: Repeated) -> Option<&Step> {
        self.steps.find(path, repeated)
    }

    /// Applies a `todo` update from call `id`, either form, through the board's validation: the
    /// board owns its updates. A valid one is saved and told (the `todo` event) and answered with
    /// the whole board rendered; a rejected one leaves the board as it was and is answered with
    /// the error.
    pub fn update_board(&mut self, id: &str, input: &Value) -> ToolOutcome {
        self.board_called = true;
        match self.apply_board_update(input) {
            Ok(answer) => {
                self.board_answers.push(id.to_owned());
                ToolOutcome::ok(answer)
            }
            Err(err) => ToolOutcome::error(err),
        }
    }

    /// Applies an update, either form, through the board's validation — the model's `todo`, and
    /// a child agent's item started and completed (`task`) — saved and told (the `todo` event).
    /// Returns the whole board rendered, or why the update was refused (the board as it was).
    pub fn apply_board_update(&mut self, input: &Value) -> Result<String, String> {
        let mut board = (*self.view.board).clone();
        let answer = board.update(input).map_err(|err| err.to_string())?;
        self.set_board(board);
        self.emit(self.todo_event());
        Ok(answer)
    }

    /// The round running now showed the model the whole board (a `task` answer that carries
    /// it): the reminder counts it as a board call.
    pub fn board_shown(&mut self) {
        self.board_called = true;
    }

    /// The `todo` event for the board as it stands.
    pub fn todo_event(&self) -> AgentEvent {
        let view = self.view();
        AgentEvent::Todo {
            items: view.board.items().to_vec(),
            done: view.board.done(),
            total: view.board.total(),
            rounds_in_progress: view.rounds_in_progress,
        }
    }

    /// Appends a round's results to the history. When the model updated the board more than
    /// once in the round, each valid answer but the last becomes one line (`board::SUPERSEDED`),
    /// as the last is the whole board as it now stands. Answers already sent are never
    /// rewritten: the history's prefix stays byte for byte what the provider cached (compaction
    /// shortens old board answers when the window needs it).
    pub fn push_results(&mut self, mut results: Vec<ContentBlock>) {
        let answers = std::mem::take(&mut self.board_answers);
        let mut board_answers: Vec<&mut String> = results
            .iter_mut()
            .filter_map(|block| match block {
                ContentBlock::ToolResult { tool_use_id, content, .. }
                    if answers.contains(tool_use_id) =>
                {
                    Some(content)
                }
                _ => None,
            })
            .collect();
        if let Some((_, earlier)) = board_answers.split_last_mut() {
            for content in earlier {
                SUPERSEDED.clone_into(content);
            }
        }
        self.push_message(Message { role: Role::User, content: results });
    }

    /// A new turn may be reminded once again with no board.
    pub fn clear_reminded_without_board(&mut self) {
        self.set_counts(ReminderCounts { reminded_without_board: false, ..self.counts });
    }

    /// Takes over the board's bookkeeping from a saved session.
    pub(super) fn restore_board_keeping(
        &mut self,
        counts: ReminderCounts,
        board_edits: Vec<String>,
        steps: Vec<Step>,
    ) {
        self.counts = counts;
        self.show_counts();
        self.board_edits = board_edits;
        self.steps = StepLog::from_steps(steps);
    }
}
