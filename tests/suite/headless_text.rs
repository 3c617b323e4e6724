//! `keel -p`'s text output never passes an escape sequence from the model or a tool to the
//! person's terminal: what the model says, its board, the commands it runs and their errors are
//! printed with every control character made visible. JSON output escapes them as JSON does.

use crate::support::{bin, llm};
use bin::{keel, output_within};
use llm::{FakeLlm, Step, text, tool};
use serde_json::json;
use std::time::Duration;

/// Sets the window title, then writes to the clipboard (OSC 52), then clears the screen.
const TITLE: &str = "\u{1b}]0;pwned\u{7}";
const CLIPBOARD: &str = "\u{1b}]52;c;cm0gLXJmIH4=\u{7}";
const CLEAR: &str = "\u{1b}[2J";

fn hostile_task() -> Vec<Step> {
    vec![
        Step {
            tools: vec![(
                "todo".into(),
                json!({"items": [{"id": "1", "text": format!("step{CLIPBOARD}"), "status": "in_progress"}]}),
            )],
            ..text(&format!("Planning{TITLE}."))
        },
        tool("bash", json!({"command": format!("echo hi{CLEAR}; exit 3")})),
        tool("read_file", json!({"path": format!("missing{CLEAR}.txt")})),
        text(&format!("Done{TITLE}{CLEAR}\rhidden before a carriage return")),
    ]
}

/// `keel -p go` with `args`, against `server`, in a fresh home and workspace.
fn run_p(server: &FakeLlm, args: &[&str], what: &str) -> std::process::Output {
    let (home, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mut command = keel(home.path());
    command
        .args(["-p", "go"])
        .args(args)
        .arg("--workdir")
        .arg(work.path())
        .env("ANTHROPIC_API_KEY", "test-key")
        .env("ANTHROPIC_BASE_URL", server.anthropic_base());
    output_within(&mut command, what)
}

fn run(server: &FakeLlm, format: &str) -> (String, String) {
    let output = run_p(server, &["--output-format", format], "keel -p with a hostile model");
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[tokio::test]
async fn text_output_shows_escapes_instead_of_sending_them() {
    let server = FakeLlm::start(hostile_task(), Duration::ZERO).await;
    let (stdout, stderr) = run(&server, "text");
    for stream in [&stdout, &stderr] {
        assert!(!stream.contains('\u{1b}'), "an escape reached the terminal: {stream:?}");
        assert!(!stream.contains('\u{7}'), "a bell reached the terminal: {stream:?}");
        assert!(!stream.contains('\r'), "a carriage return reached the terminal: {stream:?}");
    }
    assert!(stdout.contains("Done^[]0;pwned^G^[[2J␍hidden before a carriage return"), "{stdout}");
    assert!(stderr.contains("Planning^[]0;pwned^G."), "{stderr}");
    assert!(stderr.contains("step^[]52;c;cm0gLXJmIH4=^G"), "the board: {stderr}");
    assert!(stderr.contains("echo hi^[[2J; exit 3"), "the command: {stderr}");
    assert!(stderr.contains("missing^[[2J.txt"), "the tool's error: {stderr}");
}

#[tokio::test]
async fn json_output_escapes_them_as_json_does() {
    let server = FakeLlm::start(hostile_task(), Duration::ZERO).await;
    let (stdout, _) = run(&server, "json");
    assert!(!stdout.contains('\u{1b}'), "{stdout:?}");
    assert!(stdout.contains("\\u001b]0;pwned\\u0007"), "{stdout}");
}

/// The closing line of a text run over a model called `model`.
async fn closing_line(model: &str) -> String {
    let server =
        FakeLlm::start(vec![tool("read_file", json!({"path": "a"})), text("done")], Duration::ZERO)
            .await;
    let output = run_p(&server, &["--model", model], "keel -p over two answers");
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "{stderr}");
    stderr.lines().rfind(|line| line.starts_with('(')).unwrap_or_default().to_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_closing_line_counts_the_tokens_and_prices_a_model_keel_knows() {
    // The fake server's two answers: a 1,000-token prompt, 900 of it written to the cache, then
    // 1,100 with 900 read from it and 100 written; 20 tokens out each.
    let known = closing_line("claude-sonnet-4-5").await;
    assert_eq!(known, "(2 model responses, no board; 2100 tokens in, 40 out, $0.01)");
    let unknown = closing_line("a-model-keel-has-no-price-for").await;
    assert_eq!(unknown, "(2 model responses, no board; 2100 tokens in, 40 out)");
}
