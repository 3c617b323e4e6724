//! A real agent in the test's process with the scripted model (`llm::scripted`), no server at
//! all: a script of steps, the agent started on it in a temporary workspace, and what its turns
//! sent back.

use keel::agent::{self, AgentConfig, AgentEvent, AgentHandle, Command, Snapshot, TurnOutcome};
use keel::llm::Provider;
use keel::llm::scripted::ScriptedProvider;
use keel::message::ContentBlock;
use keel::runtime::Workspace;
use keel::tools::Tools;
use serde_json::{Value, json};
use std::time::Duration;

pub const WAIT: Duration = Duration::from_secs(30);

pub fn todo(statuses: &[&str]) -> Value {
    let items: Vec<Value> = statuses
        .iter()
        .enumerate()
        .map(|(i, status)| json!({"id": (i + 1).to_string(), "text": format!("step {}", i + 1), "status": status}))
        .collect();
    json!({"name": "todo", "input": {"items": items}})
}

pub fn call(name: &str, input: Value) -> Value {
    json!({"name": name, "input": input})
}

pub fn step(text: &str, tools: Vec<Value>) -> Value {
    json!({"text": text, "tools": tools})
}

pub fn script(steps: Vec<Value>) -> String {
    json!({"prompt": "go", "finished": "finished", "steps": steps}).to_string()
}

pub struct Run {
    pub _dir: tempfile::TempDir,
    pub handle: AgentHandle,
}

pub fn start(steps: Vec<Value>, config: AgentConfig, pace: Duration) -> Run {
    let dir = tempfile::tempdir().unwrap();
    let provider = ScriptedProvider::from_json(&script(steps), pace).unwrap();
    keel::runtime::supervisor::set_program(crate::support::bin::program());
    let tools = Tools::new(Workspace::new(dir.path()).unwrap());
    let handle = agent::spawn(config, Some(Provider::Scripted(provider)), tools);
    Run { _dir: dir, handle }
}

impl Run {
    pub fn send(&self, command: Command) {
        self.handle.commands.send(command).unwrap();
    }

    /// Events until the turn's result.
    pub async fn until_result(&mut self) -> Vec<AgentEvent> {
        super::agent::until_result(&mut self.handle).await
    }

    /// The newest snapshot sent so far.
    pub fn latest(&mut self) -> Snapshot {
        super::agent::latest(&mut self.handle)
    }

    /// Ends the agent and returns every snapshot it sent that was not read yet.
    pub async fn rest_after_quit(&mut self) -> Vec<Snapshot> {
        self.send(Command::Quit);
        tokio::time::timeout(WAIT, &mut self.handle.task)
            .await
            .expect("the agent did not stop")
            .unwrap();
        std::iter::from_fn(|| self.handle.snapshots.try_recv().ok()).collect()
    }

    /// Waits until a snapshot satisfies `check`.
    pub async fn wait_for(&mut self, check: impl Fn(&Snapshot) -> bool) -> Snapshot {
        super::agent::wait_for(&mut self.handle, check).await
    }
}

pub fn config(nag_threshold: u32) -> AgentConfig {
    AgentConfig {
        nag_threshold: keel::agent::NagThreshold::Fixed(nag_threshold),
        ..AgentConfig::default()
    }
}

pub fn result_of(events: &[AgentEvent]) -> (TurnOutcome, String, usize, usize) {
    match events.last() {
        Some(AgentEvent::Result { outcome, text, done, total, .. }) => {
            (*outcome, text.clone(), *done, *total)
        }
        other => panic!("no result: {other:?}"),
    }
}

/// Every tool_use in the history is answered by exactly one tool_result in the next message.
pub fn assert_every_call_answered(snapshot: &Snapshot) {
    let messages: Vec<_> = snapshot.history.iter().collect();
    for (index, message) in messages.iter().enumerate() {
        for (id, _, _) in message.tool_uses() {
            let next = messages.get(index + 1).expect("a tool call was left without results");
            let answers = next
                .content
                .iter()
                .filter(|block| matches!(block, ContentBlock::ToolResult { tool_use_id, .. } if tool_use_id == id))
                .count();
            assert_eq!(answers, 1, "tool call {id} has {answers} results");
        }
    }
}

pub fn listing() -> Value {
    call("read_file", json!({"path": "missing.txt"}))
}
