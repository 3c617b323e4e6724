//! `@path` mentions: a mentioned file goes to the model with the prompt, numbered and capped as
//! `read_file` reads it; a mention that leads out of the workspace — by `..` or through a
//! symlink — is refused, never read, and the person is told why.

use super::last_user_text;
use crate::support::agent::{Wire, start, until_result};
use crate::support::llm::{FakeLlm, text};
use keel::agent::{AgentConfig, AgentEvent, Command, Sessions};
use std::time::Duration;

const SECRET: &str = "TOP SECRET: the key is 1234";

async fn mentions(wire: Wire) {
    let server = FakeLlm::start(vec![text("Looked.")], Duration::ZERO).await;
    let outer = tempfile::tempdir().unwrap();
    let work = outer.path().join("work");
    std::fs::create_dir(&work).unwrap();
    std::fs::write(outer.path().join("secret.txt"), SECRET).unwrap();
    std::fs::write(work.join("app.py"), "print('hi')\nprint('bye')\n").unwrap();
    std::os::unix::fs::symlink(outer.path().join("secret.txt"), work.join("link.txt")).unwrap();
    let mut handle = start(&server, wire, &work, AgentConfig::default(), Sessions::Off);
    let prompt = "Explain @app.py, @../secret.txt and @link.txt.";
    handle.commands.send(Command::Submit(prompt.into())).unwrap();
    let events = until_result(&mut handle).await;

    let bodies = server.bodies().await;
    let said = last_user_text(&bodies[0], wire);
    assert!(said.starts_with(prompt), "the prompt as typed comes first: {said}");
    assert!(
        said.contains(
            "<attached-file path=\"app.py\">\n     1\tprint('hi')\n     2\tprint('bye')\n"
        ),
        "{said}"
    );
    assert!(!bodies[0].to_string().contains("TOP SECRET"), "nothing outside was read");
    let refused = events.iter().find_map(|event| match event {
        AgentEvent::Error { text } if text.starts_with("Not attached") => Some(text.clone()),
        _ => None,
    });
    let refused = refused.expect("the person is told what was not attached");
    assert!(
        refused.contains("@../secret.txt: Path `../secret.txt` is outside the workspace"),
        "{refused}"
    );
    assert!(refused.contains("@link.txt: Path `link.txt` leads through a symlink"), "{refused}");
    let attached = events.iter().any(|event| {
        matches!(event, AgentEvent::Notice { text } if text == "Attached for the model: app.py.")
    });
    assert!(attached, "{events:?}");
    handle.commands.send(Command::Quit).unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn anthropic_reads_a_mentioned_file_and_nothing_outside() {
    mentions(Wire::Anthropic).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn openai_reads_a_mentioned_file_and_nothing_outside() {
    mentions(Wire::OpenAi).await;
}
