//! A tool call as keel handles it: the id the model gave it, the name of the tool it calls (one
//! keel has, or a name the model made up) and the arguments exactly as the model sent them.
//!
//! The history keeps calls as `ContentBlock::ToolUse` (the provider-neutral wire form); the agent
//! turns each into a [`ToolCall`] once, and asks the tool behind its name
//! ([`super::registry`]) whatever it needs to decide.

use super::{Effect, registry};
use crate::message::ContentBlock;
use serde_json::Value;

/// One call the model asked for.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub input: Value,
}

impl ToolCall {
    /// The call a history block holds, if it is one.
    pub fn from_block(block: &ContentBlock) -> Option<Self> {
        match block {
            ContentBlock::ToolUse { id, name, input } => {
                Some(Self { id: id.clone(), name: name.clone(), input: input.clone() })
            }
            _ => None,
        }
    }

    /// What the call does; `None` for a name no tool has.
    pub fn effect(&self) -> Option<Effect> {
        registry::describe(&self.name).map(|tool| tool.effect_of(&self.input))
    }

    /// One line naming what the call does: the command, the path, the board update; the tool's
    /// name for a tool keel does not have.
    pub fn summary(&self) -> String {
        summary(&self.name, &self.input)
    }
}

/// One line naming what a call of the tool named `name` with `input` does; the name itself for
/// a tool keel does not have.
pub fn summary(name: &str, input: &Value) -> String {
    registry::describe(name).map_or_else(|| name.to_owned(), |tool| tool.summary(input))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_mcp_call_is_summarised_by_its_arguments_and_an_unknown_one_by_its_name() {
        let call = |name: &str, input| ToolCall { id: "t".into(), name: name.into(), input };
        let mcp = call("mcp__fs__read", json!({"path": "a", "n": 1}));
        assert_eq!(mcp.summary(), r#"{"n":1,"path":"a"}"#);
        assert_eq!(call("rm_rf", json!({"path": "a"})).summary(), "rm_rf");
    }

    #[test]
    fn a_call_is_read_from_its_block() {
        let block = ContentBlock::ToolUse {
            id: "t1".into(),
            name: "bash".into(),
            input: json!({"command": "ls"}),
        };
        let call = ToolCall::from_block(&block).unwrap();
        assert_eq!((call.id.as_str(), call.name.as_str()), ("t1", "bash"));
        assert_eq!(call.summary(), "ls");
        assert!(ToolCall::from_block(&ContentBlock::Text { text: "x".into() }).is_none());
    }
}
