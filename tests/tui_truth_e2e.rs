#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The built binary tells the truth end to end: typing at 8 keys a second while an approval box
//! appears (in tmux, against a local scripted server) never runs the command and leaves the text
//! whole in the prompt; `keel -p` names a command with a `\r` on its progress line and in its
//! JSON `tool_start` summary exactly as the approval box would.
//!
//! The tmux test runs its own tmux server (a socket in a temporary directory) in a clean
//! environment. Without tmux it is skipped, saying so — except in CI (`CI` set), where a missing
//! tmux must fail rather than pass.

mod fake_llm;
mod keel_bin;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::thread::sleep;
use std::time::{Duration, Instant};

/// How long a keypress or an answer may take to show.
const KEY_TIMEOUT: Duration = Duration::from_secs(20);
const POLL: Duration = Duration::from_millis(100);
/// Keys at 8 a second.
const TYPING: Duration = Duration::from_millis(125);
/// The shell prompt inside the pane (followed by a space), to tell the shell from keel.
const PROMPT: &str = "truth-shell$";
/// Printed by the shell when keel exits.
const EXITED: &str = "keel exited with";
/// The command whose `\r` once hid its start on every line but the approval box.
const HIDDEN: &str = "echo safe\rrm -rf ~/important # hidden";
/// How it must read everywhere.
const SHOWN: &str = "echo safe␍rm -rf ~/important # hidden";

/// One private tmux server with one 120×40 session running a plain shell.
struct Tmux {
    socket: PathBuf,
}

impl Tmux {
    fn start(dir: &Path) -> Self {
        let tmux = Self { socket: dir.join("tmux.sock") };
        let shell = format!(
            "env -i PATH=\"$PATH\" TERM=\"$TERM\" HOME='{}' PS1='{PROMPT} ' sh",
            dir.display()
        );
        let output = tmux.run(&["new-session", "-d", "-x", "120", "-y", "40", "-s", "t", &shell]);
        assert!(output.status.success(), "tmux new-session failed: {output:?}");
        tmux
    }

    fn run(&self, args: &[&str]) -> Output {
        Command::new("tmux").arg("-S").arg(&self.socket).args(args).output().expect("tmux runs")
    }

    fn send(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "t"];
        args.extend_from_slice(keys);
        assert!(self.run(&args).status.success(), "send-keys {keys:?}");
    }

    fn literal(&self, text: &str) {
        assert!(self.run(&["send-keys", "-t", "t", "-l", text]).status.success());
    }

    fn screen(&self) -> String {
        String::from_utf8_lossy(&self.run(&["capture-pane", "-p", "-t", "t"]).stdout).into_owned()
    }

    /// Polls the screen until `done` holds; panics with the last screen after `timeout`.
    fn wait_for(&self, what: &str, done: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if done(&screen) {
                return screen;
            }
            assert!(
                start.elapsed() < KEY_TIMEOUT,
                "timed out waiting for {what}; the pane shows:\n{screen}"
            );
            sleep(POLL);
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.run(&["kill-server"]);
    }
}

/// Whether tmux is here; in CI it must be.
fn can_run(test: &str) -> bool {
    if Command::new("tmux").arg("-V").output().is_ok_and(|output| output.status.success()) {
        return true;
    }
    let in_ci = std::env::var_os("CI").is_some_and(|value| !value.is_empty());
    assert!(!in_ci, "{test}: tmux is not installed, and CI must run the end-to-end tests");
    eprintln!("SKIPPED {test}: tmux is not installed");
    false
}

