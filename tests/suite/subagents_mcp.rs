//! A child agent and the MCP servers' tools: an explorer is offered only the tools their servers
//! mark read-only, and one it calls anyway is refused; a general child may call any, as its
//! parent may. The test server of `support::mcp_server` over stdio, the `keel` binary, and the
//! scripted model of `support::llm::family`.

use crate::support::bin::{json_lines, keel, last_result, output_within};
use crate::support::llm::family::{FamilyLlm, child, tool_names};
use crate::support::llm::{Step, text, tool};
use crate::support::mcp_server::stdio_server;
use serde_json::{Value, json};

/// The results of the tool calls in a request (Anthropic's wire format).
fn results(body: &Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|message| message["content"].as_array())
        .flatten()
        .filter(|block| block["type"] == "tool_result")
        .map(|block| match &block["content"] {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn an_explorer_is_offered_and_runs_only_the_mcp_tools_marked_read_only() {
    let both = |marker: &str| {
        let calls = Step {
            tools: vec![
                ("mcp__local__write".into(), json!({})),
                ("mcp__local__echo".into(), json!({"text": "x"})),
            ],
            ..Step::default()
        };
        child(marker, vec![calls, text("Tried both.")])
    };
    let parent = vec![
        tool("task", json!({"prompt": "[explorer] try the tools"})),
        tool("task", json!({"prompt": "[general] try the tools", "kind": "general"})),
        text("Done."),
    ];
    let server = FamilyLlm::start(parent, vec![both("[explorer]"), both("[general]")]).await;
    let (home, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let folder = home.path().join(".config/keel");
    std::fs::create_dir_all(&folder).unwrap();
    // The server is this test binary started again: on a loaded machine that takes a while.
    let config = stdio_server("local", "startup_timeout_ms = 60000");
    std::fs::write(folder.join("config.toml"), config).unwrap();
    let mut command = keel(home.path());
    command
        .args(["-p", "Use the tools.", "--output-format", "json", "--workdir"])
        .arg(work.path())
        .env("ANTHROPIC_API_KEY", "k")
        .env("ANTHROPIC_BASE_URL", server.anthropic_base());
    let output = output_within(&mut command, "keel -p with an MCP server and children");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(last_result(&json_lines(&output))["text"], "Done.");

    let parent = tool_names(&server.parent()[0]);
    assert!(parent.contains(&"mcp__local__write".to_owned()), "the server is up: {parent:?}");
    let explorer = server.child("[explorer]");
    let offered = tool_names(&explorer[0]);
    assert!(offered.contains(&"mcp__local__echo".to_owned()), "{offered:?}");
    assert!(offered.contains(&"mcp__local__env".to_owned()), "{offered:?}");
    assert!(!offered.contains(&"mcp__local__write".to_owned()), "{offered:?}");
    assert!(!offered.contains(&"mcp__local__picture".to_owned()), "unmarked: {offered:?}");
    let answers = results(&explorer[1]);
    assert!(answers[0].contains("does not mark it read-only"), "{answers:?}");
    assert!(answers[0].contains("this child agent explores"), "{answers:?}");
    assert_eq!(answers[1], "echo: x");

    let general = server.child("[general]");
    assert!(tool_names(&general[0]).contains(&"mcp__local__write".to_owned()));
    let answers = results(&general[1]);
    assert!(!answers[0].contains("not allowed"), "a general child may: {answers:?}");
    assert_eq!(answers[1], "echo: x");
}
