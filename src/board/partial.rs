//! The two forms of a model's update made into one whole list for the same validation.
//!
//! `{"items": [...]}` is the whole list as sent. `{"update": [{"id", "status"?, "text"?,
//! "activeForm"?, "blocked_by"?, "check"?}]}` changes the named items' given fields, in order,
//! and an entry whose id is not on the board adds an item at the end when it has a text. Either
//! way the result is a whole list in the `items` form, checked by `validate` exactly as one the
//! model sent; only the entries' own shape (an array, each with an id) is checked here first.

use super::{Board, BoardError, BoardItem, MAX_ITEMS, Status};
use serde_json::{Map, Value, json};

/// The fields an `update` entry may change, each as the `items` form spells it.
const FIELDS: [&str; 5] = ["status", "text", "activeForm", "blocked_by", "check"];

/// The whole list `input` asks for, in the `items` form, and whether it came as `update`.
pub(super) fn whole_list(board: &Board, input: &Value) -> Result<(Value, bool), BoardError> {
    let Some(update) = input.get("update") else {
        return Ok((input.clone(), false));
    };
    if input.get("items").is_some() {
        return Err(BoardError::BothForms);
    }
    let entries = update.as_array().ok_or(BoardError::UpdateNotAnArray)?;
    let ids = entries
        .iter()
        .enumerate()
        .map(|(index, entry)| entry_id(entry).ok_or(BoardError::UpdateIdRequired(index + 1)))
        .collect::<Result<Vec<String>, BoardError>>()?;
    // Before any message can quote one as sent.
    ids.iter().try_for_each(|id| super::validate::check_id(id))?;
    let mut items: Vec<Map<String, Value>> = board.items().iter().map(as_entry).collect();
    for (entry, id) in entries.iter().zip(ids) {
        let fields = entry.as_object().cloned().unwrap_or_default();
        let target = match items.iter().position(|item| item["id"] == id.as_str()) {
            Some(position) => &mut items[position],
            // Past the cap the whole list is refused by its first rule: stop adding.
            None if has_text(&fields) && items.len() >= MAX_ITEMS => {
                return Err(BoardError::TooMany);
            }
            None if has_text(&fields) => {
                items.push(Map::from_iter([("id".to_owned(), json!(id))]));
                let last = items.len() - 1;
                &mut items[last]
            }
            None => return Err(BoardError::UnknownItem(id)),
        };
        for field in FIELDS {
            let alias = if field == "text" { fields.get("content") } else { None };
            if let Some(value) = fields.get(field).or(alias) {
                target.insert(field.to_owned(), value.clone());
            }
        }
    }
    Ok((json!({ "items": items }), true))
}

/// An entry's id: a non-blank string, trimmed, or a number taken as its text.
fn entry_id(entry: &Value) -> Option<String> {
    match entry.get("id")? {
        Value::String(id) if !id.trim().is_empty() => Some(id.trim().to_owned()),
        Value::Number(number) => Some(number.to_string()),
        _ => None,
    }
}

fn has_text(fields: &Map<String, Value>) -> bool {
    ["text", "content"].iter().any(|key| fields.get(*key).is_some_and(|text| !text.is_null()))
}

/// An item of the board in the `items` form, as the model would send it.
fn as_entry(item: &BoardItem) -> Map<String, Value> {
    let mut entry = Map::new();
    entry.insert("id".to_owned(), json!(item.id));
    entry.insert("text".to_owned(), json!(item.text));
    entry.insert("status".to_owned(), json!(item.status.as_str()));
    if let Some(active) = &item.active_form {
        entry.insert("activeForm".to_owned(), json!(active));
    }
    if !item.blocked_by.is_empty() {
        entry.insert("blocked_by".to_owned(), json!(item.blocked_by));
    }
    if let Some(check) = &item.check {
        entry.insert("check".to_owned(), json!(check));
    }
    entry
}

/// The items of `before` not yet completed that the whole list `after` leaves out.
pub(super) fn dropped(before: &Board, after: &[BoardItem]) -> Vec<BoardItem> {
    before
        .items()
        .iter()
        .filter(|item| item.status != Status::Completed)
        .filter(|item| !after.iter().any(|kept| kept.id == item.id))
        .cloned()
        .collect()
}
