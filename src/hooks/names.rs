//! Claude Code's names for the fields of a tool's input beside keel's, so that hooks written for
//! Claude Code run unchanged: where the two differ (`path` is `file_path`, absolute; `old_text`
//! is `old_string`; …). The tools' own names, `bash` as `Bash`, are the table's
//! ([`crate::tools::names`]).
//!
//! A hook reads the input with both sets of names, and may answer with either in
//! `updatedInput`: what it changed is taken back into keel's names ([`from_claude`]).

use crate::tools::names;
use serde_json::{Map, Value};
use std::path::Path;

/// How one field is named in Claude Code, and how its value is said there.
#[derive(Clone, Copy)]
enum Field {
    /// The same value under another name.
    Renamed(&'static str, &'static str),
    /// A path relative to the workspace in keel, absolute in Claude Code.
    Path(&'static str, &'static str),
    /// The board's whole list: keel's `items` (`text`), Claude Code's `todos` (`content`).
    Todos,
}

/// The fields a tool's input names differently in Claude Code.
fn fields(tool: &str) -> &'static [Field] {
    let Some(row) = names::by_model(tool) else { return &[] };
    match *row {
        names::READ_FILE | names::WRITE_FILE => &[Field::Path("path", "file_path")],
        names::EDIT_FILE => &[
            Field::Path("path", "file_path"),
            Field::Renamed("old_text", "old_string"),
            Field::Renamed("new_text", "new_string"),
        ],
        names::BASH => &[Field::Renamed("timeout_ms", "timeout")],
        names::TODO => &[Field::Todos],
        _ => &[],
    }
}

/// `input` of a call of `tool` with Claude Code's names added beside keel's.
pub fn with_claude_fields(tool: &str, input: &Value, workspace: &Path) -> Value {
    let Value::Object(map) = input else {
        return input.clone();
    };
    let mut out = map.clone();
    for field in fields(tool) {
        let (keel, claude) = names(*field);
        if let Some(value) = map.get(keel) {
            out.insert(claude.to_owned(), to_claude(*field, value, workspace));
        }
    }
    Value::Object(out)
}

/// A hook's `updatedInput` for a call of `tool` whose input was `original`, in keel's names:
/// the fields it gives replace the call's. Where it gives a field under both names, the one it
/// changed from what it was sent wins.
pub fn from_claude(tool: &str, original: &Value, updated: &Value, workspace: &Path) -> Value {
    let (Value::Object(base), Value::Object(updated)) = (original, updated) else {
        return updated.clone();
    };
    let sent = with_claude_fields(tool, original, workspace);
    let mut out: Map<String, Value> = base.clone();
    let renamed: Vec<(&str, &str)> = fields(tool).iter().map(|field| names(*field)).collect();
    for (key, value) in updated {
        if !renamed.iter().any(|(_, claude)| claude == key) {
            out.insert(key.clone(), value.clone());
        }
    }
    for field in fields(tool) {
        let (keel, claude) = names(*field);
        let Some(theirs) = updated.get(claude) else { continue };
        let changed = sent.get(claude) != Some(theirs);
        let keel_changed = updated.get(keel).is_some_and(|value| base.get(keel) != Some(value));
        if changed && !keel_changed {
            out.insert(keel.to_owned(), from_claude_value(*field, theirs, workspace));
        }
    }
    Value::Object(out)
}

fn names(field: Field) -> (&'static str, &'static str) {
    match field {
        Field::Renamed(keel, claude) | Field::Path(keel, claude) => (keel, claude),
        Field::Todos => ("items", "todos"),
    }
}

fn to_claude(field: Field, value: &Value, workspace: &Path) -> Value {
    match (field, value) {
        (Field::Path(..), Value::String(path)) => {
            Value::String(workspace.join(path).to_string_lossy().into_owned())
        }
        (Field::Todos, Value::Array(items)) => Value::Array(
            items
                .iter()
                .map(|item| match item {
                    Value::Object(item) => {
                        let mut todo = item.clone();
                        if let Some(text) = todo.remove("text") {
                            todo.insert("content".into(), text);
                        }
                        Value::Object(todo)
                    }
                    other => other.clone(),
                })
                .collect(),
        ),
        _ => value.clone(),
    }
}

fn from_claude_value(field: Field, value: &Value, workspace: &Path) -> Value {
    match (field, value) {
        // Inside the workspace, the path relative to it; anywhere else, as given (the tool
        // refuses it and says why).
        (Field::Path(..), Value::String(path)) => Value::String(
            Path::new(path)
                .strip_prefix(workspace)
                .map_or_else(|_| path.clone(), |inside| inside.to_string_lossy().into_owned()),
        ),
        // The board takes `content` for `text` as it is.
        _ => value.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_edit_reads_with_both_names_and_a_change_under_either_comes_back() {
        let ws = Path::new("/w");
        let input = json!({"path": "a.rs", "old_text": "x", "new_text": "y"});
        let sent = with_claude_fields("edit_file", &input, ws);
        assert_eq!(sent["file_path"], "/w/a.rs");
        assert_eq!(sent["old_string"], "x");
        assert_eq!(sent["path"], "a.rs");
        // A Claude Code hook echoes the whole input, changing only its own names.
        let mut echoed = sent.clone();
        echoed["new_string"] = json!("z");
        echoed["file_path"] = json!("/w/b.rs");
        let back = from_claude("edit_file", &input, &echoed, ws);
        assert_eq!(back, json!({"path": "b.rs", "old_text": "x", "new_text": "z"}));
        // A keel hook changes keel's names.
        let back = from_claude("edit_file", &input, &json!({"new_text": "w"}), ws);
        assert_eq!(back, json!({"path": "a.rs", "old_text": "x", "new_text": "w"}));
        // Outside the workspace, the path stays as given: the tool refuses it.
        let back = from_claude("write_file", &input, &json!({"file_path": "/etc/x"}), ws);
        assert_eq!(back["path"], "/etc/x");
    }

    #[test]
    fn the_boards_list_is_todos_with_content() {
        let input = json!({"items": [{"id": "1", "text": "Do it", "status": "pending"}]});
        let sent = with_claude_fields("todo", &input, Path::new("/w"));
        assert_eq!(sent["todos"][0]["content"], "Do it");
        let command = json!({"command": "ls", "timeout_ms": 5});
        assert_eq!(with_claude_fields("bash", &command, Path::new("/w"))["timeout"], 5);
    }
}
