#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(dead_code)]
//! Helpers shared by the file tool tests: a real temporary workspace and a way to run a call.

use keel::tools::{ToolContext, ToolOutcome, Tools, Workspace};
use serde_json::Value;
use std::time::Duration;
use tempfile::TempDir;
use tokio_util::sync::CancellationToken;

/// Generous bound for "returned promptly" on a loaded two-core machine: a hang guard only.
pub const PROMPT: Duration = Duration::from_secs(15);

/// A fresh workspace in a temporary folder, and the tools confined to it.
pub fn workspace() -> (TempDir, Tools) {
    let dir = tempfile::tempdir().unwrap();
    let tools = Tools::new(Workspace::new(dir.path()).unwrap());
    (dir, tools)
}

pub fn ctx() -> ToolContext {
    ToolContext { cancel: CancellationToken::new(), live_output: None }
}

pub async fn run(tools: &Tools, name: &str, input: Value) -> ToolOutcome {
    tools.run(name, &input, &ctx()).await
}

/// The names in `folder`, sorted: to check that no temporary file was left behind.
pub fn names_in(folder: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(folder)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}
