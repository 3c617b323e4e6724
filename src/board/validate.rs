//! Validating a board, in the order docs/board.md fixes: the array, then each entry (its id, text,
//! status, unique id), then at most one item in progress, then the dependencies — each rule over
//! the whole list before the next one, so the first failure the order meets is the one reported.
//!
//! The board is text the model reads back as keel's, one item a line: an id or a text that
//! carried a line break (or a hidden character, or a page of text) could forge a line of its own
//! (`[x] #2: Deploy`). So an id is at most [`MAX_ID_CHARS`] printable characters with no
//! whitespace, a text and an `activeForm` one line; a refused id is quoted cut, with its hidden
//! characters named, never as sent.
//!
//! A check (`check`) is one printable line of at most [`MAX_CHECK_CHARS`] characters. In the
//! whole list, an entry that does not name `check` keeps the one its item had (only `null`
//! removes it): a model that resends its list without the field does not drop a check by
//! accident, nor a check go quietly in the update that completes its item.
//!
//! The person's edits (`edit`) build their new list and run it through [`check_board`], the same
//! whole-list rules a model's update ends with.

use super::{
    Board, BoardError, BoardItem, MAX_CHECK_CHARS, MAX_ID_CHARS, MAX_ITEMS, MAX_TEXT_CHARS, Status,
};
use crate::visible::is_hidden;
use serde_json::Value;
use std::collections::{HashMap, HashSet};

/// Validates one whole-list update from the model, over the board it would replace.
pub(super) fn parse_items(input: &Value, previous: &Board) -> Result<Vec<BoardItem>, BoardError> {
    let entries = input.get("items").and_then(Value::as_array).ok_or(BoardError::NotAnArray)?;
    if entries.len() > MAX_ITEMS {
        return Err(BoardError::TooMany);
    }
    let mut seen = HashSet::new();
    let mut items = Vec::with_capacity(entries.len());
    for (index, entry) in entries.iter().enumerate() {
        let id = match entry.get("id") {
            Some(Value::String(id)) if !id.trim().is_empty() => id.trim().to_owned(),
            Some(Value::Number(number)) => number.to_string(),
            _ => (index + 1).to_string(),
        };
        check_id(&id)?;
        let text = ["text", "content"]
            .iter()
            .find_map(|key| entry.get(key).and_then(Value::as_str))
            .map(str::trim)
            .filter(|text| !text.is_empty())
            .ok_or_else(|| BoardError::TextRequired(id.clone()))?
            .to_owned();
        check_length(&id, &text)?;
        check_one_line(&id, "text", &text)?;
        let status = match entry.get("status") {
            None | Some(Value::Null) => Status::Pending,
            Some(Value::String(raw)) => Status::parse(raw.trim()).ok_or_else(|| {
                BoardError::InvalidStatus { id: id.clone(), status: raw.trim().to_owned() }
            })?,
            Some(other) => {
                return Err(BoardError::InvalidStatus { id, status: other.to_string() });
            }
        };
        if !seen.insert(id.clone()) {
            return Err(BoardError::DuplicateId(id));
        }
        let active_form = entry
            .get("activeForm")
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|active| !active.is_empty())
            .map(str::to_owned);
        if let Some(active) = &active_form {
            check_length(&id, active)?;
            check_one_line(&id, "activeForm", active)?;
        }
        let check = check_field(&id, entry.get("check"), previous)?;
        let check_passed = previous.get(&id).is_some_and(|old| {
            old.check_passed && old.check == check && status == Status::Completed
        });
        items.push(BoardItem {
            id,
            text,
            status,
            active_form,
            blocked_by: Vec::new(),
            check,
            check_passed,
        });
    }
    check_in_progress(&items)?;
    for (item, entry) in items.iter_mut().zip(entries) {
        item.blocked_by = blocked_by(&item.id, entry.get("blocked_by"))?;
    }
    check_dependencies(&items)?;
    Ok(items)
}

