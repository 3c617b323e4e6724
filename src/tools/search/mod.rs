//! The search tools, `grep` and `glob`: read-only, in-process, on ripgrep's own crates (`ignore`
//! walks, `grep-searcher` and `grep-regex` search, `globset` matches names), so a search costs
//! what ripgrep's does and starts no process.
//!
//! Both look at the files ripgrep would: below the folder searched, skipping what `.gitignore`
//! (nested ones too, in a git repository), `.ignore` and git's excludes leave out, hidden files
//! and folders (unless the pattern names one; `.git` never), and symlinks; `grep` also skips
//! binary files. Answers list the newest files first and hold at most [`MAX_RESULTS`] results,
//! each line cut at [`MAX_LINE_CHARS`]; the last line says what was found (the *tally*, which
//! the conversation shows beside the call) and, when there is more, how to page on.
//!
//! Nothing outside the workspace is read: the folder searched is resolved like every tool path
//! (`Workspace::resolve`: no `..` out, no symlink out), and every file is opened, and every name
//! listed is checked, through the workspace's descriptor (`beneath`), so a folder swapped for a
//! symlink while a search runs is passed over, not followed.
//!
//! The API is three calls: [`grep`] and [`glob`] (arguments in, [`Found`] or a [`SearchError`]
//! out) and [`summary`] (a call in one line); the schemas and descriptions are what the model
//! reads of them.

mod answer;
mod glob;
mod grep;
mod pattern;
mod scope;
pub mod searching;

pub use answer::tally_of;
pub use glob::glob;
pub use grep::grep;

use super::ToolOutcome;
use crate::runtime::path_error::PathError;
use serde::Deserialize;
use serde_json::{Value, json};

/// The most results one answer holds: matching lines, or files.
pub const MAX_RESULTS: u64 = 100;
/// The most characters of one line an answer shows; the rest is counted, not shown.
pub const MAX_LINE_CHARS: usize = 300;
/// The most lines of context around each match.
pub const MAX_CONTEXT: u64 = 20;
/// The most bytes one answer holds before it stops early, saying where to go on.
pub const MAX_ANSWER_BYTES: usize = 32 * 1024;

// What the model reads of each tool goes with every request: say what it cannot guess. The
// system prompt says once, for both, that they skip .gitignored and hidden files; the answers
// say the rest when it matters (the regex syntax on a bad pattern, what was skipped when nothing
// matched, how to page on when a page is full).
pub const GREP_DESCRIPTION: &str =
    "Search file contents for a regex: newest files first, 100 at most; offset pages on.";
pub const GLOB_DESCRIPTION: &str = "Find files by glob (without / it matches names at any depth).";

/// `grep`'s arguments.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GrepArgs {
    /// A regex, in the syntax of Rust's `regex` crate.
    pub pattern: String,
    /// The file or folder to search, inside the workspace; the whole workspace when absent.
    pub path: Option<String>,
    /// Only files whose path (relative to `path`) matches this glob; a glob without `/` matches
    /// names.
    pub glob: Option<String>,
    pub ignore_case: Option<bool>,
    /// Lines shown before and after each match.
    pub context: Option<u64>,
    pub output: Option<GrepOutput>,
    pub limit: Option<u64>,
    pub offset: Option<u64>,
}

/// What `grep` answers with.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GrepOutput {
    /// The matching lines, `path:line:text`.
    #[default]
    Content,
    /// The files that match, one a line.
    Files,
    /// Each matching file with its number of matching lines, `path:count`.
    Count,
}

/// `glob`'s arguments.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GlobArgs {
    pub pattern: String,
    /// The folder the pattern is relative to; the workspace's root when absent.
    pub path: Option<String>,
    pub limit: Option<u64>,
    pub offset: Option<u64>,
}

/// What a search found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// The answer, for the model and the person alike.
    pub text: String,
    /// What was found, in a few words: `12 matches in 3 files`, `no files`.
    pub tally: String,
}