#[test]
fn typing_through_an_appearing_approval_box_runs_nothing_and_keeps_the_text() {
    if !can_run("typing_through_an_appearing_approval_box_runs_nothing_and_keeps_the_text") {
        return;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let steps = vec![
        fake_llm::tool("bash", serde_json::json!({"command": "touch planted.txt"})),
        fake_llm::text("Understood."),
    ];
    // The box appears a second and a half into the typing: mid-sentence.
    let server = runtime.block_on(fake_llm::FakeLlm::start(steps, Duration::from_millis(1500)));
    let home = tempfile::tempdir().unwrap();
    let workdir = tempfile::tempdir().unwrap();
    let tmux = Tmux::start(home.path());
    tmux.wait_for("the shell prompt", |screen| screen.contains(PROMPT));
    tmux.literal(&format!(
        "ANTHROPIC_API_KEY=k ANTHROPIC_BASE_URL='{}' '{}' --workdir '{}'; echo \"{EXITED} $?\"",
        server.anthropic_base(),
        env!("CARGO_BIN_EXE_keel"),
        workdir.path().display()
    ));
    tmux.send(&["Enter"]);
    tmux.wait_for("keel to start", |screen| screen.contains("Welcome to keel"));
    tmux.literal("Plant a file.");
    tmux.send(&["Enter"]);

    // Letters the box answers to (y, a, n) all through it; the box arrives part way.
    let sentence = "I will ask you about it later, and any answer can wait, yes, nothing now";
    let half = sentence.len() / 2;
    let mut box_seen_mid_typing = false;
    for (index, c) in sentence.char_indices() {
        tmux.literal(&c.to_string());
        if index == half {
            box_seen_mid_typing = tmux.screen().contains("Approval needed");
        }
        sleep(TYPING);
    }
    assert!(box_seen_mid_typing, "the box never appeared while typing: the test proves nothing");
    let screen = tmux.wait_for("the typed text in the prompt", |screen| screen.contains(sentence));
    assert!(screen.contains("Approval needed"), "the box still asks:\n{screen}");
    assert!(!workdir.path().join("planted.txt").exists(), "a typed letter approved the command");
    assert!(!screen.contains("Understood."), "a typed letter answered the box:\n{screen}");

    // Once the typing pauses, the box's own keys answer it.
    tmux.wait_for("the box's keys", |screen| screen.contains("y yes"));
    tmux.send(&["n"]);
    let screen = tmux.wait_for("the model's answer", |screen| screen.contains("Understood."));
    assert!(!workdir.path().join("planted.txt").exists(), "a refused command never ran");
    assert!(screen.contains(sentence), "the typed text survived:\n{screen}");

    tmux.send(&["C-c"]);
    tmux.send(&["C-c"]);
    tmux.wait_for("keel to exit", |screen| screen.lines().any(|line| line.starts_with(EXITED)));
}

fn p_with_a_hidden_command(format: &str) -> Output {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let steps = vec![
        fake_llm::tool("bash", serde_json::json!({"command": HIDDEN})),
        fake_llm::text("done"),
    ];
    let server = runtime.block_on(fake_llm::FakeLlm::start(steps, Duration::ZERO));
    let (home, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mut command = keel_bin::keel(home.path());
    command
        .args(["-p", "go", "--output-format", format, "--workdir"])
        .arg(work.path())
        .env("ANTHROPIC_API_KEY", "k")
        .env("ANTHROPIC_BASE_URL", server.anthropic_base());
    keel_bin::output_within(&mut command, "keel -p with a hidden command")
}

#[test]
fn p_names_a_command_with_a_carriage_return_as_the_approval_box_does() {
    let output = p_with_a_hidden_command("text");
    let stderr = keel_bin::text(&output.stderr);
    assert!(stderr.contains(&format!("→ bash: {SHOWN}")), "the progress line:\n{stderr}");
    assert!(!stderr.contains('\r'), "a carriage return reached the terminal:\n{stderr:?}");

    let output = p_with_a_hidden_command("json");
    let events = keel_bin::json_lines(&output);
    let start = events.iter().find(|event| event["type"] == "tool_start").expect("a tool_start");
    assert_eq!(start["summary"], SHOWN, "{start}");
    assert_eq!(start["input"]["command"], HIDDEN, "the input itself is as the model sent it");
}
