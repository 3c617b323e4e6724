//! A real agent in the test's process, talking to the scripted loopback server (`support::llm`) on
//! either protocol: starting it, waiting for its turns, and sending the person's board edits.

use super::llm::FakeLlm;
use super::llm::family::FamilyLlm;
use keel::agent::{self, AgentConfig, AgentEvent, AgentHandle, Command, Entry, Sessions, Snapshot};
use keel::board::BoardEdit;
use keel::llm::anthropic::AnthropicClient;
use keel::llm::openai::OpenAiClient;
use keel::llm::retry::RetryPolicy;
use keel::llm::{HttpSettings, Provider};
use keel::runtime::Workspace;
use keel::tools::Tools;
use std::path::Path;
use std::time::Duration;

/// Hang guard for anything the agent is waited for.
pub const WAIT: Duration = Duration::from_secs(30);

/// Which protocol the agent speaks.
#[derive(Debug, Clone, Copy)]
pub enum Wire {
    Anthropic,
    OpenAi,
}

/// A scripted server's base URLs, as each protocol's client takes them.
pub trait Bases {
    fn anthropic_base(&self) -> String;
    fn openai_base(&self) -> String;
}

impl Bases for FakeLlm {
    fn anthropic_base(&self) -> String {
        FakeLlm::anthropic_base(self)
    }
    fn openai_base(&self) -> String {
        FakeLlm::openai_base(self)
    }
}

impl Bases for FamilyLlm {
    fn anthropic_base(&self) -> String {
        FamilyLlm::anthropic_base(self)
    }
    fn openai_base(&self) -> String {
        FamilyLlm::openai_base(self)
    }
}

/// A client of `server` in the given protocol.
pub fn provider(server: &impl Bases, wire: Wire) -> Provider {
    let base_url = match wire {
        Wire::Anthropic => server.anthropic_base(),
        Wire::OpenAi => server.openai_base(),
    };
    let settings = HttpSettings {
        base_url,
        api_key: "test".into(),
        model: "fake".into(),
        connect_timeout: Duration::from_secs(5),
        idle_timeout: Duration::from_secs(30),
        stall_timeout: Duration::from_secs(30),
        retry: RetryPolicy::default(),
    };
    match wire {
        Wire::Anthropic => Provider::Anthropic(AnthropicClient::new(settings).unwrap()),
        Wire::OpenAi => Provider::OpenAi(OpenAiClient::new(settings).unwrap()),
    }
}

/// Starts a real agent in `dir` that talks to `server`.
pub fn start(
    server: &impl Bases,
    wire: Wire,
    dir: &Path,
    config: AgentConfig,
    sessions: Sessions,
) -> AgentHandle {
    keel::runtime::supervisor::set_program(crate::support::bin::program());
    let tools = Tools::new(Workspace::new(dir).unwrap());
    agent::spawn_with_session(config, Some(provider(server, wire)), tools, sessions)
}

/// Events until the turn's result.
pub async fn until_result(handle: &mut AgentHandle) -> Vec<AgentEvent> {
    let mut events = Vec::new();
    loop {
        let event = tokio::time::timeout(WAIT, handle.events.recv())
            .await
            .expect("the turn did not end in time")
            .expect("the agent stopped");
        let done = matches!(event, AgentEvent::Result { .. });
        events.push(event);
        if done {
            return events;
        }
    }
}

/// Sends an edit and returns the snapshot in which the agent took it: the first, among those
/// not read yet, whose transcript is longer than any read before and ends in a notice or an
/// error. (Turns here end with the model's text, so no older snapshot ends that way.)
pub async fn edit(handle: &mut AgentHandle, seen: &mut usize, command: &str) -> Snapshot {
    let edit = BoardEdit::parse(command).unwrap();
    while let Ok(snapshot) = handle.snapshots.try_recv() {
        *seen = (*seen).max(snapshot.transcript.len());
    }
    let before = *seen;
    handle.commands.send(Command::EditBoard(edit)).unwrap();
    tokio::time::timeout(WAIT, async {
        loop {
            let snapshot = handle.snapshots.recv().await.expect("the agent stopped");
            *seen = (*seen).max(snapshot.transcript.len());
            let answered = snapshot.transcript.len() > before
                && matches!(
                    snapshot.transcript.last(),
                    Some(Entry::Notice { .. } | Entry::Error { .. })
                );
            if answered {
                return snapshot;
            }
        }
    })
    .await
    .expect("the edit was not taken")
}

/// The newest snapshot sent so far.
pub fn latest(handle: &mut AgentHandle) -> Snapshot {
    let mut latest = None;
    while let Ok(snapshot) = handle.snapshots.try_recv() {
        latest = Some(snapshot);
    }
    latest.expect("no snapshot")
}

/// Waits for a snapshot that satisfies `check`.
pub async fn wait_for(handle: &mut AgentHandle, check: impl Fn(&Snapshot) -> bool) -> Snapshot {
    tokio::time::timeout(WAIT, async {
        loop {
            let snapshot = handle.snapshots.recv().await.expect("the agent stopped");
            if check(&snapshot) {
                return snapshot;
            }
        }
    })
    .await
    .expect("the state never came")
}