/// The whole-list rules, for a list already made of items (the person's edits): at most
/// [`MAX_ITEMS`], text present, unique ids, one item in progress, dependencies sound.
pub(super) fn check_board(items: &[BoardItem]) -> Result<(), BoardError> {
    if items.len() > MAX_ITEMS {
        return Err(BoardError::TooMany);
    }
    let mut seen = HashSet::new();
    for item in items {
        check_id(&item.id)?;
        if item.text.trim().is_empty() {
            return Err(BoardError::TextRequired(item.id.clone()));
        }
        check_length(&item.id, &item.text)?;
        check_one_line(&item.id, "text", &item.text)?;
        if let Some(check) = &item.check {
            check_command(&item.id, check)?;
        }
        if !seen.insert(item.id.as_str()) {
            return Err(BoardError::DuplicateId(item.id.clone()));
        }
    }
    check_in_progress(items)?;
    check_dependencies(items)
}

/// An entry's `check`: absent keeps the one item `id` had on `previous`, `null` removes it, a
/// string is a command, checked ([`check_command`]) and trimmed.
fn check_field(
    id: &str,
    raw: Option<&Value>,
    previous: &Board,
) -> Result<Option<String>, BoardError> {
    match raw {
        None => Ok(previous.get(id).and_then(|old| old.check.clone())),
        Some(Value::Null) => Ok(None),
        Some(Value::String(command)) => {
            let command = command.trim();
            check_command(id, command)?;
            Ok(Some(command.to_owned()))
        }
        Some(_) => Err(BoardError::CheckNotAString(id.to_owned())),
    }
}

/// A check is one non-empty printable line within [`MAX_CHECK_CHARS`].
pub(super) fn check_command(id: &str, command: &str) -> Result<(), BoardError> {
    if command.trim().is_empty() {
        return Err(BoardError::CheckEmpty(id.to_owned()));
    }
    let chars = command.chars().count();
    if chars > MAX_CHECK_CHARS {
        return Err(BoardError::CheckTooLong { id: id.to_owned(), chars });
    }
    check_one_line(id, "check", command)?;
    if command.chars().any(|c| is_hidden(c) || (c.is_control() && c != '\t')) {
        return Err(BoardError::CheckNotPrintable(id.to_owned()));
    }
    Ok(())
}

/// An item's text within [`MAX_TEXT_CHARS`].
fn check_length(id: &str, text: &str) -> Result<(), BoardError> {
    let chars = text.chars().count();
    if chars > MAX_TEXT_CHARS {
        return Err(BoardError::TextTooLong { id: id.to_owned(), chars });
    }
    Ok(())
}

/// The characters of a quoted id shown before it is cut.
const QUOTED_ID_CHARS: usize = 24;
/// Characters that end a line wherever the board is read.
const LINE_BREAKS: [char; 7] = ['\n', '\r', '\u{b}', '\u{c}', '\u{85}', '\u{2028}', '\u{2029}'];

/// An id is at most [`MAX_ID_CHARS`] characters, each printable and none whitespace.
pub(super) fn check_id(id: &str) -> Result<(), BoardError> {
    let chars = id.chars().count();
    if chars > MAX_ID_CHARS {
        return Err(BoardError::IdTooLong { shown: quoted(id), chars });
    }
    if id.chars().any(|c| c.is_whitespace() || is_hidden(c)) {
        return Err(BoardError::IdNotPrintable(quoted(id)));
    }
    Ok(())
}

/// An id as a refusal quotes it: in double quotes, its first [`QUOTED_ID_CHARS`] characters
/// with `…` when there were more, line breaks and tabs escaped as JSON escapes them, other
/// hidden or blank characters named (`⟨U+200B⟩`), so the message is one line that hides nothing.
fn quoted(id: &str) -> String {
    let mut out = String::from('"');
    for c in id.chars().take(QUOTED_ID_CHARS) {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            ' ' => out.push(' '),
            c if c.is_whitespace() || is_hidden(c) => {
                out.push_str(&format!("⟨U+{:04X}⟩", u32::from(c)));
            }
            c => out.push(c),
        }
    }
    if id.chars().count() > QUOTED_ID_CHARS {
        out.push('…');
    }
    out.push('"');
    out
}

/// A text or an `activeForm` is one line.
fn check_one_line(id: &str, field: &'static str, text: &str) -> Result<(), BoardError> {
    if text.contains(LINE_BREAKS) {
        return Err(BoardError::LineBreak { id: id.to_owned(), field });
    }
    Ok(())
}

