//! `State`'s board methods beyond the model's own updates: the person's edits and the note that
//! tells the model of them, plan mode, and the steps the model has done to files. Each change a
//! resumed session needs is saved as it is made, like the rest of `State`.

use super::State;
use crate::agent::event::AgentEvent;
use crate::agent::journal::Record;
use crate::agent::reminder::ReminderCounts;
use crate::agent::steps_done::{Repeated, Step, StepItem, StepLog};
use crate::agent::turn::checks::newly_completed;
use crate::board::{Board, BoardEdit, BoardError, EditError, SUPERSEDED};
use crate::message::{ContentBlock, Message, Role};
use crate::tags::Tag;

use serde_json::Value;

/// What became of the person's edit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Edited {
    /// Made; in a few words, what was done.
    Made(String),
    /// It completes item `.0`, which has a check: held until the check can run
    /// ([`State::next_checked_edit`]).
    AwaitsCheck(String),
}

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
        self.view.reminder.counts.round.saturating_add(1)
    }

    /// Applies the person's edit through the board's validation; the model is told in its next
    /// request. Returns what was done, in a few words. A refused edit changes nothing.
    pub fn edit_board(&mut self, edit: &BoardEdit) -> Result<Edited, BoardEditRefused> {
        // Counted made or not: a front end knows which of its edits the board has seen.
        self.view.board_edits_taken += 1;
        if !self.board_on {
            return Err(BoardEditRefused::BoardOff);
        }
        let (board, said) = edit.apply(&self.view.board)?;
        let checked = newly_completed(&self.view.board, &board);
        if let Some(item) = checked.iter().find(|item| item.check.is_some()) {
            self.checked_edits.push_back(edit.clone());
            return Ok(Edited::AwaitsCheck(item.id.clone()));
        }
        Ok(Edited::Made(self.take_edited_board(board, said)))
    }

    /// Makes `board`, the person's edit (`said`) whose checks passed, the board; the model is
    /// told in its next request. Returns `said`.
    pub fn take_edited_board(&mut self, board: Board, said: String) -> String {
        // The person's change starts the count now (`set_board`), not at the end of a round.
        self.set_board(board);
        self.in_progress_changed = false;
        self.record(&Record::BoardEdit { change: said.clone() });
        self.board_edits.push(said.clone());
        said
    }

    /// The next of the person's edits that waits for a check to run (`turn::checks`).
    pub fn next_checked_edit(&mut self) -> Option<BoardEdit> {
        self.checked_edits.pop_front()
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
        let text = Tag::BoardEdit.wrap(&format!(
            "The person changed the board:\n{}\n\nThe board now:\n{}",
            changes.join("\n"),
            self.view.board.render()
        ));
        Some(ContentBlock::Reminder { text })
    }

    /// Appends a prompt to the history: the person's text, the files it mentions (`attached`),
    /// what hooks added for the model (`context`), then in plan mode the note that says what plan
    /// mode allows (`plan_note`), then keel's notes the model is owed and the person's board
    /// changes it has not heard of.
    pub fn push_prompt(
        &mut self,
        text: String,
        attached: Vec<ContentBlock>,
        context: Vec<ContentBlock>,
        plan_note: impl FnOnce() -> String,
    ) {
        let mut content = vec![ContentBlock::Text { text }];
        content.extend(attached);
        content.extend(context);
        if self.view.plan_mode {
            content.push(ContentBlock::Reminder { text: plan_note() });
        }
        content.extend(self.take_model_notes());
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

    /// Works out an update, either form, through the board's validation, without taking it: the
    /// board it would make and the answer to give (the whole board rendered), or the error (the
    /// board as it was). The turn runs the TaskCompleted hooks between this and
    /// [`State::accept_board`] (`turn::task_completed`).
    pub fn propose_board(&self, input: &Value) -> Result<(Board, String), BoardError> {
        let mut board = (*self.view.board).clone();
        let answer = board.update(input)?;
        Ok((board, answer))
    }

    /// Takes a board [`State::propose_board`] made: saved and told (the `todo` event).
    pub fn accept_board(&mut self, board: Board) {
        self.set_board(board);
        self.emit(self.todo_event());
    }

    /// The round running now called `todo`, or showed the model the whole board some other way
    /// (a `task` answer that carries it): the reminder counts it as a board call.
    pub fn board_shown(&mut self) {
        self.board_called = true;
    }

    /// Call `id`'s answer was the whole board: a later one of the same round supersedes it.
    pub fn answered_with_board(&mut self, id: &str) {
        self.board_answers.push(id.to_owned());
    }

    /// The `todo` event for the board as it stands.
    pub fn todo_event(&self) -> AgentEvent {
        let view = self.view();
        AgentEvent::Todo {
            items: view.board.items().to_vec(),
            done: view.board.done(),
            total: view.board.total(),
            rounds_in_progress: view.reminder.rounds_in_progress(),
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
        self.set_counts(ReminderCounts {
            reminded_without_board: false,
            ..self.view.reminder.counts
        });
    }

    /// Takes over the board's bookkeeping from a saved session.
    pub(super) fn restore_board_keeping(
        &mut self,
        counts: ReminderCounts,
        board_edits: Vec<String>,
        steps: Vec<Step>,
    ) {
        self.view.reminder.counts = counts;
        self.board_edits = board_edits;
        self.steps = StepLog::from_steps(steps);
    }
}
