//! A compaction as the session log records it, and how it is applied to a history — by the
//! agent when it compacts and by the replay when a session is reopened, the same way both times.
//!
//! A compaction either elides tool results and inputs by the id of their call ([`Mask`]), or
//! replaces the whole history with a shorter one (the person's requests, a summary with the
//! board, the newest round). Either way the history it leaves must be one a model accepts; the
//! replay checks that like any other record.

use crate::message::{ContentBlock, Message};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{HashMap, HashSet};

/// What made keel compact.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Trigger {
    /// The estimate of the next request passed `compact_at` of the window.
    Threshold,
    /// The server refused the request as too long.
    Refused,
    /// The person asked for it (`/compact`).
    Request,
}

impl Trigger {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Threshold => "threshold",
            Self::Refused => "refused",
            Self::Request => "request",
        }
    }
}

/// One elided part of the history, found by the id of its tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "part", rename_all = "snake_case")]
pub enum Mask {
    /// A tool result's content, replaced by a one-line stub.
    Result { id: String, content: String },
    /// A tool call's input, with its bulky parts replaced.
    Input { id: String, input: Value },
}

impl Mask {
    pub fn id(&self) -> &str {
        match self {
            Self::Result { id, .. } | Self::Input { id, .. } => id,
        }
    }
}

/// One compaction of the history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Compaction {
    pub trigger: Trigger,
    /// The estimate of the request before and after, in tokens.
    pub tokens_before: u64,
    pub tokens_after: u64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub masks: Vec<Mask>,
    /// The new history, when a summary replaced the older part of it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history: Option<Vec<Message>>,
    /// How many messages the summary stands for.
    #[serde(default)]
    pub summarised: usize,
    /// Why there is no summary from the model, when keel had to do without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary_error: Option<String>,
    /// The context window the server stated, when a refusal taught it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub learned_window: Option<u64>,
}

impl Compaction {
    /// How many tool results and inputs were elided.
    pub fn masked(&self) -> usize {
        self.masks.len()
    }

    /// The line the conversation shows where the model's view was compacted.
    pub fn note(&self) -> String {
        let summary =
            self.history.as_ref().map(|_| (self.summarised, self.summary_error.is_some()));
        note(self.trigger, (self.tokens_before, self.tokens_after), self.masks.len(), summary)
    }
}

/// The line the conversation shows for a compaction: what made it, the estimate before and after,
/// how many tool results were elided, and — when a summary replaced the older history — how many
/// messages it stands for and whether keel had to list them for want of a summary. The same
/// line whether the compaction just happened or a replay reads it back.
pub fn note(
    trigger: Trigger,
    (tokens_before, tokens_after): (u64, u64),
    masked: usize,
    summary: Option<(usize, bool)>,
) -> String {
    let mut parts = Vec::new();
    if masked > 0 {
        parts.push(format!("{masked} old tool results elided"));
    }
    match summary {
        Some((summarised, false)) => parts.push(format!("{summarised} messages summarised")),
        Some((summarised, true)) => {
            parts.push(format!("{summarised} messages listed (no summary)"))
        }
        None => {}
    }
    let why = match trigger {
        Trigger::Threshold => "to fit the window",
        Trigger::Refused => "after a too-long refusal",
        Trigger::Request => "on /compact",
    };
    format!(
        "Compacted the model's view {why}: ~{} → {} tokens; {}.",
        crate::count::compact(tokens_before),
        crate::count::compact(tokens_after),
        parts.join(", ")
    )
}

