//! The person's board edits on their way to the agent.
//!
//! A key on the board acts on the item it selects, by id, in the board the front end last
//! heard of. Keys come faster than the agent answers: `d d Space` removes #1 and then, the
//! board not redrawn yet, would mark #1 done again ("there is no item #1"). So the edits sent and
//! not yet taken (the snapshot counts those taken) are applied to a copy of the board, and the
//! next key acts on the board as it will be.

use crate::board::{Board, BoardEdit};
use std::collections::VecDeque;

/// The edits sent, and those the agent has not taken yet.
#[derive(Debug, Clone, Default)]
pub struct InFlight {
    sent: u64,
    pending: VecDeque<BoardEdit>,
}

impl InFlight {
    /// An edit went to the agent.
    pub fn sent(&mut self, edit: &BoardEdit) {
        self.sent += 1;
        self.pending.push_back(edit.clone());
    }

    /// The agent has taken `taken` edits in all: those are in its board now.
    pub fn taken(&mut self, taken: u64) {
        let waiting = usize::try_from(self.sent.saturating_sub(taken)).unwrap_or(usize::MAX);
        while self.pending.len() > waiting {
            self.pending.pop_front();
        }
    }

    /// `board` with the edits still on their way applied (those the board would refuse left
    /// out, as the agent will); `None` when none is on its way.
    pub fn board(&self, board: &Board) -> Option<Board> {
        if self.pending.is_empty() {
            return None;
        }
        let mut projected = board.clone();
        for edit in &self.pending {
            if let Ok((next, _)) = edit.apply(&projected) {
                projected = next;
            }
        }
        Some(projected)
    }
}
