//! The built binary tells the truth end to end: typing at 8 keys a second while an approval box
//! appears (in tmux, against a local scripted server) never runs the command and leaves the text
//! whole in the prompt; `keel -p` names a command with a `\r` on its progress line and in its
//! JSON `tool_start` summary exactly as the approval box would.
//!
//! The tmux test drives the binary in a private tmux server (`support::tmux`).

use crate::support::tmux::KeelPane;
use crate::support::{bin, llm};
use std::process::Output;
use std::thread::sleep;
use std::time::Duration;

/// How long a keypress or an answer may take to show.
const KEY_TIMEOUT: Duration = Duration::from_secs(20);
/// Keys at 8 a second.
const TYPING: Duration = Duration::from_millis(125);
/// The command whose `\r` once hid its start on every line but the approval box.
const HIDDEN: &str = "echo safe\rrm -rf ~/important # hidden";
/// How it must read everywhere.
const SHOWN: &str = "echo safe␍rm -rf ~/important # hidden";

#[test]
fn typing_through_an_appearing_approval_box_runs_nothing_and_keeps_the_text() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let steps = vec![
        llm::tool("bash", serde_json::json!({"command": "touch planted.txt"})),
        llm::text("Understood."),
    ];
    // The box appears a second and a half into the typing: mid-sentence.
    let server = runtime.block_on(llm::FakeLlm::start(steps, Duration::from_millis(1500)));
    let home = tempfile::tempdir().unwrap();
    let workdir = tempfile::tempdir().unwrap();
    let test = "typing_through_an_appearing_approval_box_runs_nothing_and_keeps_the_text";
    let Some(tmux) = KeelPane::start(test, home.path()) else { return };
    tmux.launch(
        &format!("ANTHROPIC_API_KEY=k ANTHROPIC_BASE_URL='{}'", server.anthropic_base()),
        &format!("--workdir '{}'", workdir.path().display()),
    );
    tmux.wait_for("keel to start", KEY_TIMEOUT, |screen| screen.contains("Welcome to keel"));
    tmux.type_text("Plant a file.");
    tmux.send(&["Enter"]);

    // Letters the box answers to (y, a, n) all through it; the box arrives part way.
    let sentence = "I will ask you about it later, and any answer can wait, yes, nothing now";
    let half = sentence.len() / 2;
    let mut box_seen_mid_typing = false;
    for (index, c) in sentence.char_indices() {
        tmux.type_text(&c.to_string());
        if index == half {
            box_seen_mid_typing = tmux.screen().contains("Approval needed");
        }
        sleep(TYPING);
    }
    assert!(box_seen_mid_typing, "the box never appeared while typing: the test proves nothing");
    let screen = tmux
        .wait_for("the typed text in the prompt", KEY_TIMEOUT, |screen| screen.contains(sentence));
    assert!(screen.contains("Approval needed"), "the box still asks:\n{screen}");
    assert!(!workdir.path().join("planted.txt").exists(), "a typed letter approved the command");
    assert!(!screen.contains("Understood."), "a typed letter answered the box:\n{screen}");

    // Once the typing pauses, the box's own keys answer it.
    tmux.wait_for("the box's keys", KEY_TIMEOUT, |screen| screen.contains("y yes"));
    tmux.send(&["n"]);
    let screen =
        tmux.wait_for("the model's answer", KEY_TIMEOUT, |screen| screen.contains("Understood."));
    assert!(!workdir.path().join("planted.txt").exists(), "a refused command never ran");
    assert!(screen.contains(sentence), "the typed text survived:\n{screen}");

    tmux.quit();
}

fn p_with_a_hidden_command(format: &str) -> Output {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let steps = vec![llm::tool("bash", serde_json::json!({"command": HIDDEN})), llm::text("done")];
    let server = runtime.block_on(llm::FakeLlm::start(steps, Duration::ZERO));
    let (home, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mut command = bin::keel(home.path());
    command
        .args(["-p", "go", "--output-format", format, "--workdir"])
        .arg(work.path())
        .env("ANTHROPIC_API_KEY", "k")
        .env("ANTHROPIC_BASE_URL", server.anthropic_base());
    bin::output_within(&mut command, "keel -p with a hidden command")
}

#[test]
fn p_names_a_command_with_a_carriage_return_as_the_approval_box_does() {
    let output = p_with_a_hidden_command("text");
    let stderr = bin::text(&output.stderr);
    assert!(stderr.contains(&format!("→ bash: {SHOWN}")), "the progress line:\n{stderr}");
    assert!(!stderr.contains('\r'), "a carriage return reached the terminal:\n{stderr:?}");

    let output = p_with_a_hidden_command("json");
    let events = bin::json_lines(&output);
    let start = events.iter().find(|event| event["type"] == "tool_start").expect("a tool_start");
    assert_eq!(start["summary"], SHOWN, "{start}");
    assert_eq!(start["input"]["command"], HIDDEN, "the input itself is as the model sent it");
}
