//! The sandbox, for real: commands run through the real `bwrap` and keel's own binary, and try
//! what a hostile model or repository would. Folders that must stay untouched live outside `/tmp`
//! (under Cargo's target folder), so it is the read-only mounts that protect them, not the
//! sandbox's private `/tmp`. CI runs as root, who could write anywhere without the sandbox.
//! `sandbox_keel.rs` runs attacks through the keel binary and a scripted model.

use crate::support::files::outside_tmp;
use keel::runtime::Workspace;
use keel::runtime::sandbox::{Availability, Mode, Policy, Sandbox};
use keel::tools::{ToolContext, ToolOutcome, Tools};
use serde_json::json;
use std::path::{Path, PathBuf};
use tempfile::TempDir;
use tokio_util::sync::CancellationToken;

/// Tools for a workspace whose commands run in `policy`'s sandbox, which must be available.
fn sandboxed(root: &Path, policy: Policy) -> Tools {
    keel::runtime::supervisor::set_program(crate::support::bin::program());
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
    let ctx = ToolContext {
        cancel: CancellationToken::new(),
        live_output: None,
        gate: None,
        conversation: None,
    };
    tools.run("bash", &json!({ "command": command }), &ctx).await
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

#[tokio::test]
async fn rm_through_a_symlink_to_an_outside_folder_deletes_nothing_outside() {
    let work = outside_tmp();
    let outside = outside_tmp();
    std::fs::write(outside.path().join("precious.txt"), "mine\n").unwrap();
    std::fs::create_dir(outside.path().join("folder")).unwrap();
    std::os::unix::fs::symlink(outside.path(), work.path().join("vendor")).unwrap();
    let tools = sandboxed(work.path(), workspace_policy());
    let out = bash(&tools, "rm -rf vendor/*").await;
    assert!(out.exit_code.is_some(), "the command ran: {}", out.for_model);
    assert!(outside.path().join("precious.txt").exists(), "{}", out.for_model);
    assert!(outside.path().join("folder").is_dir());
}

#[tokio::test]
async fn a_loopback_server_is_out_of_reach_unless_the_network_is_allowed() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut stream = stream;
            let _ = std::io::Write::write_all(&mut stream, b"pong\n");
        }
    });
    let work = outside_tmp();
    // In a script: the guard would refuse `/dev/tcp` on the command line itself.
    let script = format!("exec 3<>/dev/tcp/127.0.0.1/{port} && head -n 1 <&3\n");
    std::fs::write(work.path().join("fetch.sh"), script).unwrap();
    let fetch = "bash fetch.sh";
    let closed = bash(&sandboxed(work.path(), workspace_policy()), fetch).await;
    assert!(closed.exit_code.is_some_and(|code| code != 0), "{}", closed.for_model);
    assert!(!closed.for_model.contains("pong"), "{}", closed.for_model);
    let open = Policy { network: true, ..workspace_policy() };
    let reached = bash(&sandboxed(work.path(), open), fetch).await;
    assert_eq!(reached.exit_code, Some(0), "{}", reached.for_model);
    assert!(reached.for_model.contains("pong"), "{}", reached.for_model);
}

