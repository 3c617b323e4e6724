//! The task board the model plans on: the `todo` tool's validation and rendering.
//!
//! Every update replaces the whole list. It is validated in a fixed order and the first failure
//! rejects it whole, leaving the board as it was; the error text goes back to the model verbatim,
//! so the messages here are part of keel's contract with the model (see docs/board.md).

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::HashSet;
use std::fmt::Write as _;
use thiserror::Error;

/// The tool's name as the model calls it.
pub const TOOL_NAME: &str = "todo";
/// The tool's description as the model reads it.
pub const TOOL_DESCRIPTION: &str =
    "Update the task list. Send the whole list every time. Track progress on multi-step tasks.";
/// The most items a board may hold; more than a person can follow, fewer than a model drowns in.
pub const MAX_ITEMS: usize = 20;

/// Where an item stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Pending,
    InProgress,
    Completed,
}

impl Status {
    fn parse(raw: &str) -> Option<Self> {
        match raw.to_lowercase().as_str() {
            "pending" => Some(Self::Pending),
            "in_progress" => Some(Self::InProgress),
            "completed" => Some(Self::Completed),
            _ => None,
        }
    }

    /// The box drawn before an item: `[ ]`, `[>]` or `[x]`.
    pub fn marker(self) -> &'static str {
        match self {
            Self::Pending => "[ ]",
            Self::InProgress => "[>]",
            Self::Completed => "[x]",
        }
    }
}

/// One line of the board.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TodoItem {
    pub id: String,
    pub text: String,
    pub status: Status,
    /// What the in-progress item is doing right now ("Adding type hints"), when the model says.
    #[serde(default, skip_serializing_if = "Option::is_none", rename = "activeForm")]
    pub active_form: Option<String>,
}

/// Why an update was rejected. The `Display` text is what the model reads.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum TodoError {
    #[error("items must be an array")]
    NotAnArray,
    #[error("Max {MAX_ITEMS} todos allowed")]
    TooMany,
    #[error("Item {0}: text required")]
    TextRequired(String),
    #[error("Item {id}: invalid status '{status}'")]
    InvalidStatus { id: String, status: String },
    #[error("Item {0}: duplicate id")]
    DuplicateId(String),
    #[error("Only one task can be in_progress at a time")]
    MoreThanOneInProgress,
}

/// The board: the list the model last sent that passed validation.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TodoBoard {
    items: Vec<TodoItem>,
}

impl TodoBoard {
    /// A board holding these items, as restored from a saved session (not validated again).
    pub fn from_items(items: Vec<TodoItem>) -> Self {
        Self { items }
    }

    /// Validates `input` (the tool's arguments) and, if it passes, replaces the board with it.
    /// Returns the rendered board for the model.
    pub fn update(&mut self, input: &Value) -> Result<String, TodoError> {
        self.items = parse_items(input)?;
        Ok(self.render())
    }

    /// The board as text, exactly as the model reads it.
    pub fn render(&self) -> String {
        if self.items.is_empty() {
            return "No todos.".to_owned();
        }
        let mut out = String::new();
        for item in &self.items {
            let _ = write!(out, "{} #{}: {}", item.status.marker(), item.id, item.text);
            if let (Status::InProgress, Some(active)) = (item.status, &item.active_form) {
                let _ = write!(out, "  <- {active}");
            }
            out.push('\n');
        }
        let _ = write!(out, "\n({}/{} completed)", self.done(), self.total());
        out
    }

    pub fn items(&self) -> &[TodoItem] {
        &self.items
    }

    pub fn done(&self) -> usize {
        self.items.iter().filter(|item| item.status == Status::Completed).count()
    }

    pub fn total(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Whether any item is not yet completed.
    pub fn has_open_items(&self) -> bool {
        self.items.iter().any(|item| item.status != Status::Completed)
    }
}

/// One line describing an update as the model sent it, for the conversation view
/// (`6 items, 2 completed`), whether or not it is valid.
pub fn summarize_update(input: &Value) -> String {
    let Some(items) = input.get("items").and_then(Value::as_array) else {
        return "malformed update".to_owned();
    };
    let completed = items
        .iter()
        .filter(|item| {
            item.get("status")
                .and_then(Value::as_str)
                .is_some_and(|status| status.trim().eq_ignore_ascii_case("completed"))
        })
        .count();
    let noun = if items.len() == 1 { "item" } else { "items" };
    format!("{} {noun}, {completed} completed", items.len())
}

/// The JSON schema the model follows when it calls `todo`.
pub fn input_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "items": {
                "type": "array",
                "maxItems": MAX_ITEMS,
                "description": "The complete list, every time.",
                "items": {
                    "type": "object",
                    "properties": {
                        "id": {"type": "string", "description": "A short stable id, e.g. \"1\"."},
                        "text": {"type": "string", "description": "What the step is."},
                        "status": {"type": "string", "enum": ["pending", "in_progress", "completed"]},
                        "activeForm": {
                            "type": "string",
                            "description": "Present-tense form shown while in progress, e.g. \"Adding tests\"."
                        }
                    },
                    "required": ["id", "text", "status"]
                }
            }
        },
        "required": ["items"]
    })
}

