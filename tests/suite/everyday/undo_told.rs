//! Undo is told to the model: after `/undo` (a live agent) or `keel undo` (the binary, between
//! two runs), the next request says which files were restored, deleted and re-created — once,
//! after the prompt — on both wire protocols, as the person's board edits are told.

use super::last_user_text;
use crate::support::agent::{WAIT, Wire, start, until_result};
use crate::support::bin::{keel, output_within};
use crate::support::llm::{FakeLlm, Step, text, tool};
use keel::agent::journal::SessionStore;
use keel::agent::{AgentConfig, AgentEvent, Command, Sessions};
use serde_json::json;
use std::path::Path;
use std::time::Duration;

/// The note the model reads after the first prompt below is undone.
const NOTE: &str = "<undo-note>The person undid the file changes of an earlier prompt; the workspace \
is back as it was before that prompt:\n\
- restored keep.txt\n\
- deleted new.txt (that prompt created it)\n\
- re-created old.txt (that prompt deleted it)\n\
What you remember of these files is out of date: read them again before you rely on them.</undo-note>";

/// A prompt that creates a file with write_file, then deletes one and changes another with
/// bash; then answers for the prompts after it.
fn script() -> Vec<Step> {
    vec![
        tool("write_file", json!({"path": "new.txt", "content": "new\n"})),
        tool("bash", json!({"command": "rm old.txt && echo changed > keep.txt"})),
        text("Done."),
        text("Noted."),
        text("Still noted."),
    ]
}

fn workspace(dir: &Path) {
    std::fs::write(dir.join("keep.txt"), "keep\n").unwrap();
    std::fs::write(dir.join("old.txt"), "old\n").unwrap();
}

async fn slash_undo(wire: Wire) {
    let server = FakeLlm::start(script(), Duration::ZERO).await;
    let (dir, state) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    workspace(dir.path());
    let store = SessionStore::new(state.path(), &dir.path().canonicalize().unwrap());
    let mut handle = start(&server, wire, dir.path(), AgentConfig::default(), Sessions::New(store));
    handle.commands.send(Command::Submit("Rearrange.".into())).unwrap();
    until_result(&mut handle).await;
    assert!(!dir.path().join("old.txt").exists());

    handle.commands.send(Command::Undo).unwrap();
    let told = tokio::time::timeout(WAIT, async {
        loop {
            if let Some(AgentEvent::Notice { text }) = handle.events.recv().await {
                return text;
            }
        }
    })
    .await
    .unwrap();
    assert!(told.contains("re-created old.txt"), "the person reads it too: {told}");
    assert_eq!(std::fs::read_to_string(dir.path().join("old.txt")).unwrap(), "old\n");

    handle.commands.send(Command::Submit("What now?".into())).unwrap();
    until_result(&mut handle).await;
    handle.commands.send(Command::Submit("And now?".into())).unwrap();
    until_result(&mut handle).await;

    let bodies = server.bodies().await;
    assert_eq!(bodies.len(), 5);
    assert!(!bodies[2].to_string().contains("<undo-note>"), "nothing to tell before the undo");
    let said = last_user_text(&bodies[3], wire);
    assert!(said.starts_with("What now?") && said.ends_with(NOTE), "the prompt, then: {said}");
    assert_eq!(bodies[4].to_string().matches("<undo-note>").count(), 1, "told once, not again");
    assert!(!last_user_text(&bodies[4], wire).contains("<undo-note>"));
    handle.commands.send(Command::Quit).unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn anthropic_hears_what_an_undo_put_back_with_the_next_prompt() {
    slash_undo(Wire::Anthropic).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn openai_hears_what_an_undo_put_back_with_the_next_prompt() {
    slash_undo(Wire::OpenAi).await;
}

/// Runs keel `args` in `work` against `server` over `wire`.
fn run(server: &FakeLlm, wire: Wire, home: &Path, work: &Path, args: &[&str]) -> String {
    let mut command = keel(home);
    command.args(args).arg("--workdir").arg(work);
    match wire {
        Wire::Anthropic => {
            command.env("ANTHROPIC_API_KEY", "k").env("ANTHROPIC_BASE_URL", server.anthropic_base())
        }
        Wire::OpenAi => {
            command.env("OPENAI_API_KEY", "k").env("OPENAI_BASE_URL", server.openai_base())
        }
    };
    let output = output_within(&mut command, "keel");
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "{stderr}");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

async fn keel_undo(wire: Wire) {
    let server = FakeLlm::start(script(), Duration::ZERO).await;
    let (home, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    workspace(work.path());
    run(&server, wire, home.path(), work.path(), &["-p", "Rearrange."]);
    let said = run(&server, wire, home.path(), work.path(), &["undo"]);
    assert!(said.contains("re-created old.txt"), "{said}");
    run(&server, wire, home.path(), work.path(), &["-p", "--continue", "What now?"]);

    let bodies = server.bodies().await;
    let said = last_user_text(bodies.last().unwrap(), wire);
    assert!(said.starts_with("What now?") && said.ends_with(NOTE), "the continued session: {said}");
}

#[tokio::test(flavor = "multi_thread")]
async fn after_keel_undo_a_continued_session_tells_anthropic() {
    keel_undo(Wire::Anthropic).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn after_keel_undo_a_continued_session_tells_openai() {
    keel_undo(Wire::OpenAi).await;
}
