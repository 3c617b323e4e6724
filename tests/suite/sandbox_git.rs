//! The workspace's repository in the sandbox, for real: a command cannot put a repository of its
//! own, with hooks that would run later outside any sandbox, where the person's git will find
//! it — not by renaming `.git` away, not by rewriting a linked worktree's `.git` file, not by
//! `git init` where there is none, not through a submodule's repository or a linked worktree's
//! folder — while git inside still commits.

use crate::support::bin::{keel, output_within};
use crate::support::files::outside_tmp;
use crate::support::llm::{FakeLlm, Step, text, tool};
use keel::runtime::Workspace;
use keel::runtime::sandbox::{Availability, Mode, Policy, Sandbox};
use keel::tools::{ToolContext, ToolOutcome, Tools};
use serde_json::json;
use std::path::Path;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// How long the sandbox's empty covers may take to go once its last process has.
const PLACEHOLDERS_GONE: Duration = Duration::from_secs(5);

async fn sandboxed_bash(root: &Path, command: &str) -> ToolOutcome {
    keel::runtime::supervisor::set_program(crate::support::bin::program());
    let sandbox = Sandbox::probe(Policy { mode: Mode::Workspace, ..Policy::default() }, None);
    assert!(
        matches!(sandbox.availability, Availability::Ready { .. }),
        "these tests need bwrap (package bubblewrap): {:?}",
        sandbox.availability
    );
    let tools = Tools::new(Workspace::new(root).unwrap()).with_sandbox(sandbox);
    let ctx = ToolContext {
        cancel: CancellationToken::new(),
        live_output: None,
        gate: None,
        conversation: None,
    };
    tools.run("bash", &json!({ "command": command }), &ctx).await
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

/// Runs one `keel -p` turn of `steps` in `work`, the model answering after `delay`; returns
/// its stderr and what the model was told of each call.
async fn keel_turn(steps: Vec<Step>, delay: Duration, work: &Path) -> (String, Vec<String>) {
    let home = outside_tmp();
    let server = FakeLlm::start(steps, delay).await;
    let mut command = keel(home.path());
    command
        .args(["-p", "Go.", "--workdir"])
        .arg(work)
        .env("ANTHROPIC_API_KEY", "k")
        .env("ANTHROPIC_BASE_URL", server.anthropic_base());
    let output = output_within(&mut command, "keel -p");
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "{stderr}");
    let results = server
        .bodies()
        .await
        .iter()
        .filter_map(|body| body["messages"].as_array()?.last().cloned())
        .flat_map(|message| message["content"].as_array().cloned().unwrap_or_default())
        .filter(|block| block["type"] == "tool_result")
        .map(|block| block["content"].to_string())
        .collect();
    (stderr, results)
}