/// Why a search could not be done; the text is written for the model to act on.
#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    #[error(transparent)]
    Path(#[from] PathError),
    #[error("`{path}` does not exist.")]
    NotFound { path: String },
    #[error("`{path}` is a file; glob's path must be a folder (to search a file, use grep).")]
    NotAFolder { path: String },
    #[error("`{path}` is {kind}; search a folder or a regular file.")]
    NotSearchable { path: String, kind: &'static str },
    #[error(
        "Invalid regex `{pattern}`: {reason}\n(The syntax is Rust's regex crate: escape \
         `( ) [ ] {{ }} . * + ? | ^ $ \\` with `\\` to match them literally; one line at a time, \
         so no `\\n`.)"
    )]
    BadRegex { pattern: String, reason: String },
    #[error("Invalid glob `{pattern}`: {reason}.")]
    BadGlob { pattern: String, reason: String },
    #[error(
        "offset {offset} is past the end: there are {total} {unit}; call again with a smaller \
         offset."
    )]
    OffsetPastEnd { offset: u64, total: u64, unit: &'static str },
    #[error("The search was interrupted.")]
    Interrupted,
}

/// A search's answer as a tool call's outcome: the same text for the model and the person, the
/// tally beside the call; an error says what was wrong.
impl From<Result<Found, SearchError>> for ToolOutcome {
    fn from(result: Result<Found, SearchError>) -> Self {
        match result {
            Ok(found) => Self { tally: Some(found.tally), ..Self::ok(found.text) },
            Err(err) => Self::error(err.to_string()),
        }
    }
}

pub fn grep_schema() -> Value {
    search_schema(json!({
        "glob": {"type": "string"},
        "ignore_case": {"type": "boolean"},
        "context": {"type": "integer"},
        "output": {"type": "string", "enum": ["content", "files", "count"]}
    }))
}

pub fn glob_schema() -> Value {
    search_schema(json!({}))
}

/// The schema of a search's arguments: the pattern, the folder, the page, and `more`.
fn search_schema(more: Value) -> Value {
    let mut properties = json!({
        "pattern": {"type": "string"},
        "path": {"type": "string"},
        "limit": {"type": "integer", "minimum": 1},
        "offset": {"type": "integer"}
    });
    if let (Some(all), Value::Object(more)) = (properties.as_object_mut(), more) {
        all.extend(more);
    }
    json!({"type": "object", "properties": properties, "required": ["pattern"]})
}

/// A search call in one line: the pattern, then the path and the glob filter when given
/// (`NEEDLE src/ *.rs`).
pub fn summary(input: &Value) -> Option<String> {
    let field = |name| input.get(name).and_then(Value::as_str).filter(|text| !text.is_empty());
    let mut line = field("pattern")?.to_owned();
    for name in ["path", "glob"] {
        if let Some(text) = field(name) {
            line.push(' ');
            line.push_str(text);
        }
    }
    Some(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_reads_as_its_pattern_path_and_filter() {
        let input = json!({"pattern": "NEEDLE", "path": "src/", "glob": "*.rs", "limit": 5});
        assert_eq!(summary(&input).as_deref(), Some("NEEDLE src/ *.rs"));
        assert_eq!(summary(&json!({"pattern": "a b"})).as_deref(), Some("a b"));
        assert_eq!(summary(&json!({"path": "src"})), None);
    }

    #[test]
    fn both_schemas_take_the_pattern_the_folder_and_the_page_and_grep_its_own() {
        let keys = |schema: Value| -> Vec<String> {
            schema["properties"].as_object().unwrap().keys().cloned().collect()
        };
        assert_eq!(keys(glob_schema()), ["limit", "offset", "path", "pattern"]);
        let grep = ["context", "glob", "ignore_case", "limit", "offset", "output", "path"];
        assert_eq!(keys(grep_schema()), [&grep[..], &["pattern"]].concat());
        assert_eq!(grep_schema()["required"], json!(["pattern"]));
        assert_eq!(glob_schema()["properties"]["limit"]["minimum"], 1);
    }

    #[test]
    fn unknown_and_misspelt_arguments_are_refused_by_name() {
        let err = serde_json::from_value::<GrepArgs>(json!({"pattern": "x", "-i": true}));
        assert!(err.unwrap_err().to_string().contains("unknown field `-i`"));
        let err = serde_json::from_value::<GrepArgs>(json!({"pattern": "x", "output": "lines"}));
        let message = err.unwrap_err().to_string();
        assert!(message.contains("`content`, `files`, `count`"), "{message}");
    }
}
