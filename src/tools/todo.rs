//! The `todo` tool: the model's plan on the board (`crate::board`). The board is the
//! conversation's state, so a call updates it through the conversation's handle in its context
//! ([`Conversation::update_board`](super::conversation::Conversation::update_board): the
//! board's validation, then the TaskCompleted hooks), and answers with the board rendered, or
//! why the update was refused (the board unchanged).

use crate::board;
use crate::tools::tool::{Declared, Effect, Schema, Tool, ToolRun};
use crate::tools::{ToolCall, ToolContext, ToolError, ToolOutcome, Tools, conversation, names};
use futures_util::FutureExt as _;
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

    fn summary(&self, input: &Value) -> String {
        board::summarize_update(input)
    }

    fn run<'a>(
        &'a self,
        call: &'a ToolCall,
        _on: &'a Tools,
        ctx: &'a ToolContext<'a>,
    ) -> ToolRun<'a> {
        conversation::through(ctx, NO_BOARD, move |conversation| async move {
            match conversation.update_board(call, &call.input).await {
                Ok(board) => ToolOutcome::ok(board),
                Err(refused) => ToolOutcome::error(refused),
            }
        })
        .boxed()
    }
}

#[cfg(test)]
mod tests {
    use crate::tools::{ToolCall, ToolContext, Tools, Workspace};
    use serde_json::json;
    use tokio_util::sync::CancellationToken;

    #[tokio::test]
    async fn outside_a_conversation_todo_and_task_say_there_is_none() {
        let dir = tempfile::tempdir().unwrap();
        let tools = Tools::new(Workspace::new(dir.path()).unwrap());
        let ctx = ToolContext::bare(CancellationToken::new());
        let items = json!({"items": [{"id": "1", "text": "x", "status": "pending"}]});
        let call = ToolCall { id: "t".into(), name: "todo".into(), input: items };
        let todo = tools.run_tool(&super::Todo, &call, &ctx).await;
        assert!(todo.is_error && todo.for_model == super::NO_BOARD, "{todo:?}");
        let task = tools.run("task", &json!({"prompt": "look"}), &ctx).await;
        assert!(task.is_error && task.for_model.contains("no conversation holds one"), "{task:?}");
    }
}
