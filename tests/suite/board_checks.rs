//! Verified items on the wire: an item's check runs before keel takes its completion, through
//! `keel -p` against a loopback server speaking each protocol. A claim before the work is
//! refused with the check's exit and output, the board as it was; the honest claim passes.

use crate::support::{bin, llm};
use bin::{json_lines, keel, output_within};
use llm::{FakeLlm, Step, text, tool};
use serde_json::{Value, json};
use std::path::Path;
use std::process::Output;
use std::time::Duration;

/// Runs `keel -p go` in `work` against `server` over `protocol`'s endpoint.
fn run(server: &FakeLlm, work: &Path, openai: bool, args: &[&str]) -> Output {
    let home = tempfile::tempdir().unwrap();
    let mut command = keel(home.path());
    command.args(["-p", "go", "--workdir"]).arg(work).args(args);
    if openai {
        command.env("OPENAI_API_KEY", "k").env("OPENAI_BASE_URL", server.openai_base());
    } else {
        command.env("ANTHROPIC_API_KEY", "k").env("ANTHROPIC_BASE_URL", server.anthropic_base());
    }
    output_within(&mut command, "keel -p")
}

/// Every tool result the model read, in order, with whether it was an error, over either wire.
fn results(bodies: &[Value]) -> Vec<(String, bool)> {
    let last = bodies.last().cloned().unwrap_or_default();
    let messages = last["messages"].as_array().cloned().unwrap_or_default();
    let mut out = Vec::new();
    for message in messages {
        if message["role"] == "tool" {
            let content = message["content"].as_str().unwrap_or_default().to_owned();
            let error = content.starts_with("Error:");
            out.push((content, error));
        }
        for block in message["content"].as_array().into_iter().flatten() {
            if block["type"] == "tool_result" {
                let content = block["content"].as_str().unwrap_or_default().to_owned();
                out.push((content, block["is_error"] == true));
            }
        }
    }
    out
}

fn lazy_script() -> Vec<Step> {
    vec![
        tool(
            "todo",
            json!({"items": [
                {"id": "1", "text": "Write out.txt", "status": "in_progress",
                 "check": "grep -q hello out.txt"},
                {"id": "2", "text": "Report", "status": "pending"}
            ]}),
        ),
        tool("todo", json!({"update": [{"id": "1", "status": "completed"}]})),
        tool("write_file", json!({"path": "out.txt", "content": "hello\n"})),
        tool("todo", json!({"update": [{"id": "1", "status": "completed"}]})),
        text("Done."),
    ]
}

#[tokio::test(flavor = "multi_thread")]
async fn a_claim_before_the_work_is_refused_and_the_honest_one_passes_on_both_wires() {
    for openai in [false, true] {
        let server = FakeLlm::start(lazy_script(), Duration::ZERO).await;
        let work = tempfile::tempdir().unwrap();
        let output = run(&server, work.path(), openai, &["--output-format", "json"]);
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        let results = results(&server.bodies().await);
        let (early, refused) = &results[1];
        assert!(*refused, "{results:?}");
        assert!(
            early.contains("Item 1: its check failed (exit 2): grep -q hello out.txt"),
            "{early}"
        );
        let (honest, failed) = &results[3];
        assert!(!failed, "{results:?}");
        assert!(honest.contains("[x] #1: Write out.txt  (check passed)"), "{honest}");
        assert!(honest.contains("(1/2 completed)"), "{honest}");
        let events = json_lines(&output);
        let ends: Vec<&Value> =
            events.iter().filter(|event| event["type"] == "check_end").collect();
        assert_eq!(ends.len(), 2, "{events:?}");
        assert_eq!(
            (ends[0]["passed"].clone(), ends[0]["exit_code"].clone()),
            (json!(false), json!(2))
        );
        assert_eq!(
            (ends[1]["passed"].clone(), ends[1]["exit_code"].clone()),
            (json!(true), json!(0))
        );
        assert_eq!(ends[1]["item"], "1");
        assert_eq!(events.iter().filter(|event| event["type"] == "check_start").count(), 2);
    }
}