/// Applies `masks` to `messages`; fails, changing nothing, when one names a call or result the
/// history does not hold.
pub fn apply_masks<'a, I>(messages: I, masks: &[Mask]) -> Result<(), String>
where
    I: IntoIterator<Item = &'a mut Message>,
{
    let mut results: HashMap<&str, &str> = HashMap::new();
    let mut inputs: HashMap<&str, &Value> = HashMap::new();
    for mask in masks {
        match mask {
            Mask::Result { id, content } => {
                results.insert(id, content);
            }
            Mask::Input { id, input } => {
                inputs.insert(id, input);
            }
        }
    }
    let mut targets: Vec<&mut ContentBlock> = Vec::new();
    let mut found: HashSet<(String, bool)> = HashSet::new();
    for message in messages {
        for block in &mut message.content {
            let hit = match &*block {
                ContentBlock::ToolResult { tool_use_id, .. } => {
                    results.contains_key(tool_use_id.as_str()).then(|| (tool_use_id.clone(), true))
                }
                ContentBlock::ToolUse { id, .. } => {
                    inputs.contains_key(id.as_str()).then(|| (id.clone(), false))
                }
                _ => None,
            };
            if let Some(key) = hit {
                found.insert(key);
                targets.push(block);
            }
        }
    }
    for mask in masks {
        let key = (mask.id().to_owned(), matches!(mask, Mask::Result { .. }));
        if !found.contains(&key) {
            return Err(format!(
                "a compaction that elides tool call {}, which the history does not hold",
                mask.id()
            ));
        }
    }
    for block in targets {
        match block {
            ContentBlock::ToolResult { tool_use_id, content, .. } => {
                if let Some(stub) = results.get(tool_use_id.as_str()) {
                    (*stub).clone_into(content);
                }
            }
            ContentBlock::ToolUse { id, input, .. } => {
                if let Some(elided) = inputs.get(id.as_str()) {
                    input.clone_from(elided);
                }
            }
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::Role;
    use serde_json::json;

    fn round(id: &str) -> Vec<Message> {
        vec![
            Message::assistant(vec![ContentBlock::ToolUse {
                id: id.into(),
                name: "bash".into(),
                input: json!({"command": "cat big"}),
            }]),
            Message {
                role: Role::User,
                content: vec![ContentBlock::ToolResult {
                    tool_use_id: id.into(),
                    content: "x".repeat(500),
                    is_error: false,
                }],
            },
        ]
    }

    #[test]
    fn the_note_says_what_the_compaction_did_and_nothing_it_did_not() {
        let stub = |id: &str| Mask::Result { id: id.into(), content: "[elided]".into() };
        let masked = Compaction {
            trigger: Trigger::Threshold,
            tokens_before: 9_000,
            tokens_after: 4_000,
            masks: vec![stub("a"), stub("b")],
            history: None,
            summarised: 0,
            summary_error: None,
            learned_window: None,
        };
        assert_eq!(masked.masked(), 2);
        assert_eq!(
            masked.note(),
            "Compacted the model's view to fit the window: ~9.0k → 4.0k tokens; 2 old tool results elided."
        );
        let summarised = Compaction {
            trigger: Trigger::Request,
            masks: Vec::new(),
            history: Some(vec![Message::user_text("go")]),
            summarised: 5,
            ..masked.clone()
        };
        assert_eq!(summarised.masked(), 0);
        assert_eq!(
            summarised.note(),
            "Compacted the model's view on /compact: ~9.0k → 4.0k tokens; 5 messages summarised."
        );
    }

    #[test]
    fn masks_replace_results_and_inputs_by_call_id() {
        let mut history: Vec<Message> = [round("a"), round("b")].concat();
        let masks = vec![
            Mask::Result { id: "a".into(), content: "[stub]".into() },
            Mask::Input { id: "b".into(), input: json!({"command": "…"}) },
        ];
        apply_masks(&mut history, &masks).unwrap();
        assert!(
            matches!(&history[1].content[0], ContentBlock::ToolResult { content, .. } if content == "[stub]")
        );
        assert!(
            matches!(&history[2].content[0], ContentBlock::ToolUse { input, .. } if input["command"] == "…")
        );
        assert!(
            matches!(&history[3].content[0], ContentBlock::ToolResult { content, .. } if content.len() == 500)
        );
    }

    #[test]
    fn a_mask_for_a_call_not_there_changes_nothing() {
        let mut history = round("a");
        let before = history.clone();
        let masks = vec![
            Mask::Result { id: "a".into(), content: "[stub]".into() },
            Mask::Result { id: "ghost".into(), content: "[stub]".into() },
        ];
        let err = apply_masks(&mut history, &masks).unwrap_err();
        assert!(err.contains("ghost"), "{err}");
        assert_eq!(history, before);
    }
}
