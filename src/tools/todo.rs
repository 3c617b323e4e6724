//! The `todo` tool: the model's plan on the board (`crate::board`). Its facts live here like any
//! tool's; its update is the conversation's own, since the board is the conversation's state:
//! the call's road hands a call whose tool [`Effect::Plans`] to the conversation
//! (`agent::State::propose_board`, through the turn's TaskCompleted hooks), never to [`Tool::run`].

use crate::board;
use crate::tools::tool::{Declared, Effect, Schema, Tool};
use crate::tools::{ToolCall, ToolContext, ToolError, ToolOutcome, Tools, names};
use futures_util::FutureExt as _;
use futures_util::future::BoxFuture;
use serde_json::Value;

/// `todo`.
pub struct Todo;

/// What a run outside a conversation answers: there is no board to update.
const NO_BOARD: &str = "todo updates the conversation's board, and no conversation holds one here.";

impl Tool for Todo {
    fn declared(&self) -> Declared<'_> {
        let schema = Schema::Made(board::input_schema);
        Declared::new(names::TODO, board::TOOL_DESCRIPTION, schema, Effect::Plans)
    }

    /// The board validates its input itself, and says exactly what is wrong (docs/board.md).
    fn check_input(&self, _input: &Value) -> Result<(), ToolError> {
        Ok(())
    }

    fn effect(&self) -> Effect {
        Effect::Plans
    }

    fn summary(&self, input: &Value) -> String {
        board::summarize_update(input)
    }

    fn run<'a>(
        &'a self,
        _call: &'a ToolCall,
        _on: &'a Tools,
        _ctx: &'a ToolContext,
    ) -> BoxFuture<'a, ToolOutcome> {
        async { ToolOutcome::error(NO_BOARD) }.boxed()
    }
}
