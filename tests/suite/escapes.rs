//! Text keel prints outside the TUI goes through the same escaping as the approval box: a file
//! name the model made, a prompt, a key in a cloned repository's `.keel/config.toml` — each
//! carrying an OSC 52 clipboard write — reaches the terminal as visible stand-ins, never as an
//! escape, through `keel undo`, `keel sessions`, the configuration error and `-p`'s progress.

use crate::support::{bin, llm};
use bin::{keel, output_within};
use llm::{FakeLlm, Step, text, tool};
use serde_json::json;
use std::path::Path;
use std::process::Output;
use std::time::Duration;

/// An OSC 52 sequence: writes "hi" to the terminal's clipboard.
const CLIPBOARD_WRITE: &str = "\x1b]52;c;aGk=\x07";

fn all_output(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned() + &String::from_utf8_lossy(&output.stderr)
}

/// Fails when `said` holds an escape or a bell; passes when it shows the stand-in instead.
fn assert_escaped(said: &str) {
    assert!(!said.contains('\x1b') && !said.contains('\x07'), "raw escape printed: {said:?}");
    assert!(said.contains("^[]52;c;aGk=^G"), "the escape is shown as stand-ins: {said:?}");
}

async fn prompt(steps: Vec<Step>, home: &Path, work: &Path, prompt: &str) -> Output {
    let server = FakeLlm::start(steps, Duration::ZERO).await;
    let mut command = keel(home);
    command
        .arg("--workdir")
        .arg(work)
        .args(["-p", prompt])
        .env("ANTHROPIC_API_KEY", "k")
        .env("ANTHROPIC_BASE_URL", server.anthropic_base());
    output_within(&mut command, "keel -p")
}

#[tokio::test(flavor = "multi_thread")]
async fn a_model_made_file_name_is_escaped_in_progress_and_in_keel_undo() {
    let (home, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let name = format!("a{CLIPBOARD_WRITE}.txt");
    let steps = vec![
        tool("write_file", json!({"path": name, "content": "x\n"})),
        tool("bash", json!({"command": "true"})),
        text("Done."),
    ];
    let output = prompt(steps, home.path(), work.path(), "Make a file.").await;
    assert!(output.status.success(), "{}", all_output(&output));
    assert_escaped(&String::from_utf8_lossy(&output.stderr));
    assert!(work.path().join(&name).exists());

    let undone =
        output_within(keel(home.path()).arg("undo").arg("--workdir").arg(work.path()), "keel undo");
    assert!(undone.status.success(), "{}", all_output(&undone));
    assert_escaped(&all_output(&undone));
    assert!(!work.path().join(&name).exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_prompt_is_escaped_in_keel_sessions() {
    let (home, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let said = format!("Hello {CLIPBOARD_WRITE} there");
    let output = prompt(vec![text("Hi.")], home.path(), work.path(), &said).await;
    assert!(output.status.success(), "{}", all_output(&output));
    let listed = output_within(
        keel(home.path()).arg("sessions").arg("--workdir").arg(work.path()),
        "keel sessions",
    );
    assert!(listed.status.success(), "{}", all_output(&listed));
    assert_escaped(&all_output(&listed));
}

#[test]
fn an_unknown_key_in_a_workspace_config_is_escaped_in_the_error() {
    let (home, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    std::fs::create_dir(work.path().join(".keel")).unwrap();
    let config = "\"evil\\u001b]52;c;aGk=\\u0007\" = 1\n";
    std::fs::write(work.path().join(".keel/config.toml"), config).unwrap();
    let output = output_within(
        keel(home.path())
            .arg("--workdir")
            .arg(work.path())
            .args(["-p", "hi"])
            .env("ANTHROPIC_API_KEY", "k"),
        "keel with a bad workspace config",
    );
    assert!(!output.status.success(), "{}", all_output(&output));
    assert_escaped(&all_output(&output));
}