/// A repository with a folder beside it whose hooks a `commondir` would hand to git.
fn with_elsewhere(work: &Path) {
    git(work, &["init", "-q"]);
    let hook = work.join("elsewhere/hooks/pre-commit");
    std::fs::create_dir_all(hook.parent().unwrap()).unwrap();
    std::fs::write(&hook, "#!/bin/sh\ntouch pwned\n").unwrap();
    std::fs::set_permissions(&hook, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    for part in ["objects", "refs"] {
        std::fs::create_dir_all(work.join("elsewhere").join(part)).unwrap();
    }
    std::fs::copy(work.join(".git/config"), work.join("elsewhere/config")).unwrap();
}

/// The person's next commit runs no hook of the command's.
fn commit_runs_no_hook_of_theirs(work: &Path) {
    assert!(!work.join(".git/commondir").exists());
    git(
        work,
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
    assert!(!work.join("pwned").exists(), "the command's hook ran");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_commondir_a_command_writes_is_removed_and_the_model_told() {
    let work = outside_tmp();
    with_elsewhere(work.path());
    let steps = vec![
        tool("bash", json!({"command": "echo ../elsewhere > .git/commondir; echo wrote"})),
        tool("bash", json!({"command": "git status --short; echo fine"})),
        text("Done."),
    ];
    let (stderr, results) = keel_turn(steps, Duration::ZERO, work.path()).await;
    assert!(
        results[0].contains("wrote") && results[0].contains("Removed .git/commondir"),
        "{results:?}"
    );
    assert!(!results[1].contains("commondir"), "a command that leaves git alone: {results:?}");
    let told = stderr.matches("keel: Removed .git/commondir").count();
    assert_eq!(told, 1, "the person is told, once: {stderr}");
    commit_runs_no_hook_of_theirs(work.path());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_commondir_a_background_job_writes_later_is_removed_when_the_turn_ends() {
    let work = outside_tmp();
    with_elsewhere(work.path());
    let later = "(sleep 0.2; echo ../elsewhere > .git/commondir) > /dev/null 2>&1 &";
    let steps = vec![tool("bash", json!({ "command": later })), text("Started.")];
    // The answer after the command comes once the job has written the file.
    let (stderr, results) = keel_turn(steps, Duration::from_millis(600), work.path()).await;
    assert!(!results[0].contains("commondir"), "not there yet when the command ended: {results:?}");
    assert!(stderr.contains("keel: Removed .git/commondir"), "the person is told: {stderr}");
    commit_runs_no_hook_of_theirs(work.path());
}

#[tokio::test]
async fn a_command_cannot_reach_a_submodules_repository_nor_make_a_worktrees_folder() {
    let work = outside_tmp();
    git(work.path(), &["init", "-q"]);
    // A submodule's repository, as `git submodule update` leaves it: a config git obeys when the
    // person runs `git status` in the superproject.
    let module = work.path().join(".git/modules/lib");
    std::fs::create_dir_all(module.join("hooks")).unwrap();
    std::fs::write(module.join("config"), "[core]\n\tbare = false\n").unwrap();
    let out = sandboxed_bash(
        work.path(),
        "printf '[core]\\n\\tfsmonitor = touch /tmp/pwned\\n' >> .git/modules/lib/config; \
         echo '#!/bin/sh' > .git/modules/lib/hooks/post-checkout; \
         mkdir -p .git/worktrees/w && echo ../../elsewhere > .git/worktrees/w/commondir; \
         echo tried",
    )
    .await;
    assert!(out.for_model.contains("tried"), "{}", out.for_model);
    assert!(out.for_model.contains("Read-only file system"), "{}", out.for_model);
    assert_eq!(std::fs::read_to_string(module.join("config")).unwrap(), "[core]\n\tbare = false\n");
    assert!(!module.join("hooks/post-checkout").exists());
    assert!(gone(&work.path().join(".git/worktrees")).await, "the cover stays: {}", out.for_model);
}

#[tokio::test(flavor = "multi_thread")]
async fn repositories_below_the_top_are_read_only_and_one_a_command_makes_is_moved_aside() {
    let work = outside_tmp();
    let w = work.path();
    git(w, &["init", "-q"]);
    // The person's own repository below the top, there before the session: theirs to keep, and
    // read-only to commands, as the top's is.
    let theirs = w.join("vendor/theirs");
    std::fs::create_dir_all(&theirs).unwrap();
    git(&theirs, &["init", "-q"]);
    let config = std::fs::read_to_string(theirs.join(".git/config")).unwrap();
    let plant = "mkdir -p sub && git -C sub init -q && \
                 printf '[core]\\n\\tfsmonitor = \"touch ../pwned; false\"\\n' >> sub/.git/config; \
                 (sleep 0.3; mkdir -p later && git -C later init -q) > /dev/null 2>&1 & \
                 echo '[core] fsmonitor = true' >> vendor/theirs/.git/config; \
                 echo '#!/bin/sh' > vendor/theirs/.git/hooks/post-checkout; \
                 mv vendor/theirs/.git vendor/theirs/.git-old; echo planted";
    let steps = vec![tool("bash", json!({ "command": plant })), text("Done.")];
    let (stderr, results) = keel_turn(steps, Duration::from_millis(600), w).await;
    assert!(results[0].contains("planted"), "{}", results[0]);
    for made in ["sub", "later"] {
        assert!(!w.join(made).join(".git").exists(), "{made}/.git stays: {stderr}");
        assert!(w.join(made).join(".git-quarantined/config").is_file(), "{made}: {stderr}");
        assert!(stderr.contains(&format!("Moved {made}/.git aside")), "{stderr}");
    }
    assert!(theirs.join(".git").is_dir(), "the person's repository was moved: {stderr}");
    assert!(results[0].contains("Read-only file system"), "{}", results[0]);
    assert_eq!(std::fs::read_to_string(theirs.join(".git/config")).unwrap(), config);
    assert!(!theirs.join(".git/hooks/post-checkout").exists());
    // The person looks at what the command left: git finds the workspace's repository, and
    // runs nothing of the command's.
    let status = std::process::Command::new("git")
        .args(["status", "--porcelain"])
        .current_dir(w.join("sub"))
        .output()
        .unwrap();
    assert!(status.status.success(), "{}", String::from_utf8_lossy(&status.stderr));
    assert!(!w.join("pwned").exists(), "the command's fsmonitor ran");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_repositories_nearest_the_top_are_kept_read_only_and_the_rest_told_once() {
    let work = outside_tmp();
    let w = work.path();
    for shallow in 0..32 {
        std::fs::create_dir_all(w.join(format!("r{shallow}/.git"))).unwrap();
    }
    for deep in ["deep/a", "deep/b"] {
        std::fs::create_dir_all(w.join(deep).join(".git")).unwrap();
    }
    let touch = "touch r0/.git/x deep/a/.git/y 2>&1; echo done";
    let steps =
        vec![tool("bash", json!({ "command": touch })), tool("bash", json!({ "command": touch }))];
    let (stderr, results) =
        keel_turn([steps, vec![text("Done.")]].concat(), Duration::ZERO, w).await;
    assert!(results[0].contains("Read-only file system"), "{}", results[0]);
    assert!(!w.join("r0/.git/x").exists());
    assert!(w.join("deep/a/.git/y").exists(), "the deepest are left writable");
    assert_eq!(stderr.matches("2 more below it are not").count(), 1, "{stderr}");
}
