//! The task board the model plans on: the `todo` tool's validation and rendering, and the
//! person's own edits to it.
//!
//! An update is the whole list (`items`) or changes by id (`update`); `partial` makes either
//! into one whole list. It is validated in a fixed order and the first failure rejects it whole,
//! leaving the board as it was; the error text goes back to the model verbatim, so the messages
//! here are part of keel's contract with the model (see docs/board.md). `validate` holds that
//! order (dependencies included); `edit` turns the person's `/todo` commands and keys into new
//! boards through the same checks. What the model reads back after a valid update is the whole
//! board, rendered (`Board::render`), as the pane shows it: the plan re-enters the context with
//! every update.
//!
//! An item may carry a `check`: a command whose exit 0 shows the step is done. The board only
//! holds it (validated like the item's text) and whether it passed; running it before an item
//! is completed is the agent's (`agent::turn::checks`), which marks the item
//! ([`Board::mark_check_passed`]) only when it exits 0.

pub mod edit;
mod partial;
mod validate;

pub use edit::{BoardEdit, EditError};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::fmt::Write as _;
use thiserror::Error;

/// The tool's description as the model reads it: the two forms, the cheap way to keep the board
/// (changes only, alongside a step's own call) and the rule a model runs into. When to plan and
/// the rhythm of updates are the system prompt's (`crate::prompt`); both go in every request.
pub const TOOL_DESCRIPTION: &str = "items: the whole list. update: only changes [{id, fields \
that change}], beside a step's call; a new id with text adds an item. replace: true to drop \
unfinished items. check: a command whose exit 0 shows the step done; keel runs it before \
completing.";
/// The most items a board may hold; more than a person can follow, fewer than a model drowns in.
pub const MAX_ITEMS: usize = 20;
/// The longest an item's text (or its `activeForm`) may be, in characters: a step, not a
/// document — and a board a model fills with megabytes would ride along in every request.
pub const MAX_TEXT_CHARS: usize = 500;
/// The longest an item's id may be, in characters: a name to refer to, which the board renders
/// on every line (`#id`), so it cannot carry a line, or a page, of its own.
pub const MAX_ID_CHARS: usize = 64;
/// The longest an item's check may be, in characters: one command line, not a script.
pub const MAX_CHECK_CHARS: usize = 1_000;
/// What a board answer becomes once a later valid update replaced it: every request carries the
/// whole history, and the newest answer already says everything the old ones did.
pub const SUPERSEDED: &str = "[board superseded by a later update]";

/// Where an item stands.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    #[default]
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

    /// The status as the model spells it: `pending`, `in_progress`, `completed`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::InProgress => "in_progress",
            Self::Completed => "completed",
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
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BoardItem {
    pub id: String,
    pub text: String,
    pub status: Status,
    /// What the in-progress item is doing right now ("Adding type hints"), when the model says.
    #[serde(default, skip_serializing_if = "Option::is_none", rename = "activeForm")]
    pub active_form: Option<String>,
    /// The items that must be completed before this one may start, by id.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub blocked_by: Vec<String>,
    /// A command whose exit 0 shows the step is done: run before the item may be completed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check: Option<String>,
    /// The item was completed with its check passing (keel's mark: never taken from the model).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub check_passed: bool,
}

