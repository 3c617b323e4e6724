//! `!command`: the person's own command runs as the model's do — in the same sandbox (a
//! read-only one in plan mode), under the same guard — shows in the conversation and the tool
//! pane, and its output reaches the model with the next request, once, on both protocols.

use super::last_user_text;
use crate::support::agent::{WAIT, Wire, provider};
use crate::support::files::outside_tmp;
use crate::support::llm::{FakeLlm, text};
use keel::agent::{self, AgentConfig, AgentEvent, AgentHandle, Command, Entry, Sessions};
use keel::runtime::Workspace;
use keel::runtime::sandbox::{Availability, Mode, Policy, Sandbox};
use keel::tools::Tools;
use std::path::Path;
use std::time::Duration;

/// A live agent in `dir` whose commands run in the workspace sandbox, which must be available.
fn sandboxed_agent(server: &FakeLlm, wire: Wire, dir: &Path, plan: bool) -> AgentHandle {
    keel::runtime::supervisor::set_program(crate::support::bin::program());
    let sandbox = Sandbox::probe(Policy { mode: Mode::Workspace, ..Policy::default() }, None);
    assert!(
        matches!(sandbox.availability, Availability::Ready { .. }),
        "these tests need bwrap (package bubblewrap): {:?}",
        sandbox.availability
    );
    let tools = Tools::new(Workspace::new(dir).unwrap()).with_sandbox(sandbox);
    let config = AgentConfig { plan, ..AgentConfig::default() };
    agent::spawn_with_session(config, Some(provider(server, wire)), tools, Sessions::Off)
}

/// Runs `!command` and returns the events until keel says it ran (or why it did not).
async fn run(handle: &mut AgentHandle, command: &str) -> Vec<AgentEvent> {
    handle.commands.send(Command::Shell(command.into())).unwrap();
    let mut events = Vec::new();
    tokio::time::timeout(WAIT, async {
        loop {
            let event = handle.events.recv().await.expect("the agent stopped");
            let done = matches!(&event, AgentEvent::Notice { text } if text.starts_with("You ran"))
                || matches!(event, AgentEvent::Error { .. });
            events.push(event);
            if done {
                return;
            }
        }
    })
    .await
    .expect("the command did not end");
    events
}

fn quoted(path: &Path) -> String {
    format!("'{}'", path.display())
}

async fn told(wire: Wire) {
    let server = FakeLlm::start(vec![text("Seen."), text("Seen again.")], Duration::ZERO).await;
    let (work, outside) = (outside_tmp(), outside_tmp());
    let mut handle = sandboxed_agent(&server, wire, work.path(), false);
    let command = format!(
        "echo inside > made.txt && echo made; touch {}/planted.txt; echo done",
        quoted(outside.path())
    );
    let events = run(&mut handle, &command).await;
    assert!(work.path().join("made.txt").exists(), "the workspace is writable: {events:?}");
    assert!(!outside.path().join("planted.txt").exists(), "outside it is not: {events:?}");
    let output = events.iter().find_map(|event| match event {
        AgentEvent::ToolEnd { id, output, .. } if id.starts_with("person-") => Some(output.clone()),
        _ => None,
    });
    let output = output.expect("it shows as a call, in the tool pane and the conversation");
    assert!(output.contains("Read-only file system"), "{output}");

    handle.commands.send(Command::Submit("What happened?".into())).unwrap();
    crate::support::agent::until_result(&mut handle).await;
    handle.commands.send(Command::Submit("And now?".into())).unwrap();
    crate::support::agent::until_result(&mut handle).await;
    let bodies = server.bodies().await;
    let said = last_user_text(&bodies[0], wire);
    assert!(said.starts_with("What happened?"), "{said}");
    let note = format!(
        "<person-command>The person ran a command in the workspace, in the sandbox your \
         commands run in:\n$ {command}\nExit code 0"
    );
    assert!(said.contains(&note), "{said}");
    assert!(said.contains("--- stdout ---\nmade\ndone\n"), "{said}");
    assert!(
        said.contains("Read-only file system") && said.ends_with("</person-command>"),
        "{said}"
    );
    assert_eq!(bodies[1].to_string().matches("<person-command>").count(), 1, "told once");
    handle.commands.send(Command::Quit).unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn anthropic_reads_the_persons_command_which_ran_confined() {
    told(Wire::Anthropic).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn openai_reads_the_persons_command_which_ran_confined() {
    told(Wire::OpenAi).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn in_plan_mode_the_persons_command_changes_nothing_even_one_that_would_wreck_things() {
    let server = FakeLlm::start(vec![text("ok")], Duration::ZERO).await;
    let work = outside_tmp();
    let mut handle = sandboxed_agent(&server, Wire::Anthropic, work.path(), true);
    let events = run(&mut handle, "touch made.txt").await;
    assert!(!work.path().join("made.txt").exists(), "plan mode's sandbox is read-only: {events:?}");

    // Confined as the model's commands are: the kernel, not the guard, keeps it from anything.
    std::fs::write(work.path().join("kept.txt"), "kept").unwrap();
    let events = run(&mut handle, "rm -rf /").await;
    let failed =
        events.iter().any(|event| matches!(event, AgentEvent::ToolEnd { is_error: true, .. }));
    assert!(failed, "nothing could be removed: {events:?}");
    assert!(work.path().join("kept.txt").exists(), "plan mode's sandbox is read-only: {events:?}");

    let snapshot = crate::support::agent::latest(&mut handle);
    let lines: Vec<&Entry> = snapshot.transcript.iter().collect();
    assert!(
        lines.iter().any(
            |entry| matches!(entry, Entry::ToolCall { summary, .. } if summary == "touch made.txt")
        ),
        "the conversation shows it: {lines:?}"
    );
    handle.commands.send(Command::Quit).unwrap();
}