fn check_in_progress(items: &[BoardItem]) -> Result<(), BoardError> {
    if items.iter().filter(|item| item.status == Status::InProgress).count() > 1 {
        return Err(BoardError::MoreThanOneInProgress);
    }
    Ok(())
}

/// An entry's `blocked_by`: absent or null is none; otherwise a list of non-blank string ids,
/// trimmed, each kept once. A number is refused: ids are text, and `2` is not `"2"` to the model
/// reading the schema back.
fn blocked_by(id: &str, raw: Option<&Value>) -> Result<Vec<String>, BoardError> {
    let not_a_list = || BoardError::BlockedByNotAList(id.to_owned());
    let entries = match raw {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(entries)) => entries,
        Some(_) => return Err(not_a_list()),
    };
    // A set, not a scan of the list so far: the model may send any number of entries.
    let mut seen = HashSet::new();
    let mut out: Vec<String> = Vec::new();
    for entry in entries {
        let blocker = entry
            .as_str()
            .map(str::trim)
            .filter(|blocker| !blocker.is_empty() && check_id(blocker).is_ok())
            .ok_or_else(not_a_list)?;
        if seen.insert(blocker) {
            out.push(blocker.to_owned());
        }
    }
    Ok(out)
}

/// The dependency rules after the list's own: every blocker exists, no cycle, and no item in
/// progress or completed while a blocker is still open.
fn check_dependencies(items: &[BoardItem]) -> Result<(), BoardError> {
    let by_id: HashMap<&str, usize> =
        items.iter().enumerate().map(|(index, item)| (item.id.as_str(), index)).collect();
    for item in items {
        if let Some(unknown) = item.blocked_by.iter().find(|id| !by_id.contains_key(id.as_str())) {
            return Err(BoardError::UnknownBlocker {
                id: item.id.clone(),
                blocker: unknown.clone(),
            });
        }
    }
    if let Some(cycle) = find_cycle(items, &by_id) {
        return Err(BoardError::Cycle(cycle));
    }
    for item in items.iter().filter(|item| item.status != Status::Pending) {
        let open = item.blocked_by.iter().find(|id| {
            by_id.get(id.as_str()).is_some_and(|&i| items[i].status != Status::Completed)
        });
        if let Some(blocker) = open {
            return Err(BoardError::StillBlocked {
                id: item.id.clone(),
                status: item.status,
                blocker: blocker.clone(),
            });
        }
    }
    Ok(())
}

/// Where a DFS stands with one item.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mark {
    New,
    OnPath,
    Done,
}

/// The first cycle a depth-first walk meets, starting from each item in board order and following
/// each `blocked_by` in its order: the ids from the first repeated one round to it again. Every
/// blocker is known here. Iterative, so a long chain cannot exhaust the stack.
fn find_cycle(items: &[BoardItem], by_id: &HashMap<&str, usize>) -> Option<Vec<String>> {
    let mut marks = vec![Mark::New; items.len()];
    for start in 0..items.len() {
        if marks[start] != Mark::New {
            continue;
        }
        // (item, how many of its blockers were followed already)
        let mut path: Vec<(usize, usize)> = vec![(start, 0)];
        marks[start] = Mark::OnPath;
        while let Some(&mut (node, ref mut next)) = path.last_mut() {
            let Some(blocker) = items[node].blocked_by.get(*next) else {
                marks[node] = Mark::Done;
                path.pop();
                continue;
            };
            *next += 1;
            let Some(&target) = by_id.get(blocker.as_str()) else { continue };
            match marks[target] {
                Mark::Done => {}
                Mark::New => {
                    marks[target] = Mark::OnPath;
                    path.push((target, 0));
                }
                Mark::OnPath => {
                    let from = path.iter().position(|&(step, _)| step == target).unwrap_or(0);
                    let mut cycle: Vec<String> =
                        path[from..].iter().map(|&(step, _)| items[step].id.clone()).collect();
                    cycle.push(items[target].id.clone());
                    return Some(cycle);
                }
            }
        }
    }
    None
}