/// Why an update was rejected. The `Display` text is what the model reads.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum BoardError {
    #[error("items must be an array")]
    NotAnArray,
    #[error("Max {MAX_ITEMS} todos allowed")]
    TooMany,
    #[error("Item {0}: text required")]
    TextRequired(String),
    #[error(
        "Item {id}: text is {chars} characters; at most {MAX_TEXT_CHARS}: name the step briefly"
    )]
    TextTooLong { id: String, chars: usize },
    /// `shown`: the id quoted, cut and with its hidden characters named (`validate::quoted`).
    #[error("Item {shown}: id is {chars} characters; at most {MAX_ID_CHARS}")]
    IdTooLong { shown: String, chars: usize },
    #[error(
        "Item {0}: an id is printable characters only, with no spaces, line breaks or \
         invisible characters"
    )]
    IdNotPrintable(String),
    #[error("Item {id}: {field} may not contain a line break; an item is one line")]
    LineBreak { id: String, field: &'static str },
    #[error("Item {id}: invalid status '{status}'")]
    InvalidStatus { id: String, status: String },
    #[error("Item {id}: check is {chars} characters; at most {MAX_CHECK_CHARS}: one command")]
    CheckTooLong { id: String, chars: usize },
    #[error("Item {0}: check is empty; send null to remove it")]
    CheckEmpty(String),
    #[error("Item {0}: check must be a command (a string), or null to remove it")]
    CheckNotAString(String),
    #[error("Item {0}: check is printable characters only, with no invisible characters")]
    CheckNotPrintable(String),
    #[error(
        "Item {0}: its check cannot be removed in the update that completes it; make the \
         check pass, or remove it in an update of its own"
    )]
    CheckDroppedOnCompletion(String),
    /// The check of an item being completed did not pass: its exit (`exit 1`, `timed out after
    /// 300 s`), the command, and the tail of its output.
    #[error("Item {id}: its check failed ({exit}): {command}{}", tail_lines(.output))]
    CheckFailed { id: String, exit: String, command: String, output: String },
    /// The check of an item being completed could not run, for this reason.
    #[error("Item {id}: cannot be completed: its check ({command}) {why}")]
    CheckNotRun { id: String, command: String, why: String },
    #[error("Item {0}: duplicate id")]
    DuplicateId(String),
    #[error("Only one task can be in_progress at a time")]
    MoreThanOneInProgress,
    #[error("Item {0}: blocked_by must be a list of ids")]
    BlockedByNotAList(String),
    #[error("Item {id}: blocked by unknown item '{blocker}'")]
    UnknownBlocker { id: String, blocker: String },
    /// The ids around the cycle, the first repeated at the end.
    #[error("Items {}: blocked_by forms a cycle", .0.join(" -> "))]
    Cycle(Vec<String>),
    #[error("Item {id}: cannot be {} while blocked by #{blocker}", .status.as_str())]
    StillBlocked { id: String, status: Status, blocker: String },
    /// A TaskCompleted hook refused the item's completion, for this reason.
    #[error("Item {id}: cannot be completed: {reason}")]
    CompletionRefused { id: String, reason: String },
    #[error("send either items (the whole list) or update (changes by id), not both")]
    BothForms,
    #[error("update must be an array")]
    UpdateNotAnArray,
    #[error("Update {0}: id required")]
    UpdateIdRequired(usize),
    #[error("Update: no item '{0}' on the board; give a text to add it")]
    UnknownItem(String),
    /// The items, in board order, as `#id "text"`.
    #[error(
        "The list leaves out {} not completed: {}. Nothing was changed. Send them too (as \
         completed if they are done), or send \"replace\": true with the list to start a new plan.",
        if .0.len() == 1 { "an item" } else { "items" },
        .0.join(", ")
    )]
    Dropped(Vec<String>),
}

/// The board: the list the model last sent that passed validation, or the person's edit of it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Board {
    items: Vec<BoardItem>,
}

impl Board {
    /// A board holding these items, as restored from a saved session (not validated again).
    pub fn from_items(items: Vec<BoardItem>) -> Self {
        Self { items }
    }

    /// Validates `input` (the tool's arguments, either form) and, if it passes, makes it the
    /// board. Returns the whole board rendered: what the model reads back after every valid
    /// update, whatever its form, and the person's view. A whole list that leaves out an item not
    /// completed is refused unless it says `"replace": true`.
    pub fn update(&mut self, input: &Value) -> Result<String, BoardError> {
        let (list, partial) = partial::whole_list(self, input)?;
        let items = validate::parse_items(&list, self)?;
        let replace = input.get("replace").and_then(Value::as_bool) == Some(true);
        if let Some(item) = items.iter().find(|item| {
            item.status == Status::Completed
                && item.check.is_none()
                && self
                    .get(&item.id)
                    .is_some_and(|old| old.status != Status::Completed && old.check.is_some())
        }) {
            return Err(BoardError::CheckDroppedOnCompletion(item.id.clone()));
        }
        if !partial && !replace {
            let dropped = partial::dropped(self, &items);
            if !dropped.is_empty() {
                let named = dropped.iter().map(|item| format!("#{} \"{}\"", item.id, item.text));
                return Err(BoardError::Dropped(named.collect()));
            }
        }
        self.items = items;
        Ok(self.render())
    }

    /// The board as text, exactly as the model reads it.
    pub fn render(&self) -> String {
        if self.items.is_empty() {
            return "No todos.".to_owned();
        }
        let mut out = String::new();
        for item in &self.items {
            out.push_str(&self.render_item(item));
            out.push('\n');
        }
        out.push('\n');
        out.push_str(&self.progress());
        out
    }

    /// One item's line: `[>] #2: Add type hints  <- Adding type hints`, with its open blockers.
    /// The texts are a model's (or the person's), read again inside keel's notes — a reminder,
    /// a child's brief: keel's tags in them are defused (`crate::tags`).
    pub fn render_item(&self, item: &BoardItem) -> String {
        let text = crate::tags::defuse(&item.text);
        let mut out = format!("{} #{}: {text}", item.status.marker(), item.id);
        if let (Status::InProgress, Some(active)) = (item.status, &item.active_form) {
            let _ = write!(out, "  <- {}", crate::tags::defuse(active));
        }
        let open = self.open_blockers(item);
        if !open.is_empty() {
            let list: Vec<String> = open.iter().map(|id| format!("#{id}")).collect();
            let _ = write!(out, "  (blocked by {})", list.join(", "));
        }
        match (&item.check, item.check_passed) {
            (Some(_), true) => out.push_str("  (check passed)"),
            (Some(_), false) => out.push_str("  (check)"),
            (None, _) => {}
        }
        out
    }

