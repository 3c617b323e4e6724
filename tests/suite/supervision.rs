//! What `keel` guarantees about the processes of the commands it runs, checked on the real binary
//! against a scripted LLM server on 127.0.0.1: no provider key in their environment, no
//! controlling terminal, and none of their processes outliving keel — even when keel is killed.

use crate::support::llm;
use crate::support::processes::{is_dead, read_pids};
use llm::FakeLlm;
use serde_json::json;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Generous bound for "happened promptly" on a loaded two-core machine.
const PROMPT: Duration = Duration::from_secs(20);
/// Variables that would let the machine's own settings leak into a test.
const SCRUBBED: [&str; 8] = [
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "KEEL_PROVIDER",
    "KEEL_MODEL",
    "XDG_CONFIG_HOME",
    "XDG_STATE_HOME",
];
/// The key keel talks to the fake server with.
const KEY: &str = "sk-test-key-4711";

/// `keel -p go` in `work` against `server`, with a clean environment and a private home. The
/// commands run unsandboxed, so the pids they write are keel's to check; `sandbox.rs` checks the
/// same guarantees inside the sandbox.
fn keel(server: &FakeLlm, home: &Path, work: &Path) -> Command {
    let mut command = Command::new(crate::support::bin::program());
    for name in SCRUBBED {
        command.env_remove(name);
    }
    command
        .env("HOME", home)
        .env("ANTHROPIC_API_KEY", KEY)
        .env("ANTHROPIC_BASE_URL", server.anthropic_base())
        .args(["-p", "go", "--output-format", "json", "--sandbox", "off", "--workdir"])
        .arg(work)
        .stdin(Stdio::null());
    command
}

/// A script of one bash call, then a closing answer.
async fn one_command(command: &str) -> FakeLlm {
    let steps = vec![llm::tool("bash", json!({ "command": command })), llm::text("done")];
    FakeLlm::start(steps, Duration::ZERO).await
}

