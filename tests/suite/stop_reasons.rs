//! Answers cut off at the output limit, on both protocols, with the real binary against a
//! loopback server: a cut tool call is not run and the model is told why in that call's result;
//! a cut text answer is continued, and one still cut after every continuation is no success.
//! The `usage` and `result` events carry the stop reason.

use crate::support::{bin, llm};
use bin::{json_lines, keel, last_result, output_within};
use llm::{FakeLlm, Step, text, tool};
use serde_json::{Value, json};
use std::path::Path;
use std::process::Output;
use std::time::Duration;

const PROVIDERS: [&str; 2] = ["anthropic", "openai"];

/// Runs `keel -p` with JSON output against `server` in `work`.
fn run(server: &FakeLlm, provider: &str, work: &Path) -> Output {
    let home = tempfile::tempdir().unwrap();
    let mut command = keel(home.path());
    command.args(["-p", "go", "--output-format", "json", "--workdir"]).arg(work);
    match provider {
        "anthropic" => command
            .env("ANTHROPIC_API_KEY", "test-key")
            .env("ANTHROPIC_BASE_URL", server.anthropic_base()),
        _ => command.env("OPENAI_API_KEY", "test-key").env("OPENAI_BASE_URL", server.openai_base()),
    };
    output_within(&mut command, "keel -p against the fake server")
}

/// The stop reasons of the `usage` events, in order.
fn stop_reasons(events: &[Value]) -> Vec<&str> {
    events
        .iter()
        .filter(|event| event["type"] == "usage")
        .filter_map(|event| event["stop_reason"].as_str())
        .collect()
}

/// The tool results of `body`'s last user turn, as (text, marked as an error).
fn last_results(provider: &str, body: &Value) -> Vec<(String, bool)> {
    let messages = body["messages"].as_array().unwrap();
    match provider {
        "anthropic" => messages.last().unwrap()["content"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|block| block["type"] == "tool_result")
            .map(|block| (block["content"].as_str().unwrap().to_owned(), block["is_error"] == true))
            .collect(),
        _ => messages
            .iter()
            .rev()
            .take_while(|message| message["role"] == "tool")
            .map(|message| {
                let content = message["content"].as_str().unwrap().to_owned();
                let failed = content.starts_with("Error: ");
                (content, failed)
            })
            .collect(),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cut_tool_call_is_not_run_and_the_model_is_told_to_send_it_again() {
    let big = "x".repeat(400);
    for provider in PROVIDERS {
        let script = vec![
            Step {
                text: "Writing both.".into(),
                tools: vec![
                    ("write_file".into(), json!({"path": "whole.txt", "content": "whole"})),
                    ("write_file".into(), json!({"path": "cut.txt", "content": big})),
                ],
                ..Step::default()
            }
            .cut(),
            tool("write_file", json!({"path": "cut.txt", "content": "short"})),
            text("Written."),
        ];
        let server = FakeLlm::start(script, Duration::ZERO).await;
        let work = tempfile::tempdir().unwrap();
        let output = run(&server, provider, work.path());
        assert!(output.status.success(), "{provider}: {}", bin::text(&output.stderr));
        let events = json_lines(&output);
        assert_eq!(stop_reasons(&events), ["max_tokens", "tool_use", "end_turn"], "{provider}");
        let bodies = server.bodies().await;
        assert_eq!(bodies.len(), 3, "{provider}");
        // The whole call before the cut one ran; the cut one did not, and its result says why.
        let results = last_results(provider, &bodies[1]);
        assert_eq!(results.len(), 2, "{provider}: every call answered: {results:?}");
        let cut = results.iter().find(|(text, _)| text.contains("cut off")).unwrap();
        assert!(cut.1, "{provider}: the cut call's result is an error");
        assert!(cut.0.contains("output limit") && cut.0.contains("Send it again"), "{cut:?}");
        assert!(!cut.0.contains("JSON"), "{provider}: not taken for invalid JSON: {cut:?}");
        let ends: Vec<&Value> = events.iter().filter(|e| e["type"] == "tool_end").collect();
        assert_eq!(ends.len(), 3, "{provider}");
        assert_eq!(ends[1]["is_error"], true, "{provider}");
        assert_eq!(std::fs::read_to_string(work.path().join("whole.txt")).unwrap(), "whole");
        // Written once, by the call sent again; the cut one never touched the file.
        assert_eq!(std::fs::read_to_string(work.path().join("cut.txt")).unwrap(), "short");
        let result = last_result(&events);
        assert_eq!(
            (result["outcome"].as_str(), result["stop_reason"].as_str()),
            (Some("success"), Some("end_turn"))
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cut_text_answer_is_continued_into_one_answer() {
    for provider in PROVIDERS {
        let script = vec![text("The first half, ").cut(), text("and the second half.")];
        let server = FakeLlm::start(script, Duration::ZERO).await;
        let work = tempfile::tempdir().unwrap();
        let output = run(&server, provider, work.path());
        assert!(output.status.success(), "{provider}: {}", bin::text(&output.stderr));
        let events = json_lines(&output);
        assert_eq!(stop_reasons(&events), ["max_tokens", "end_turn"], "{provider}");
        let result = last_result(&events);
        assert_eq!(result["text"], "The first half, and the second half.", "{provider}");
        assert_eq!(
            (result["outcome"].as_str(), result["rounds"].as_u64()),
            (Some("success"), Some(2))
        );
        // The second request ends with keel's note after the cut answer, which is kept.
        let bodies = server.bodies().await;
        let messages = bodies[1]["messages"].as_array().unwrap();
        let (cut, note) = (&messages[messages.len() - 2], &messages[messages.len() - 1]);
        assert_eq!(cut["role"], "assistant", "{provider}");
        assert!(cut.to_string().contains("The first half,"), "{provider}: {cut}");
        assert_eq!(note["role"], "user", "{provider}");
        assert!(note.to_string().contains("cut off at the output limit"), "{provider}: {note}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_answer_still_cut_after_every_continuation_is_not_a_success() {
    for provider in PROVIDERS {
        let script = (0..10).map(|_| text("more ").cut()).collect();
        let server = FakeLlm::start(script, Duration::ZERO).await;
        let work = tempfile::tempdir().unwrap();
        let output = run(&server, provider, work.path());
        assert_eq!(output.status.code(), Some(1), "{provider}: a cut answer fails the run");
        let events = json_lines(&output);
        let result = last_result(&events);
        assert_eq!(result["outcome"], "max_tokens", "{provider}");
        assert_eq!(result["stop_reason"], "max_tokens", "{provider}");
        assert!(result["error"].as_str().unwrap().contains("--max-tokens"), "{result}");
        // The first answer and three continuations: four requests, then keel stops asking.
        assert_eq!(server.bodies().await.len(), 4, "{provider}");
        assert_eq!(result["text"], "more more more more ", "{provider}");
    }
}
