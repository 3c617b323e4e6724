//! The rule every history keeps, loaded or replayed: each tool call answered by exactly one
//! result in the message after it, no result without its call, no answer from the model while
//! results are owed — what a model's API accepts.

use crate::message::{ContentBlock, Message, Role};

/// Checks that `message` may follow a history whose newest answer owes results for `open`;
/// returns the calls that owe results after it.
pub(super) fn check_message(message: &Message, open: &[String]) -> Result<Vec<String>, String> {
    let results: Vec<&str> = message
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::ToolResult { tool_use_id, .. } => Some(tool_use_id.as_str()),
            _ => None,
        })
        .collect();
    match message.role {
        Role::Assistant => {
            if !open.is_empty() {
                return Err("an answer from the model where tool results were owed".to_owned());
            }
            if !results.is_empty() {
                return Err("tool results inside an answer from the model".to_owned());
            }
            let calls: Vec<String> = message.tool_uses().map(|(id, _, _)| id.to_owned()).collect();
            for (index, id) in calls.iter().enumerate() {
                if id.is_empty() || calls[..index].contains(id) {
                    return Err(format!("a tool call with a missing or repeated id {id:?}"));
                }
            }
            Ok(calls)
        }
        Role::User => {
            for id in open {
                let answers = results.iter().filter(|result| *result == id).count();
                if answers != 1 {
                    return Err(format!("tool call {id} answered {answers} times"));
                }
            }
            if let Some(stray) = results.iter().find(|result| !open.iter().any(|id| id == *result))
            {
                return Err(format!("a result for tool call {stray}, which was never made"));
            }
            Ok(Vec::new())
        }
    }
}
