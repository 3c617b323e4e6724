//! Repositories a command makes without a `.git` entry: git takes any folder with a `HEAD`, an
//! `objects` and a `refs` for one, and obeys its config when the person runs git there — a
//! `core.fsmonitor` runs outside every sandbox. keel moves such a repository's `HEAD` aside as
//! the turn ends, below the top and at a top that has no `.git`. A background job that makes
//! again what keel removed is stopped, and the person told at once, though the agent is idle.

use crate::support::agent::{Wire, provider, until_result};
use crate::support::files::outside_tmp;
use crate::support::keel_as::{NOBODY, User, keel_p};
use crate::support::llm::{FakeLlm, text, tool};
use keel::agent::{self, AgentConfig, ApprovalMode, Command, Entry, Sessions};
use keel::runtime::Workspace;
use keel::runtime::sandbox::{Availability, Mode, Policy, Sandbox};
use keel::tools::Tools;
use serde_json::json;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

/// Makes `sub/` and the top each a repository git would use, whose config has `git status`
/// run a program that writes the file `$MARK`.
const PLANT: &str = r#"for repo in sub .; do
  mkdir -p "$repo/objects" "$repo/refs"
  echo 'ref: refs/heads/main' > "$repo/HEAD"
  printf '[core]\n\tbare = false\n\tworktree = .\n\tfsmonitor = "echo ran >> %s; false"\n' "$MARK" > "$repo/config"
done
echo PLANTED
"#;

/// Runs `git status` in `folder` as `user`, as the person would after the session; git looks
/// no higher than the workspace's parent.
fn git_status(user: User, folder: &Path, home: &Path) {
    let mut git = std::process::Command::new("git");
    git.arg("status")
        .current_dir(folder)
        .env("HOME", home)
        .env("GIT_CEILING_DIRECTORIES", folder.parent().unwrap().parent().unwrap())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    if user == User::Nobody && nix::unistd::geteuid().is_root() {
        std::os::unix::process::CommandExt::uid(&mut git, NOBODY);
        std::os::unix::process::CommandExt::gid(&mut git, NOBODY);
    }
    let _ = git.status().unwrap();
}