/// Validates one whole-list update, in the order docs/board.md fixes.
fn parse_items(input: &Value) -> Result<Vec<TodoItem>, TodoError> {
    let entries = input.get("items").and_then(Value::as_array).ok_or(TodoError::NotAnArray)?;
    if entries.len() > MAX_ITEMS {
        return Err(TodoError::TooMany);
    }
    let mut seen = HashSet::new();
    let mut items = Vec::with_capacity(entries.len());
    for (index, entry) in entries.iter().enumerate() {
        let id = match entry.get("id") {
            Some(Value::String(id)) if !id.trim().is_empty() => id.trim().to_owned(),
            Some(Value::Number(number)) => number.to_string(),
            _ => (index + 1).to_string(),
        };
        let text = ["text", "content"]
            .iter()
            .find_map(|key| entry.get(key).and_then(Value::as_str))
            .map(str::trim)
            .filter(|text| !text.is_empty())
            .ok_or_else(|| TodoError::TextRequired(id.clone()))?
            .to_owned();
        let status = match entry.get("status") {
            None | Some(Value::Null) => Status::Pending,
            Some(Value::String(raw)) => Status::parse(raw.trim()).ok_or_else(|| {
                TodoError::InvalidStatus { id: id.clone(), status: raw.trim().to_owned() }
            })?,
            Some(other) => {
                return Err(TodoError::InvalidStatus { id, status: other.to_string() });
            }
        };
        if !seen.insert(id.clone()) {
            return Err(TodoError::DuplicateId(id));
        }
        let active_form = entry
            .get("activeForm")
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|active| !active.is_empty())
            .map(str::to_owned);
        items.push(TodoItem { id, text, status, active_form });
    }
    if items.iter().filter(|item| item.status == Status::InProgress).count() > 1 {
        return Err(TodoError::MoreThanOneInProgress);
    }
    Ok(items)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(id: &str, text: &str, status: &str) -> Value {
        json!({"id": id, "text": text, "status": status})
    }

    fn board_with(items: Vec<Value>) -> TodoBoard {
        let mut board = TodoBoard::default();
        board.update(&json!({ "items": items })).unwrap();
        board
    }

    #[test]
    fn renders_every_status_and_the_count() {
        let mut board = TodoBoard::default();
        let text = board
            .update(&json!({"items": [
                item("1", "Read hello.py", "completed"),
                {"id": "2", "text": "Add type hints", "status": "in_progress", "activeForm": "Adding type hints"},
                item("3", "Add docstrings", "pending"),
            ]}))
            .unwrap();
        assert_eq!(
            text,
            "[x] #1: Read hello.py\n[>] #2: Add type hints  <- Adding type hints\n[ ] #3: Add docstrings\n\n(1/3 completed)"
        );
        assert_eq!((board.done(), board.total()), (1, 3));
    }

    #[test]
    fn empty_board_says_so() {
        assert_eq!(TodoBoard::default().render(), "No todos.");
        assert_eq!(board_with(vec![]).render(), "No todos.");
    }

    #[test]
    fn twenty_items_pass_and_twenty_one_do_not() {
        let items = |n: usize| (1..=n).map(|i| item(&i.to_string(), "step", "pending")).collect();
        assert_eq!(board_with(items(20)).total(), 20);
        let mut board = TodoBoard::default();
        assert_eq!(board.update(&json!({ "items": items(21) })), Err(TodoError::TooMany));
        assert_eq!(TodoError::TooMany.to_string(), "Max 20 todos allowed");
    }

    #[test]
    fn items_must_be_an_array() {
        let mut board = TodoBoard::default();
        for input in [json!({}), json!({"items": "x"}), json!([]), json!(null)] {
            assert_eq!(board.update(&input).unwrap_err().to_string(), "items must be an array");
        }
    }

    #[test]
    fn id_defaults_to_position_and_status_to_pending() {
        let board = board_with(vec![json!({"text": "a"}), json!({"text": "b", "status": null})]);
        assert_eq!(board.items()[0].id, "1");
        assert_eq!(board.items()[1].id, "2");
        assert!(board.items().iter().all(|item| item.status == Status::Pending));
    }

    #[test]
    fn numeric_ids_are_accepted_as_text() {
        let board = board_with(vec![json!({"id": 7, "text": "a"})]);
        assert_eq!(board.items()[0].id, "7");
    }

    #[test]
    fn status_is_trimmed_and_case_insensitive() {
        let board = board_with(vec![item("1", "a", " In_Progress "), item("2", "b", "COMPLETED")]);
        assert_eq!(board.items()[0].status, Status::InProgress);
        assert_eq!(board.items()[1].status, Status::Completed);
    }

    #[test]
    fn content_is_an_alias_of_text_and_text_is_trimmed() {
        let board = board_with(vec![json!({"id": "1", "content": "  do it  "})]);
        assert_eq!(board.items()[0].text, "do it");
    }

    #[test]
    fn whitespace_or_missing_text_is_rejected() {
        let mut board = TodoBoard::default();
        let err = board.update(&json!({"items": [item("a", "   ", "pending")]})).unwrap_err();
        assert_eq!(err.to_string(), "Item a: text required");
        let err = board.update(&json!({"items": [{"status": "pending"}]})).unwrap_err();
        assert_eq!(err.to_string(), "Item 1: text required");
    }

    #[test]
    fn unknown_status_is_quoted_as_sent() {
        let mut board = TodoBoard::default();
        let err = board.update(&json!({"items": [item("1", "a", " Done ")]})).unwrap_err();
        assert_eq!(err.to_string(), "Item 1: invalid status 'Done'");
    }

    #[test]
    fn duplicate_ids_are_rejected() {
        let mut board = TodoBoard::default();
        let err = board
            .update(&json!({"items": [item("1", "a", "pending"), item("1", "b", "pending")]}))
            .unwrap_err();
        assert_eq!(err.to_string(), "Item 1: duplicate id");
    }

    #[test]
    fn two_in_progress_are_rejected() {
        let mut board = TodoBoard::default();
        let err = board
            .update(
                &json!({"items": [item("1", "a", "in_progress"), item("2", "b", "in_progress")]}),
            )
            .unwrap_err();
        assert_eq!(err.to_string(), "Only one task can be in_progress at a time");
    }

    #[test]
    fn the_first_failure_in_order_wins() {
        let mut board = TodoBoard::default();
        // Item 1 has a bad status, item 2 has no text: item 1 is reported.
        let err = board
            .update(&json!({"items": [item("1", "a", "nope"), json!({"id": "2"})]}))
            .unwrap_err();
        assert_eq!(err, TodoError::InvalidStatus { id: "1".into(), status: "nope".into() });
        // Text is checked before status within one item.
        let err = board.update(&json!({"items": [item("1", "", "nope")]})).unwrap_err();
        assert_eq!(err, TodoError::TextRequired("1".into()));
    }

    #[test]
    fn a_rejected_update_leaves_the_board_unchanged() {
        let mut board = board_with(vec![item("1", "keep me", "in_progress")]);
        let before = board.clone();
        assert!(board.update(&json!({"items": [item("1", "", "pending")]})).is_err());
        assert!(board.update(&json!({"items": "nope"})).is_err());
        assert_eq!(board, before);
    }

    #[test]
    fn active_form_is_shown_only_for_the_item_in_progress() {
        let board = board_with(vec![
            json!({"id": "1", "text": "a", "status": "pending", "activeForm": "Doing a"}),
        ]);
        assert_eq!(board.render(), "[ ] #1: a\n\n(0/1 completed)");
        assert_eq!(board.items()[0].active_form.as_deref(), Some("Doing a"));
    }

    #[test]
    fn updates_are_summarized_in_one_line() {
        let input = json!({"items": [item("1", "a", "completed"), item("2", "b", "pending")]});
        assert_eq!(summarize_update(&input), "2 items, 1 completed");
        assert_eq!(summarize_update(&json!({"items": 3})), "malformed update");
    }

    #[test]
    fn open_items_are_tracked() {
        assert!(!TodoBoard::default().has_open_items());
        assert!(board_with(vec![item("1", "a", "pending")]).has_open_items());
        assert!(!board_with(vec![item("1", "a", "completed")]).has_open_items());
    }
}
