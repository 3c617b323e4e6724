//! What the person is told when keel, not the person, stops a call — through the agent's public
//! API with the scripted model: without a sandbox `ask` says in words that the command would run
//! unconfined (and, allowed, it runs); `auto` refuses it as "refused: no sandbox", plan mode as
//! "refused: plan mode", never "declined" (the person's word); an MCP tool its server marks
//! read-only is asked about as a call, not a change; a call to a server that never started is
//! answered at once, never put to the person.

use crate::support::mcp_server;
use keel::agent::{
    self, AgentConfig, AgentEvent, AgentHandle, ApprovalMode, ApprovalRequest, Asking, Command,
    Decision, Refusal, Snapshot, ToolStatus,
};
use keel::llm::Provider;
use keel::llm::scripted::ScriptedProvider;
use keel::runtime::Workspace;
use keel::runtime::sandbox::{Availability, Policy, Sandbox};
use keel::tools::Tools;
use keel::tools::mcp::{Hub, ServerConfig};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::time::Duration;

const HANG_GUARD: Duration = Duration::from_secs(30);

/// A sandbox that cannot be set up here, the person not having turned it off.
fn missing() -> Sandbox {
    Sandbox {
        policy: Policy::default(),
        availability: Availability::Missing(
            "cannot sandbox commands: `bwrap` not found; install bubblewrap".into(),
        ),
        ..Sandbox::off()
    }
}

fn start(calls: Vec<Value>, config: AgentConfig, tools: Tools) -> AgentHandle {
    keel::runtime::supervisor::set_program(crate::support::bin::program());
    let steps: Vec<Value> = calls
        .into_iter()
        .map(|call| json!({"text": "", "tools": [call]}))
        .chain([json!({"text": "Done.", "tools": []})])
        .collect();
    let script = json!({"prompt": "go", "finished": "finished", "steps": steps}).to_string();
    let provider = ScriptedProvider::from_json(&script, Duration::ZERO).unwrap();
    let handle = agent::spawn(config, Some(Provider::Scripted(provider)), tools);
    handle.commands.send(Command::Submit("go".into())).unwrap();
    handle
}

/// Drives the turn to its end, answering every approval with `decision`; returns the requests
/// shown and the last snapshot.
async fn drive(handle: &mut AgentHandle, decision: Decision) -> (Vec<ApprovalRequest>, Snapshot) {
    let mut asked: Vec<ApprovalRequest> = Vec::new();
    let mut last = None;
    let turn = async {
        loop {
            tokio::select! {
                snapshot = handle.snapshots.recv() => {
                    let snapshot = snapshot.expect("the agent stopped");
                    if let Some(request) = &snapshot.pending_approval
                        && !asked.iter().any(|seen| seen.id == request.id)
                    {
                        asked.push((**request).clone());
                        let id = request.id.clone();
                        handle.commands.send(Command::Approve { id, decision }).unwrap();
                    }
                    last = Some(snapshot);
                }
                event = handle.events.recv() => {
                    if let Some(AgentEvent::Result { .. }) = event {
                        return;
                    }
                    assert!(event.is_some(), "the agent stopped before the turn ended");
                }
            }
        }
    };
    tokio::time::timeout(HANG_GUARD, turn).await.expect("the turn never ended");
    handle.commands.send(Command::Quit).unwrap();
    while let Ok(snapshot) = handle.snapshots.recv().await.ok_or(()) {
        last = Some(snapshot);
    }
    (asked, last.expect("no snapshot"))
}

fn statuses(snapshot: &Snapshot) -> Vec<ToolStatus> {
    snapshot.tools.iter().map(|run| run.status).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn without_a_sandbox_ask_says_the_command_would_run_unconfined_and_allowed_it_runs() {
    let dir = tempfile::tempdir().unwrap();
    let tools = Tools::new(Workspace::new(dir.path()).unwrap()).with_sandbox(missing());
    let config = AgentConfig { approval: ApprovalMode::Ask, ..AgentConfig::default() };
    let bash = json!({"name": "bash", "input": {"command": "touch ran.txt"}});
    let mut handle = start(vec![bash], config, tools);
    let (asked, last) = drive(&mut handle, Decision::Once).await;
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].asking, Asking::UnconfinedCommand);
    let words = asked[0].sandbox.as_deref().unwrap_or_default();
    assert!(words.contains("runs unconfined, as you"), "{words}");
    assert!(words.contains("install bubblewrap"), "{words}");
    assert!(asked[0].always.is_none(), "never allowed always without a sandbox");
    assert!(dir.path().join("ran.txt").exists(), "allowed, it ran");
    assert_eq!(statuses(&last), [ToolStatus::Succeeded]);
}