#[test]
fn a_repository_made_without_a_git_entry_is_moved_aside_at_the_top_and_below() {
    let runs: [(User, &[&str]); 3] =
        [(User::Root, &[]), (User::Nobody, &[]), (User::Root, &["--sandbox", "off"])];
    for (user, args) in runs {
        let (home, work, outside) = (outside_tmp(), outside_tmp(), outside_tmp());
        std::fs::set_permissions(outside.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
        let mark = outside.path().join("fsmonitor-ran");
        std::fs::write(work.path().join("plant.sh"), PLANT).unwrap();
        let steps = vec![
            tool("bash", json!({ "command": format!("MARK='{}' bash plant.sh", mark.display()) })),
            text("Done."),
        ];
        let run = keel_p(user, steps, home.path(), work.path(), args, |_| {});
        let stderr = run.stderr();
        assert!(run.all_results().contains("PLANTED"), "{user:?} {args:?}: {stderr}");
        assert!(stderr.contains("Moved sub/HEAD aside to sub/HEAD-quarantined"), "{stderr}");
        assert!(stderr.contains("the workspace's top a git repository"), "{stderr}");
        assert!(work.path().join("sub/HEAD-quarantined").is_file(), "{user:?} {args:?}");
        for folder in [work.path().join("sub"), work.path().to_path_buf()] {
            git_status(user, &folder, home.path());
        }
        assert!(!mark.exists(), "{user:?} {args:?}: git ran the planted fsmonitor");
        // What keel suggests puts it back, and git then takes it for a repository again.
        let back = std::process::Command::new("mv")
            .args(["sub/HEAD-quarantined", "sub/HEAD"])
            .current_dir(work.path())
            .status()
            .unwrap();
        assert!(back.success());
    }
}

/// Starts an agent in `work`'s sandbox whose one command leaves `job` running, and waits for the
/// turn to end; the job is killed with the agent.
async fn agent_leaving(work: &Path, job: &str) -> agent::AgentHandle {
    let steps = vec![
        tool("bash", json!({ "command": format!("({job}) > /dev/null 2>&1 & echo started") })),
        text("Started."),
    ];
    let server = FakeLlm::start(steps, Duration::ZERO).await;
    keel::runtime::supervisor::set_program(crate::support::bin::program());
    let sandbox = Sandbox::probe(Policy { mode: Mode::Workspace, ..Policy::default() }, None);
    assert!(matches!(sandbox.availability, Availability::Ready { .. }), "needs bwrap");
    let tools = Tools::new(Workspace::new(work).unwrap()).with_sandbox(sandbox);
    let config = AgentConfig { approval: ApprovalMode::Auto, ..AgentConfig::default() };
    let provider = Some(provider(&server, Wire::Anthropic));
    let mut handle = agent::spawn_with_session(config, provider, tools, Sessions::Off);
    handle.commands.send(Command::Submit("Start it.".into())).unwrap();
    until_result(&mut handle).await;
    // The server must answer while the agent works; it is done now.
    drop(server);
    handle
}

/// Waits, while the agent is idle, for a snapshot whose conversation ends with a line that
/// holds `words`: what the screen draws.
async fn shown_while_idle(handle: &mut agent::AgentHandle, words: &str) -> String {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    let mut last = Vec::new();
    loop {
        let snapshot = tokio::time::timeout_at(deadline, handle.snapshots.recv()).await;
        let Some(snapshot) = snapshot.ok().flatten() else {
            panic!("the screen was never shown {words:?}; it showed {:?}", last);
        };
        last = snapshot
            .transcript
            .iter()
            .filter_map(|entry| match entry {
                Entry::Error { text } | Entry::Notice { text } => Some(text.clone()),
                _ => None,
            })
            .collect::<Vec<_>>();
        let shown = snapshot.transcript.iter().find_map(|entry| match entry {
            Entry::Error { text } if text.contains(words) => Some(text.clone()),
            _ => None,
        });
        if let Some(text) = shown {
            return text;
        }
    }
}

/// How many lines the job's heartbeat has, a while apart: the same twice once it is stopped.
async fn beats_stopped(heartbeat: &Path) -> bool {
    let count = || std::fs::read_to_string(heartbeat).map_or(0, |text| text.lines().count());
    let before = count();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    before > 0 && count() == before
}

#[tokio::test(flavor = "multi_thread")]
async fn a_job_that_keeps_making_a_commondir_is_stopped_and_the_idle_screen_says_so() {
    let work = outside_tmp();
    let w = work.path();
    let init = std::process::Command::new("git").args(["init", "-q"]).current_dir(w).status();
    assert!(init.unwrap().success());
    let job = "while :; do echo beat >> heartbeat; echo ../x > .git/commondir; sleep 0.3; done";
    let mut handle = agent_leaving(w, job).await;
    let removed = shown_while_idle(&mut handle, "Removed .git/commondir").await;
    assert!(removed.contains("which a command made"), "{removed}");
    let stopped = shown_while_idle(&mut handle, "keel stopped the background jobs").await;
    assert!(stopped.contains(".git/commondir was made again"), "{stopped}");
    assert!(beats_stopped(&w.join("heartbeat")).await, "the job still runs");
    // What the job left as it was stopped goes with the look as it ends.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while w.join(".git/commondir").exists() {
        assert!(std::time::Instant::now() < deadline, "the job's last commondir stayed");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_job_that_keeps_making_a_repository_is_stopped() {
    let work = outside_tmp();
    let w = work.path();
    let job = "while :; do echo beat >> heartbeat; mkdir -p later/objects later/refs; \
               echo 'ref: refs/heads/main' > later/HEAD; sleep 0.3; done";
    let mut handle = agent_leaving(w, job).await;
    let moved = shown_while_idle(&mut handle, "Moved later/HEAD aside").await;
    assert!(moved.contains("a command made later a git repository"), "{moved}");
    let stopped = shown_while_idle(&mut handle, "keel stopped the background jobs").await;
    assert!(stopped.contains("a repository was made again"), "{stopped}");
    assert!(beats_stopped(&w.join("heartbeat")).await, "the job still runs");
}