#[tokio::test]
async fn hooks_git_config_and_keel_settings_stay_read_only_while_git_commits_work() {
    let work = outside_tmp();
    let git = |args: &[&str]| {
        let status = std::process::Command::new("git")
            .args(args)
            .current_dir(work.path())
            .stdout(std::process::Stdio::null())
            .status()
            .unwrap();
        assert!(status.success(), "git {args:?}");
    };
    git(&["init", "-q"]);
    std::fs::create_dir_all(work.path().join(".git/hooks")).unwrap();
    std::fs::write(work.path().join("a.txt"), "a\n").unwrap();
    let config_before = std::fs::read(work.path().join(".git/config")).unwrap();
    let tools = sandboxed(work.path(), workspace_policy());
    let out = bash(
        &tools,
        "git add a.txt && git -c user.name=k -c user.email=k@k commit -qm one && echo COMMITTED; \
         printf '#!/bin/sh\\ntouch /pwned\\n' > .git/hooks/pre-commit; \
         echo '[core]' >> .git/config; git config core.hooksPath /elsewhere; \
         mkdir -p .keel; echo 'sandbox = \"off\"' > .keel/config.toml; true",
    )
    .await;
    assert!(out.for_model.contains("COMMITTED"), "{}", out.for_model);
    assert!(!work.path().join(".git/hooks/pre-commit").exists(), "{}", out.for_model);
    assert_eq!(std::fs::read(work.path().join(".git/config")).unwrap(), config_before);
    assert!(!work.path().join(".keel/config.toml").exists(), "{}", out.for_model);

    // The folder that covered the missing `.keel` goes with the sandbox: nothing of keel stays.
    let until = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while work.path().join(".keel").exists() && std::time::Instant::now() < until {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(!work.path().join(".keel").exists(), "no .keel left in the workspace");

    // A `.keel` that exists stays as it is too.
    std::fs::create_dir(work.path().join(".keel")).unwrap();
    std::fs::write(work.path().join(".keel/config.toml"), "approval = \"ask\"\n").unwrap();
    let out = bash(&tools, "echo 'sandbox = \"off\"' > .keel/config.toml; rm -rf .keel").await;
    assert_ne!(out.exit_code, Some(0));
    let kept = std::fs::read_to_string(work.path().join(".keel/config.toml")).unwrap();
    assert_eq!(kept, "approval = \"ask\"\n");
}

#[tokio::test]
async fn keels_state_stays_read_only_even_inside_the_workspace() {
    let work = outside_tmp();
    let state = work.path().join("state/keel");
    std::fs::create_dir_all(&state).unwrap();
    keel::runtime::supervisor::set_program(crate::support::bin::program());
    let mut sandbox = Sandbox::probe(workspace_policy(), None);
    sandbox.read_only.push(state.clone());
    let tools = Tools::new(Workspace::new(work.path()).unwrap()).with_sandbox(sandbox);
    let out = bash(&tools, "touch state/keel/session.jsonl; touch state/other").await;
    assert!(!state.join("session.jsonl").exists(), "{}", out.for_model);
    assert!(work.path().join("state/other").exists(), "{}", out.for_model);
}

#[tokio::test]
async fn keels_process_and_its_proc_files_are_out_of_reach() {
    let work = outside_tmp();
    let tools = sandboxed(work.path(), workspace_policy());
    let me = std::process::id();
    let out = bash(
        &tools,
        &format!("cat /proc/{me}/environ; echo hi > /proc/{me}/fd/1; ls /proc | grep -c '^[0-9]'"),
    )
    .await;
    assert!(
        out.for_model.contains(&format!("/proc/{me}/environ: No such file")),
        "{}",
        out.for_model
    );
    assert!(out.for_model.contains(&format!("/proc/{me}/fd/1: No such file")), "{}", out.for_model);
}

/// A tmux server of the person's, with its socket outside `/tmp`; killed when dropped.
struct Tmux {
    socket: PathBuf,
    _dir: TempDir,
}

impl Tmux {
    fn start() -> Self {
        let dir = outside_tmp();
        let socket = dir.path().join("s");
        let status = std::process::Command::new("tmux")
            .arg("-S")
            .arg(&socket)
            .args(["new-session", "-d", "-x", "80", "-y", "10", "sh"])
            .env_remove("TMUX")
            .status()
            .expect("tmux is installed (CI installs it)");
        assert!(status.success());
        Self { socket, _dir: dir }
    }

    fn command(&self, args: &[&str]) -> std::process::Output {
        std::process::Command::new("tmux").arg("-S").arg(&self.socket).args(args).output().unwrap()
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.command(&["kill-server"]);
    }
}

#[tokio::test]
async fn the_persons_tmux_server_cannot_be_driven() {
    let tmux = Tmux::start();
    assert!(tmux.command(&["list-sessions"]).status.success(), "the server runs");
    let work = outside_tmp();
    let marker = work.path().join("typed");
    let tools = sandboxed(work.path(), workspace_policy());
    let out = bash(
        &tools,
        &format!(
            "tmux -S {} send-keys 'touch {}' Enter && echo DROVE",
            quoted(&tmux.socket),
            quoted(&marker)
        ),
    )
    .await;
    assert!(out.exit_code.is_some(), "the command ran: {}", out.for_model);
    assert!(!out.for_model.contains("DROVE"), "{}", out.for_model);
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(!marker.exists(), "keys were typed into the person's shell");
    // From outside, the same line works: it is the sandbox that stops it.
    let outside = tmux.command(&["send-keys", &format!("touch {}", quoted(&marker)), "Enter"]);
    assert!(outside.status.success());
}

#[tokio::test]
async fn plan_mode_runs_a_writing_command_and_the_write_fails() {
    let work = outside_tmp();
    std::fs::write(work.path().join("notes.txt"), "as it was\n").unwrap();
    let tools = sandboxed(work.path(), workspace_policy()).confined_to(Mode::ReadOnly);
    assert_eq!(tools.sandbox().label(), "sandbox: read-only · no network");
    let out =
        bash(&tools, "cat notes.txt; echo changed > notes.txt; echo tmp > /tmp/x && cat /tmp/x")
            .await;
    assert!(out.for_model.contains("as it was"), "it reads: {}", out.for_model);
    assert!(out.for_model.contains("Read-only file system"), "{}", out.for_model);
    assert!(out.for_model.contains("tmp"), "its private /tmp is writable: {}", out.for_model);
    assert_eq!(std::fs::read_to_string(work.path().join("notes.txt")).unwrap(), "as it was\n");
}

#[tokio::test]
async fn background_jobs_stay_inside_and_keep_running_after_the_shell() {
    let work = outside_tmp();
    let outside = outside_tmp();
    let tools = sandboxed(work.path(), workspace_policy());
    let late = outside.path().join("late");
    let out = bash(
        &tools,
        &format!(
            "(sleep 0.3; touch done-late; touch {}) > /dev/null 2>&1 & \
             setsid sh -c 'touch {}' ; echo started",
            quoted(&late),
            quoted(&late)
        ),
    )
    .await;
    assert!(out.for_model.contains("started"), "{}", out.for_model);
    let until = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while !work.path().join("done-late").exists() && std::time::Instant::now() < until {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(work.path().join("done-late").exists(), "the background job ran on");
    assert!(!late.exists(), "and stayed inside the sandbox");
}

/// A background job whose output goes elsewhere (a dev server writing a log) holds nothing of
/// the command's: the command ends with its shell, and the job runs on past the grace keel gives
/// a pipe still held open. One that keeps the output is stopped after that grace, as unconfined.
#[tokio::test]
async fn a_background_job_with_its_output_elsewhere_outlives_the_shell() {
    let work = outside_tmp();
    let tools = sandboxed(work.path(), workspace_policy());
    let out = bash(&tools, "(sleep 1.5; touch done-later) > /dev/null 2>&1 & echo started").await;
    assert!(out.for_model.contains("started"), "{}", out.for_model);
    assert!(!out.for_model.contains("holding the output"), "{}", out.for_model);
    let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !work.path().join("done-later").exists() && std::time::Instant::now() < until {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(work.path().join("done-later").exists(), "the job ran on after the command");

    let out = bash(&tools, "(sleep 30; touch never) & echo started").await;
    assert!(out.for_model.contains("holding the output open were stopped"), "{}", out.for_model);
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert!(!work.path().join("never").exists());
}

/// What bwrap itself says when it cannot set the sandbox up reaches the command's stderr.
#[tokio::test]
async fn what_bwrap_says_reaches_the_command_output() {
    let work = outside_tmp();
    let tools = sandboxed(work.path(), workspace_policy());
    let out = bash(&tools, "echo to-stdout; echo to-stderr >&2").await;
    assert!(
        out.for_model.contains("to-stdout") && out.for_model.contains("to-stderr"),
        "{}",
        out.for_model
    );
    // A bwrap that passes the probe but fails the command, as a missing mount would.
    let fake = outside_tmp();
    let bwrap = fake.path().join("bwrap");
    std::fs::write(
        &bwrap,
        "#!/bin/sh\nfor last; do :; done\n[ \"$last\" = : ] && exit 0\necho 'bwrap: Can'\\''t mount proc' >&2\nexit 1\n",
    )
    .unwrap();
    std::fs::set_permissions(&bwrap, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    keel::runtime::supervisor::set_program(crate::support::bin::program());
    let sandbox = Sandbox::probe(workspace_policy(), Some(bwrap.as_os_str()));
    assert!(
        matches!(sandbox.availability, Availability::Ready { .. }),
        "{:?}",
        sandbox.availability
    );
    let tools = Tools::new(Workspace::new(work.path()).unwrap()).with_sandbox(sandbox);
    let out = bash(&tools, "echo never").await;
    assert_eq!(out.exit_code, Some(1), "{}", out.for_model);
    assert!(out.for_model.contains("bwrap: Can't mount proc"), "{}", out.for_model);
}

#[tokio::test]
async fn the_cover_of_a_missing_keel_folder_holds_while_any_sandbox_runs() {
    let work = outside_tmp();
    let tools = sandboxed(work.path(), workspace_policy());
    // Command after command: each finds the one before's cover, or none, and still runs.
    for _ in 0..10 {
        let out = bash(&tools, "true").await;
        assert_eq!(out.exit_code, Some(0), "{}", out.for_model);
    }
    // Two sandboxes at once: the second starts while the first runs, and the first ends before
    // the second tries to create `.keel`; the cover must stay for the second all the same.
    let first = bash(&tools, "sleep 0.5; touch first-done");
    let second = async {
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        bash(&tools, "sleep 1; mkdir -p .keel/x && echo CREATED").await
    };
    let (first, second) = tokio::join!(first, second);
    assert_eq!(first.exit_code, Some(0), "{}", first.for_model);
    assert!(work.path().join("first-done").exists(), "the first sandbox ran to its end");
    assert!(!second.for_model.contains("CREATED"), "{}", second.for_model);
    let until = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while work.path().join(".keel").exists() && std::time::Instant::now() < until {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(!work.path().join(".keel").exists(), "the last sandbox took the cover away");
}

#[tokio::test]
async fn the_guard_judges_only_what_no_sandbox_confines() {
    let work = tempfile::tempdir().unwrap();
    let confined = sandboxed(work.path(), workspace_policy());
    // What the guard refuses outright, and what would do no harm if it did not: running as
    // another user.
    let command = "sudo -n -u nobody true";
    let unconfined = Tools::new(Workspace::new(work.path()).unwrap());
    let refused = bash(&unconfined, command).await;
    assert!(refused.for_model.starts_with("Refused to run this command"), "{refused:?}");
    // In the sandbox the kernel decides: the command is not refused by keel, whatever it finds.
    let ran = bash(&confined, command).await;
    assert!(!ran.for_model.contains("Refused to run this command"), "{ran:?}");
    assert!(ran.exit_code.is_some(), "it ran: {ran:?}");
}
