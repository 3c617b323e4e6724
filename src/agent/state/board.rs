//! `State`'s board methods beyond the model's own updates: the person's edits and the note that
//! tells the model of them, plan mode, and the steps the model has done to files. Each change a
//! resumed session needs is saved as it is made, like the rest of `State`.

use super::State;
use crate::agent::journal::Record;
use crate::agent::reminder::ReminderCounts;
use crate::agent::steps_done::{Repeated, Step, StepItem, StepLog};
use crate::agent::turn::plan_mode as plan;
use crate::board::is_whole;
use crate::board::{BoardEdit, EditError, SUPERSEDED};
use crate::message::{ContentBlock, Message, Role};

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
        // Counted made or not: a front end knows which of its edits the board has seen.
        self.view.board_edits_taken += 1;
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
    /// what plan mode allows, then the person's board changes the model has not heard of.
    pub fn push_prompt(&mut self, text: String) {
        let mut content = vec![ContentBlock::Text { text }];
        if self.view.plan_mode {
            content.push(ContentBlock::Reminder { text: plan::PLAN_NOTE.to_owned() });
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

    /// Appends a round's results to the history. `board_answers` are the positions of its valid
    /// board answers: when the model updated the board more than once in the round, an answer a
    /// later whole board of the same round replaced becomes one line (`board::SUPERSEDED`); a
    /// compact answer stays, as what it says is not in the whole board before it. Answers
    /// already sent are never rewritten: the history's prefix stays byte for byte what the
    /// provider cached (compaction shortens old board answers when the window needs it).
    pub fn push_results(&mut self, mut results: Vec<ContentBlock>, board_answers: &[usize]) {
        let whole = |block: usize| matches!(results.get(block), Some(ContentBlock::ToolResult { content, .. }) if is_whole(content));
        let Some(newest_whole) = board_answers.iter().rposition(|&block| whole(block)) else {
            self.push_message(Message { role: Role::User, content: results });
            return;
        };
        for &block in &board_answers[..newest_whole] {
            if let Some(ContentBlock::ToolResult { content, .. }) = results.get_mut(block) {
                SUPERSEDED.clone_into(content);
            }
        }
        self.push_message(Message { role: Role::User, content: results });
    }

    /// Whether the reminder already went out in this turn while there was no board: with no
    /// board it is sent at most once a turn.
    pub fn reminded_without_board(&self) -> bool {
        self.counts.reminded_without_board
    }

    pub fn set_reminded_without_board(&mut self, reminded: bool) {
        self.set_counts(ReminderCounts { reminded_without_board: reminded, ..self.counts });
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
