//! The workspace's repository in the sandbox, for real: a command cannot put a repository of its
//! own, with hooks that would run later outside any sandbox, where the person's git will find
//! it — not by renaming `.git` away, not by rewriting a linked worktree's `.git` file, not by
//! `git init` where there is none — while git inside still commits.

use crate::support::files::outside_tmp;
use keel::tools::sandbox::{Availability, Mode, Policy, Sandbox};
use keel::tools::{ToolContext, ToolName, ToolOutcome, Tools, Workspace};
use serde_json::json;
use std::path::Path;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// How long the sandbox's empty covers may take to go once its last process has.
const PLACEHOLDERS_GONE: Duration = Duration::from_secs(5);

async fn sandboxed_bash(root: &Path, command: &str) -> ToolOutcome {
    keel::tools::supervisor::set_program(env!("CARGO_BIN_EXE_keel"));
    let sandbox = Sandbox::probe(Policy { mode: Mode::Workspace, ..Policy::default() }, None);
    assert!(
        matches!(sandbox.availability, Availability::Ready { .. }),
        "these tests need bwrap (package bubblewrap): {:?}",
        sandbox.availability
    );
    let tools = Tools::new(Workspace::new(root).unwrap()).with_sandbox(sandbox);
    let ctx = ToolContext { cancel: CancellationToken::new(), live_output: None, gate: None };
    tools.run(&ToolName::Bash, &json!({ "command": command }), &ctx).await
}

fn git(work: &Path, args: &[&str]) {
    let status = std::process::Command::new("git")
        .args(args)
        .current_dir(work)
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "git {args:?}");
}

/// Waits until `path` is gone, or the deadline passes.
async fn gone(path: &Path) -> bool {
    let until = Instant::now() + PLACEHOLDERS_GONE;
    while path.symlink_metadata().is_ok() && Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    path.symlink_metadata().is_err()
}

#[tokio::test]
async fn a_command_cannot_swap_the_repository_for_one_of_its_own() {
    let work = outside_tmp();
    git(work.path(), &["init", "-q"]);
    let out = sandboxed_bash(
        work.path(),
        "mv .git .git-old; rm -rf .git; mkdir -p .git/hooks; \
         printf '#!/bin/sh\\ntouch /pwned\\n' > .git/hooks/pre-commit; \
         git -c user.name=k -c user.email=k@k commit -q --allow-empty -m inside && echo COMMITTED",
    )
    .await;
    assert!(!work.path().join(".git-old").exists(), "renamed away: {}", out.for_model);
    assert!(!work.path().join(".git/hooks/pre-commit").exists(), "{}", out.for_model);
    // `rm -rf` emptied what it could, but git's own files it may change are its to change.
    assert!(out.for_model.contains("busy"), "the rename was refused: {}", out.for_model);
}

#[tokio::test]
async fn git_commits_inside_a_pinned_repository() {
    let work = outside_tmp();
    git(work.path(), &["init", "-q"]);
    std::fs::write(work.path().join("a.txt"), "a\n").unwrap();
    let out = sandboxed_bash(
        work.path(),
        "git add a.txt && git -c user.name=k -c user.email=k@k commit -qm one && \
         git checkout -qb topic && git log --oneline | wc -l",
    )
    .await;
    assert!(!out.is_error, "{}", out.for_model);
    git(work.path(), &["log", "--oneline", "topic"]);
}

#[tokio::test]
async fn a_command_makes_no_repository_where_there_is_none() {
    let work = outside_tmp();
    let out = sandboxed_bash(
        work.path(),
        "git init -q; mkdir -p .git/hooks; echo '#!/bin/sh' > .git/hooks/pre-commit; ls -a",
    )
    .await;
    assert!(out.for_model.contains("Read-only file system"), "{}", out.for_model);
    assert!(gone(&work.path().join(".git")).await, "the cover stays: {}", out.for_model);
}

#[tokio::test]
async fn a_linked_worktrees_git_file_stays_as_it_is() {
    let work = outside_tmp();
    let pointer = "gitdir: /nonexistent/worktrees/w\n";
    std::fs::write(work.path().join(".git"), pointer).unwrap();
    let out = sandboxed_bash(
        work.path(),
        "echo 'gitdir: /tmp/evil' > .git; mv .git .git-old; rm -f .git; echo tried",
    )
    .await;
    assert!(out.for_model.contains("tried"), "{}", out.for_model);
    assert_eq!(std::fs::read_to_string(work.path().join(".git")).unwrap(), pointer);
    assert!(!work.path().join(".git-old").exists());
}

#[tokio::test]
async fn a_commondir_a_command_writes_is_removed_and_said() {
    let work = outside_tmp();
    git(work.path(), &["init", "-q"]);
    // git would take its config and hooks from the folder the file names.
    let out = sandboxed_bash(
        work.path(),
        "mkdir -p elsewhere/hooks && cp -r .git/. elsewhere/ 2>/dev/null; \
         printf '#!/bin/sh\\ntouch pwned\\n' > elsewhere/hooks/pre-commit; \
         chmod +x elsewhere/hooks/pre-commit; echo ../elsewhere > .git/commondir; echo wrote",
    )
    .await;
    assert!(out.for_model.contains("wrote"), "{}", out.for_model);
    assert!(out.for_model.contains("keel removed .git/commondir"), "{}", out.for_model);
    assert!(out.for_display.contains("keel removed .git/commondir"), "{}", out.for_display);
    assert!(!work.path().join(".git/commondir").exists());
    git(
        work.path(),
        &[
            "-c",
            "user.name=k",
            "-c",
            "user.email=k@k",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "mine",
        ],
    );
    assert!(!work.path().join("pwned").exists(), "the command's hook ran");

    // A command that leaves git alone is told nothing.
    let out = sandboxed_bash(work.path(), "git status --short; echo fine").await;
    assert!(!out.for_model.contains("commondir"), "{}", out.for_model);
}