/// Waits until `path` lists `count` pids, or fails saying so.
fn wait_for_pids(path: &Path, count: usize, keel: &mut Child) -> Vec<i32> {
    let until = Instant::now() + PROMPT;
    loop {
        let pids = read_pids(path);
        if pids.len() >= count {
            return pids;
        }
        if let Some(status) = keel.try_wait().unwrap() {
            panic!("keel ended ({status}) before the command wrote {count} pids: {pids:?}");
        }
        assert!(Instant::now() < until, "the command wrote only {pids:?} in {PROMPT:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Fails unless every pid is dead within `PROMPT`.
fn assert_all_die(pids: &[i32]) {
    let until = Instant::now() + PROMPT;
    while !pids.iter().all(|pid| is_dead(*pid)) {
        if Instant::now() > until {
            let alive: Vec<i32> = pids.iter().copied().filter(|pid| !is_dead(*pid)).collect();
            for pid in &alive {
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(*pid),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
            panic!("processes of the command outlived keel: {alive:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A command that starts children in its own process group, in a session of their own, and as
/// an orphan in a session of its own, writes their pids, then waits.
const SPREADING: &str = "sleep 1000 & echo $! >> pids; \
     setsid sleep 1000 > /dev/null 2>&1 & echo $! >> pids; \
     (setsid bash -c 'echo $$ >> pids; sleep 1000 & echo $! >> pids; wait' > /dev/null 2>&1 &); \
     sleep 1000";

#[tokio::test(flavor = "multi_thread")]
async fn sigkill_of_keel_mid_command_leaves_no_process_of_the_command() {
    let server = one_command(SPREADING).await;
    let (home, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mut keel = keel(&server, home.path(), work.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pids = wait_for_pids(&work.path().join("pids"), 4, &mut keel);
    keel.kill().unwrap();
    keel.wait().unwrap();
    assert_all_die(&pids);
}

#[tokio::test(flavor = "multi_thread")]
async fn background_jobs_left_by_a_clean_command_end_with_keel() {
    let server = one_command("sleep 1000 > /dev/null 2>&1 & echo $! > pids").await;
    let (home, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let output = keel(&server, home.path(), work.path()).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let pids = read_pids(&work.path().join("pids"));
    assert_eq!(pids.len(), 1, "the command did not run");
    assert_all_die(&pids);
}

#[tokio::test(flavor = "multi_thread")]
async fn provider_keys_and_keel_settings_stay_out_of_commands() {
    let server = one_command("env > env.txt; printf %s \"$ANTHROPIC_API_KEY\" > key.txt").await;
    let (home, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let output = keel(&server, home.path(), work.path())
        .env("OPENAI_API_KEY", "sk-openai-secret")
        .env("KEEL_API_KEY", "keel-secret")
        .env("KEEL_ANYTHING", "keel-setting")
        .env("TZ", "Europe/Berlin")
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let env = std::fs::read_to_string(work.path().join("env.txt")).unwrap();
    for secret in [KEY, "sk-openai-secret", "keel-secret", "keel-setting"] {
        assert!(!env.contains(secret), "{secret} reached the command:\n{env}");
    }
    for name in ["ANTHROPIC_API_KEY=", "OPENAI_API_KEY=", "KEEL_"] {
        assert!(!env.lines().any(|line| line.starts_with(name)), "{name} reached the command");
    }
    assert!(
        env.lines().any(|line| line == "TZ=Europe/Berlin"),
        "the allow-listed rest is passed on"
    );
    assert!(env.lines().any(|line| line == "GIT_TERMINAL_PROMPT=0"));
    assert_eq!(std::fs::read_to_string(work.path().join("key.txt")).unwrap(), "");
}

/// Runs `command` under `script`, which gives it a pseudo-terminal as its controlling terminal;
/// returns what reached that terminal.
fn on_a_terminal(command: &str) -> String {
    let output = Command::new("script")
        .args(["--quiet", "--return", "--command", command, "/dev/null"])
        .stdin(Stdio::null())
        .output()
        .expect("`script` (util-linux) runs commands on a pseudo-terminal for this test");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// A command that writes a title-setting escape to its terminal; `\167` is `w`, so the word
/// appears only if the write arrives.
const TITLE_ESCAPE: &str = r"printf '\033]0;p\167ned\007' > /dev/tty";

#[tokio::test(flavor = "multi_thread")]
async fn commands_cannot_write_to_the_persons_terminal() {
    // The harness is real: a plain shell on the same terminal does reach it.
    assert!(on_a_terminal(&format!("bash -c \"{TITLE_ESCAPE}\"")).contains("pwned"));

    let server = one_command(&format!("{TITLE_ESCAPE}; echo $? > status")).await;
    let (home, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let keel = keel(&server, home.path(), work.path());
    let mut line: Vec<String> = vec![keel.get_program().to_string_lossy().into_owned()];
    line.extend(keel.get_args().map(|arg| arg.to_string_lossy().into_owned()));
    let mut exports = String::new();
    for (name, value) in keel.get_envs() {
        if let (Some(value), Some(name)) = (value, name.to_str()) {
            exports.push_str(&format!("{name}='{}' ", value.to_string_lossy()));
        }
    }
    let unset: Vec<&str> = SCRUBBED.iter().copied().filter(|n| *n != "ANTHROPIC_API_KEY").collect();
    let shell_line = format!(
        "unset {}; env {exports} {} > out.json 2> err.txt",
        unset.join(" "),
        line.iter().map(|arg| format!("'{arg}'")).collect::<Vec<_>>().join(" ")
    );
    let reached = on_a_terminal(&format!("cd '{}' && {shell_line}", work.path().display()));
    assert!(!reached.contains("pwned"), "the escape reached the terminal: {reached:?}");
    let status = std::fs::read_to_string(work.path().join("status")).unwrap();
    assert_ne!(status.trim(), "0", "writing to /dev/tty succeeded");
}
