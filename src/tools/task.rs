//! The `task` tool: a step handed to a child agent that starts with a clean context and answers
//! with its final report alone. Its facts live here like any tool's — the input, its checks, the
//! line that names a call, what a call does (an explorer reads and runs beside the other
//! explorers of its response; a child on an item may change the workspace). A child is a second
//! conversation over the same workspace, so a call's run decodes its input once and hands the
//! [`Delegation`] to the conversation's handle in its context ([`Conversation::delegate`](super::conversation::Conversation::delegate),
//! `agent::children`), which runs the child to its end.

use crate::tools::tool::{self, Declared, Effect, Schema, Tool, ToolRun};
use crate::tools::{ToolCall, ToolContext, ToolError, ToolOutcome, Tools, conversation, names};
use futures_util::FutureExt as _;
use serde::Deserialize;
use serde_json::{Value, json};

/// What the model reads of the tool, besides its schema: when a child is worth it, and what an
/// item does.
const DESCRIPTION: &str = "A child agent does a step in a clean context, for large output or a \
fresh look; only its report returns. item: the board id it does (started now, completed on \
success), one at a time. No item: it explores, read-only; several run at once.";

/// What a run outside a conversation answers: there is no conversation to delegate from.
const NO_CONVERSATION: &str =
    "task hands a step to a child of the conversation, and no conversation holds one here.";

/// The longest label a call is named by, in characters.
const LABEL_MAX_CHARS: usize = 48;

/// `task`.
pub struct Task;

/// The JSON schema of a call's input.
fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "prompt": {"type": "string"},
            "item": {"type": "string"},
            "kind": {"type": "string", "enum": ["general", "explore"]},
            "description": {"type": "string"}
        },
        "required": ["prompt"]
    })
}

/// What kind of child a call asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// Every tool the parent has but `task` and `todo`, under the parent's rules.
    General,
    /// Only the tools that read, and commands in the read-only sandbox.
    Explore,
}

impl Kind {
    /// The kind as the model spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::General => "general",
            Self::Explore => "explore",
        }
    }
}

/// A call's arguments, decoded.
#[derive(Debug, Clone, Deserialize)]
pub struct Delegation {
    pub prompt: String,
    #[serde(default)]
    pub item: Option<String>,
    #[serde(default)]
    kind: Option<Kind>,
    #[serde(default)]
    pub description: Option<String>,
}

impl Delegation {
    /// The arguments of a call, checked: a prompt with words in it, an item id not blank.
    pub fn decode(input: &Value) -> Result<Self, ToolError> {
        let delegation: Self = tool::decode(&Task, input)?;
        if delegation.prompt.trim().is_empty() {
            return Err(ToolError::InvalidArguments(
                "`task`: prompt is empty; say what the child should do and what to report.".into(),
            ));
        }
        if delegation.item.as_deref().is_some_and(|item| item.trim().is_empty()) {
            return Err(ToolError::InvalidArguments(
                "`task`: item is empty; give a board id, or leave item out to explore.".into(),
            ));
        }
        Ok(delegation)
    }

    /// The kind of child: as asked, else `general` for an item and `explore` without one.
    pub fn kind(&self) -> Kind {
        self.kind.unwrap_or(if self.item.is_some() { Kind::General } else { Kind::Explore })
    }

    /// The board item, trimmed, if the call names one.
    pub fn item(&self) -> Option<&str> {
        self.item.as_deref().map(str::trim)
    }

    /// Whether the child may change the workspace (a general child): undo treats it like a
    /// command.
    pub fn may_change(&self) -> bool {
        self.kind() == Kind::General
    }

    /// Whether the child runs beside others of the same response: an explorer bound to no item.
    pub fn runs_together(&self) -> bool {
        self.item.is_none() && self.kind() == Kind::Explore
    }

    /// The child's name for the person: the description, else the prompt's first line, cut.
    pub fn label(&self) -> String {
        let text = self.description.as_deref().filter(|text| !text.trim().is_empty());
        let text = text.unwrap_or(&self.prompt).trim();
        let first = text.lines().next().unwrap_or_default();
        let mut label: String = first.chars().take(LABEL_MAX_CHARS).collect();
        if label.len() < first.len() || text.lines().nth(1).is_some() {
            label.push_str(" …");
        }
        label
    }
}