#[tokio::test(flavor = "multi_thread")]
async fn keels_own_refusals_say_why_and_never_declined() {
    // `auto` without a sandbox: refused, no one asked.
    let dir = tempfile::tempdir().unwrap();
    let tools = Tools::new(Workspace::new(dir.path()).unwrap()).with_sandbox(missing());
    let bash = json!({"name": "bash", "input": {"command": "touch ran.txt"}});
    let mut handle = start(vec![bash], AgentConfig::default(), tools);
    let (asked, last) = drive(&mut handle, Decision::Once).await;
    assert!(asked.is_empty());
    assert_eq!(statuses(&last), [ToolStatus::Refused(Refusal::NoSandbox)]);
    assert!(!dir.path().join("ran.txt").exists());
    let marks: Vec<ToolStatus> = last.call_marks.values().map(|mark| mark.status).collect();
    assert_eq!(marks, [ToolStatus::Refused(Refusal::NoSandbox)]);

    // Plan mode: a write refused as plan mode's.
    let dir = tempfile::tempdir().unwrap();
    let tools = Tools::new(Workspace::new(dir.path()).unwrap());
    let write = json!({"name": "write_file", "input": {"path": "a.txt", "content": "a"}});
    let config = AgentConfig { plan: true, ..AgentConfig::default() };
    let mut handle = start(vec![write], config, tools);
    let (_, last) = drive(&mut handle, Decision::Once).await;
    assert_eq!(statuses(&last), [ToolStatus::Refused(Refusal::PlanMode)]);
    assert_eq!(Refusal::PlanMode.label(), "refused: plan mode");
    assert_eq!(Refusal::NoSandbox.label(), "refused: no sandbox");
}

#[tokio::test(flavor = "multi_thread")]
async fn mcp_a_read_only_tool_is_asked_as_a_call_and_a_server_that_never_started_is_not_asked() {
    let dir = tempfile::tempdir().unwrap();
    let config = format!(
        "{}[mcp_servers.broken]\ncommand = \"/nonexistent/mcp-server\"\n",
        mcp_server::stdio_server("local", "")
    );
    let file: BTreeMap<String, BTreeMap<String, ServerConfig>> = toml::from_str(&config).unwrap();
    let servers = ["local", "broken"]
        .into_iter()
        .map(|name| file["mcp_servers"][name].check(name).unwrap())
        .collect();
    let hub = Hub::start(servers, dir.path(), &[], None);
    hub.settled().await;
    let tools = Tools::new(Workspace::new(dir.path()).unwrap()).with_mcp(hub.clone());
    let calls = vec![
        json!({"name": "mcp__local__echo", "input": {"text": "hi"}}),
        json!({"name": "mcp__broken__anything", "input": {}}),
    ];
    let config = AgentConfig { approval: ApprovalMode::Ask, ..AgentConfig::default() };
    let mut handle = start(calls, config, tools);
    let (asked, last) = drive(&mut handle, Decision::Once).await;
    hub.shutdown();
    assert_eq!(asked.len(), 1, "only the call that can run is put to the person: {asked:?}");
    assert_eq!(asked[0].asking, Asking::Call { read_only: true });
    let result = last
        .history
        .iter()
        .flat_map(|message| &message.content)
        .filter_map(|block| match block {
            keel::message::ContentBlock::ToolResult { content, .. } => Some(content.clone()),
            _ => None,
        })
        .last()
        .unwrap();
    assert!(result.contains("`broken` is not available"), "{result}");
    assert!(!result.contains("::"), "no Rust type names: {result}");
}
