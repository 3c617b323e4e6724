#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The sandbox, for real: commands run through the real `bwrap` and keel's own binary, and try
//! what a hostile model or repository would. Folders that must stay untouched live outside `/tmp`
//! (under Cargo's target folder), so it is the read-only mounts that protect them, not the
//! sandbox's private `/tmp`. CI runs as root, who could write anywhere without the sandbox.

mod fake_llm;
mod keel_bin;

use keel::tools::sandbox::{Availability, Mode, Policy, Sandbox};
use keel::tools::{ToolContext, ToolName, ToolOutcome, Tools, Workspace};
use serde_json::json;
use std::path::Path;
use tempfile::TempDir;
use tokio_util::sync::CancellationToken;

/// A folder outside `/tmp`, so that the sandbox's private `/tmp` does not hide it.
fn outside_tmp() -> TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap()
}

/// Tools for a workspace whose commands run in `policy`'s sandbox, which must be available.
fn sandboxed(root: &Path, policy: Policy) -> Tools {
    keel::tools::supervisor::set_program(env!("CARGO_BIN_EXE_keel"));
    let sandbox = Sandbox::probe(policy, None);
    assert!(
        matches!(sandbox.availability, Availability::Ready { .. }),
        "these tests need bwrap (package bubblewrap): {:?}",
        sandbox.availability
    );
    Tools::new(Workspace::new(root).unwrap()).with_sandbox(sandbox)
}

fn workspace_policy() -> Policy {
    Policy { mode: Mode::Workspace, ..Policy::default() }
}

async fn bash(tools: &Tools, command: &str) -> ToolOutcome {
    let ctx = ToolContext { cancel: CancellationToken::new(), live_output: None };
    tools.run(&ToolName::Bash, &json!({ "command": command }), &ctx).await
}

fn quoted(path: &Path) -> String {
    format!("'{}'", path.display())
}

#[tokio::test]
async fn commands_write_the_workspace_and_nothing_outside_it() {
    let work = outside_tmp();
    let outside = outside_tmp();
    let kept = outside.path().join("kept.txt");
    std::fs::write(&kept, "kept\n").unwrap();
    std::fs::create_dir(outside.path().join("tree")).unwrap();
    let tools = sandboxed(work.path(), workspace_policy());
    let o = quoted(outside.path());
    let out = bash(
        &tools,
        &format!(
            "echo inside > made.txt; touch {o}/new.txt; echo more >> {o}/kept.txt; \
             rm -f {o}/kept.txt; rm -rf {o}/tree; chmod 777 {o}; echo done"
        ),
    )
    .await;
    assert!(out.for_model.contains("done"), "{}", out.for_model);
    assert_eq!(std::fs::read_to_string(work.path().join("made.txt")).unwrap(), "inside\n");
    assert!(!outside.path().join("new.txt").exists());
    assert_eq!(std::fs::read_to_string(&kept).unwrap(), "kept\n");
    assert!(outside.path().join("tree").is_dir());
    assert!(out.for_model.contains("Read-only file system"), "{}", out.for_model);
}
