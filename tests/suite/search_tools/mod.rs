//! The search tools, `grep` and `glob`, against a real temporary workspace: each argument, the
//! ignore rules (`.gitignore`, nested ones, `.ignore`, git's excludes, hidden and binary files),
//! newest files first, the caps and paging, and every way out of the workspace refused.

mod caps;
mod confinement;
mod errors;
mod glob_arguments;
mod grep_arguments;
mod ignore_rules;

use crate::support::files::{ctx, run, workspace};
use keel::tools::search::{MAX_ANSWER_BYTES, MAX_LINE_CHARS, MAX_RESULTS, tally_of};
use keel::tools::{ToolOutcome, Tools};
use serde_json::{Value, json};
use std::path::Path;
use std::time::{Duration, SystemTime};

/// Writes `content` to `relative` below `root`, its time of last change `age` seconds ago.
fn put(root: &Path, relative: &str, content: &str, age: u64) {
    let path = root.join(relative);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, content).unwrap();
    let when = SystemTime::now() - Duration::from_secs(age);
    std::fs::File::options().write(true).open(&path).unwrap().set_modified(when).unwrap();
}

fn git_init(root: &Path) {
    let status = std::process::Command::new("git").args(["init", "-q"]).current_dir(root).status();
    assert!(status.unwrap().success(), "these tests need git");
}

async fn grep(tools: &Tools, input: Value) -> ToolOutcome {
    run(tools, "grep", input).await
}

async fn glob(tools: &Tools, input: Value) -> ToolOutcome {
    run(tools, "glob", input).await
}

/// An answer's result lines, without its last line (the tally and the paging note).
fn results(outcome: &ToolOutcome) -> Vec<&str> {
    assert!(!outcome.is_error, "{}", outcome.for_model);
    let mut lines: Vec<&str> = outcome.for_model.lines().collect();
    let last = lines.pop().unwrap_or_default();
    assert!(last.starts_with('['), "the last line is the tally: {last}");
    lines
}

fn last_line(outcome: &ToolOutcome) -> &str {
    outcome.for_model.lines().last().unwrap_or_default()
}

/// A small project: three Rust files of different ages, a text file and a Markdown file.
fn project(root: &Path) {
    put(root, "src/old.rs", "fn old() {}\n// needle in old\n", 300);
    put(root, "src/lib.rs", "pub mod old;\nfn needle() -> u8 {\n    1\n}\n", 100);
    put(root, "src/new.rs", "// NEEDLE, shouting\nfn new() {}\n", 10);
    put(root, "notes.txt", "a needle in the notes\n", 200);
    put(root, "README.md", "# no match here\n", 50);
}