    /// The board with each item's check written out under it (`      check: cargo test`): the
    /// plan as the person approves it, where the command matters as much as the step.
    pub fn render_with_checks(&self) -> String {
        if self.items.is_empty() {
            return self.render();
        }
        let mut out = String::new();
        for item in &self.items {
            out.push_str(&self.render_item(item));
            out.push('\n');
            if let Some(check) = &item.check {
                let _ = writeln!(out, "      check: {}", crate::tags::defuse(check));
            }
        }
        out.push('\n');
        out.push_str(&self.progress());
        out
    }

    /// Marks item `id` as completed with its check passing (the agent ran it: exit 0).
    pub fn mark_check_passed(&mut self, id: &str) {
        if let Some(item) = self.items.iter_mut().find(|item| item.id == id) {
            item.check_passed = true;
        }
    }

    /// The progress line, `(1/3 completed)`.
    pub fn progress(&self) -> String {
        format!("({}/{} completed)", self.done(), self.total())
    }

    pub fn items(&self) -> &[BoardItem] {
        &self.items
    }

    /// The item with this id.
    pub fn get(&self, id: &str) -> Option<&BoardItem> {
        self.items.iter().find(|item| item.id == id)
    }

    /// The item in progress, if one is.
    pub fn in_progress(&self) -> Option<&BoardItem> {
        self.items.iter().find(|item| item.status == Status::InProgress)
    }

    /// The ids `item` waits for that are not completed yet, in its order.
    pub fn open_blockers<'a>(&'a self, item: &'a BoardItem) -> Vec<&'a str> {
        item.blocked_by
            .iter()
            .filter(|id| self.get(id).is_none_or(|blocker| blocker.status != Status::Completed))
            .map(String::as_str)
            .collect()
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

    /// Whether any item not yet completed could be worked on now: none of its blockers is open.
    pub fn has_unblocked_open_items(&self) -> bool {
        self.next_open().is_some()
    }

    /// The first item not completed whose blockers all are: the step to start next.
    pub fn next_open(&self) -> Option<&BoardItem> {
        self.items
            .iter()
            .find(|item| item.status != Status::Completed && self.open_blockers(item).is_empty())
    }
}

/// The last lines of a check's output, each indented, for a refusal: nothing when it printed
/// nothing.
fn tail_lines(output: &str) -> String {
    let output = output.trim_end();
    if output.is_empty() { String::new() } else { format!("\n{output}") }
}

/// One line describing an update as the model sent it, for the conversation view
/// (`6 items, 2 completed`), whether or not it is valid.
pub fn summarize_update(input: &Value) -> String {
    if let Some(update) = input.get("update") {
        return match update.as_array() {
            Some(entries) => summarize_changes(entries),
            None => "malformed update".to_owned(),
        };
    }
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

/// What an `update` changes, item by item: `#3 completed, #4 in_progress`, `#7 added`,
/// `#2 text`.
fn summarize_changes(entries: &[Value]) -> String {
    let said: Vec<String> = entries
        .iter()
        .map(|entry| {
            let id = match entry.get("id") {
                Some(Value::String(id)) => id.trim().trim_start_matches('#').to_owned(),
                Some(other) => other.to_string(),
                None => "?".to_owned(),
            };
            let what = match (entry.get("status").and_then(Value::as_str), entry.get("text")) {
                (Some(status), _) => status.trim().to_lowercase(),
                (None, Some(_)) => "text".to_owned(),
                (None, None) if entry.get("blocked_by").is_some() => "blocked_by".to_owned(),
                (None, None) if entry.get("check").is_some() => "check".to_owned(),
                (None, None) => "activeForm".to_owned(),
            };
            format!("#{id} {what}")
        })
        .collect();
    if said.is_empty() { "no changes".to_owned() } else { said.join(", ") }
}

/// The JSON schema the model follows when it calls `todo`. Lean on purpose: it is sent with
/// every request, and the description already says what the list is and how `update` works.
pub fn input_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "items": {
                "type": "array",
                "maxItems": MAX_ITEMS,
                "items": {
                    "type": "object",
                    "properties": {
                        "id": {"type": "string"},
                        "text": {"type": "string"},
                        "status": {"type": "string", "enum": ["pending", "in_progress", "completed"]},
                        "activeForm": {"type": "string"},
                        "blocked_by": {"type": "array", "items": {"type": "string"}},
                        "check": {"type": ["string", "null"]}
                    },
                    "required": ["id", "text", "status"]
                }
            },
            "update": {"type": "array"},
            "replace": {"type": "boolean"}
        }
    })
}

#[cfg(test)]
mod check_tests;
#[cfg(test)]
mod tests;
