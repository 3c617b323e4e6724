//! MCP calls in `ask` mode, through the agent's public API with the test server over stdio: the
//! approval box names the server and the tool and shows the arguments as pretty JSON, and
//! "always" covers that tool of that server for the session — not its other tools.

use crate::support::mcp_server;

use keel::agent::{self, AgentConfig, AgentEvent, ApprovalMode, Command, Decision};
use keel::llm::Provider;
use keel::llm::scripted::ScriptedProvider;
use keel::message::ContentBlock;
use keel::runtime::Workspace;
use keel::tools::Tools;
use keel::tools::mcp::{Hub, ServerConfig};
use serde_json::json;
use std::collections::BTreeMap;
use std::time::Duration;

const HANG_GUARD: Duration = Duration::from_secs(30);

#[tokio::test(flavor = "multi_thread")]
async fn ask_mode_shows_server_tool_and_arguments_and_always_covers_that_tool_only() {
    let dir = tempfile::tempdir().unwrap();
    let file: BTreeMap<String, BTreeMap<String, ServerConfig>> =
        toml::from_str(&mcp_server::stdio_server("local", "")).unwrap();
    let servers = vec![file["mcp_servers"]["local"].check("local").unwrap()];
    let hub = Hub::start(servers, dir.path(), &[], None);
    let call = |name: &str, input| json!({"text": "", "tools": [{"name": name, "input": input}]});
    let script = json!({"prompt": "go", "finished": "finished", "steps": [
        call("mcp__local__write", json!({"n": 1})),
        call("mcp__local__write", json!({"n": 2})),
        call("mcp__local__echo", json!({"text": "hi"})),
        {"text": "finished", "tools": []},
    ]});
    let provider = ScriptedProvider::from_json(&script.to_string(), Duration::ZERO).unwrap();
    let tools = Tools::new(Workspace::new(dir.path()).unwrap()).with_mcp(hub.clone());
    let config = AgentConfig { approval: ApprovalMode::Ask, ..AgentConfig::default() };
    let mut handle = agent::spawn(config, Some(Provider::Scripted(provider)), tools);
    handle.commands.send(Command::Submit("go".into())).unwrap();

    let mut asked = Vec::new();
    let mut last = None;
    let drive = async {
        loop {
            tokio::select! {
                snapshot = handle.snapshots.recv() => {
                    let snapshot = snapshot.expect("the agent stopped");
                    if let Some(request) = &snapshot.pending_approval
                        && !asked.iter().any(|(id, _, _)| *id == request.id)
                    {
                        asked.push((request.id.clone(), request.detail.clone(), request.always.clone()));
                        // Always for the first write; once for the rest.
                        let decision = if asked.len() == 1 { Decision::Always } else { Decision::Once };
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
    tokio::time::timeout(HANG_GUARD, drive).await.expect("the turn never ended");
    handle.commands.send(Command::Quit).unwrap();
    while let Ok(snapshot) = handle.snapshots.try_recv() {
        last = Some(snapshot);
    }
    hub.shutdown();

    let details: Vec<&str> = asked.iter().map(|(_, detail, _)| detail.as_str()).collect();
    assert_eq!(
        details,
        [
            "MCP server `local`, tool `write`\n{\n  \"n\": 1\n}",
            "MCP server `local`, tool `echo`\n{\n  \"text\": \"hi\"\n}",
        ],
        "the second write was covered by always; echo, another tool, was asked about"
    );
    let always = asked[0].2.as_deref().unwrap();
    assert_eq!(always, "every mcp__local__write call for the rest of the session");
    let last = last.unwrap();
    let results: Vec<String> = last
        .history
        .iter()
        .flat_map(|message| message.content.iter())
        .filter_map(|block| match block {
            ContentBlock::ToolResult { content, .. } => Some(content.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(results, ["changed", "changed", "echo: hi"]);
    // The inspector's request and the context estimate carry the server's tools.
    let sent: Vec<&str> = last.request.tools.iter().map(|tool| tool.name.as_str()).collect();
    assert!(sent.contains(&"mcp__local__echo") && sent.contains(&"bash"), "{sent:?}");
    // `/mcp` reads the servers from the snapshot.
    let listed = keel::tools::mcp::listing::render(&last.mcp);
    assert!(listed.starts_with("local (ready, 7 tools) — sh -c"), "{listed}");
}