/// What a `task` call may do, whatever its input: a general child may change the workspace.
const MAY_CHANGE: Effect = Effect::Delegates { may_change: true };

impl Tool for Task {
    fn declared(&self) -> Declared<'_> {
        Declared::new(names::TASK, DESCRIPTION, Schema::Made(schema), MAY_CHANGE).named_by("prompt")
    }

    fn check_input(&self, input: &Value) -> Result<(), ToolError> {
        Delegation::decode(input).map(drop)
    }

    /// A general child may change the workspace; an explorer only reads.
    fn effect_of(&self, input: &Value) -> Effect {
        let may_change = Delegation::decode(input).is_ok_and(|task| task.may_change());
        Effect::Delegates { may_change }
    }

    fn runs_beside_others(&self, input: &Value) -> bool {
        Delegation::decode(input).is_ok_and(|task| task.runs_together())
    }

    /// `#3 Run the tests` with an item, `explore: Find the config loader` without.
    fn summary(&self, input: &Value) -> String {
        match Delegation::decode(input) {
            Ok(delegation) => match delegation.item() {
                Some(item) => format!("#{item} {}", delegation.label()),
                None => format!("{}: {}", delegation.kind().as_str(), delegation.label()),
            },
            Err(_) => tool::field_summary(self, input, "prompt"),
        }
    }

    fn run<'a>(
        &'a self,
        call: &'a ToolCall,
        _on: &'a Tools,
        ctx: &'a ToolContext<'a>,
    ) -> ToolRun<'a> {
        conversation::through(ctx, NO_CONVERSATION, move |conversation| async move {
            match Delegation::decode(&call.input) {
                Ok(delegation) => conversation.delegate(call, delegation).await,
                Err(err) => ToolOutcome::error(err.to_string()),
            }
        })
        .boxed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_item_makes_a_general_child_and_none_an_explorer() {
        let with = Delegation::decode(&json!({"prompt": "do it", "item": " 3 "})).unwrap();
        assert_eq!((with.kind(), with.item()), (Kind::General, Some("3")));
        assert!(with.may_change() && !with.runs_together());
        let without = Delegation::decode(&json!({"prompt": "look"})).unwrap();
        assert_eq!(without.kind(), Kind::Explore);
        assert!(!without.may_change() && without.runs_together());
        let general = Delegation::decode(&json!({"prompt": "x", "kind": "general"})).unwrap();
        assert!(general.may_change() && !general.runs_together());
    }

    #[test]
    fn what_a_call_does_is_decided_by_its_input() {
        let item = json!({"prompt": "do it", "item": "3"});
        let look = json!({"prompt": "look"});
        let general = Effect::Delegates { may_change: true };
        assert_eq!(Task.effect_of(&item), general);
        assert!(general.changes_workspace() && general.starts_child());
        assert!(!Task.runs_beside_others(&item));
        let explorer = Task.effect_of(&look);
        assert_eq!(explorer, Effect::Delegates { may_change: false });
        assert!(!explorer.changes_workspace() && explorer.starts_child());
        assert!(Task.runs_beside_others(&look));
        assert!(!Task.runs_beside_others(&json!({"prompt": ""})), "a call that cannot run");
    }

    #[test]
    fn bad_arguments_say_what_is_wrong() {
        let err = |input: Value| Delegation::decode(&input).unwrap_err().to_string();
        assert!(err(json!({})).contains("missing required argument `prompt`"));
        assert!(err(json!({"prompt": "  "})).contains("prompt is empty"));
        assert!(err(json!({"prompt": "x", "item": ""})).contains("item is empty"));
        assert!(err(json!({"prompt": "x", "kind": "boss"})).contains("invalid arguments"));
        assert!(err(json!({"prompt": "x", "item": 3})).contains("must be a string"));
    }

    #[test]
    fn a_call_is_named_by_its_label() {
        let summary = |input: Value| Task.summary(&input);
        assert_eq!(summary(json!({"prompt": "Run it", "item": "2"})), "#2 Run it");
        let long = "Find where the configuration is loaded and by whom it is read";
        assert_eq!(
            summary(json!({"prompt": long})),
            "explore: Find where the configuration is loaded and by wh …"
        );
        assert_eq!(
            summary(json!({"prompt": "x\ny", "description": "Scan"})),
            "explore: Scan",
            "the description names it"
        );
    }
}
