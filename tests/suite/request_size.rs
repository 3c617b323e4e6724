//! What keel sends, measured: the first request of the five-round task stays small (tools and
//! system prompt together), and on OpenAI-compatible servers, which cache by prefix, every
//! request begins with the bytes of the one before it (on Anthropic too, but for the moving
//! cache breakpoints).

use crate::support::{bin, llm};
use bin::{keel, output_within, text};
use llm::FakeLlm;
use serde_json::Value;
use std::time::Duration;

/// The most bytes the first request of the five-round task may take, over either protocol: the
/// system prompt (the board's paragraph whole) and eight tools' specs — 4.1 KB of it on
/// OpenAI-compatible servers, whose wrapper around each spec adds 232 bytes that Anthropic's
/// specs do not have, and 174 bytes of it saying what an item's check is (the `todo` schema's
/// field and sentence, the paragraph's sentence) — then the person's prompt and the request's
/// own fields.
const FIRST_REQUEST_MAX: usize = 4 * 1024 + 256;

/// The most bytes the five requests of the task may take together, over either protocol: the
/// first request's bytes five times, for every request carries them again, and the history the
/// rounds add (the model's calls, the board's echo, a file read, a write, a command's output).
const FIVE_REQUESTS_MAX: usize = 25 * 1024;

/// Runs the five-round task headless over `provider`; returns the request bodies as sent.
async fn five_rounds(provider: &str) -> Vec<Vec<u8>> {
    let server = FakeLlm::start(llm::five_round_task(), Duration::ZERO).await;
    let (home, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    std::fs::write(work.path().join("notes.txt"), "hello\n").unwrap();
    let mut command = keel(home.path());
    command.args(["-p", "Make notes.txt say hello, world.", "--workdir"]).arg(work.path());
    match provider {
        "anthropic" => command
            .env("ANTHROPIC_API_KEY", "test-key")
            .env("ANTHROPIC_BASE_URL", server.anthropic_base()),
        _ => command.env("OPENAI_API_KEY", "test-key").env("OPENAI_BASE_URL", server.openai_base()),
    };
    let output = output_within(&mut command, "the five-round task");
    assert!(output.status.success(), "{}", text(&output.stderr));
    let bodies = server.raw_bodies().await;
    assert_eq!(bodies.len(), 5, "five requests");
    bodies
}

fn json_len(value: &Value) -> usize {
    serde_json::to_vec(value).unwrap().len()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_first_request_of_the_five_round_task_is_small() {
    for provider in ["anthropic", "openai"] {
        let bodies = five_rounds(provider).await;
        let first: Value = serde_json::from_slice(&bodies[0]).unwrap();
        let sizes: Vec<usize> = bodies.iter().map(Vec::len).collect();
        let tools: Vec<String> = first["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|tool| {
                let name = tool["name"].as_str().or(tool["function"]["name"].as_str());
                format!("{} {}", name.unwrap_or("?"), json_len(tool))
            })
            .collect();
        eprintln!("{provider}: tools {}", tools.join(", "));
        // Anthropic's system prompt is a field of its own, OpenAI's the first message.
        let system = first.get("system").unwrap_or(&first["messages"][0]["content"]);
        eprintln!(
            "{provider}: requests {sizes:?}, {} in all; tools {} bytes, system {} bytes",
            sizes.iter().sum::<usize>(),
            json_len(&first["tools"]),
            json_len(system),
        );
        assert!(
            sizes[0] <= FIRST_REQUEST_MAX,
            "{provider}: the first request is {} bytes",
            sizes[0]
        );
        let all: usize = sizes.iter().sum();
        assert!(all <= FIVE_REQUESTS_MAX, "{provider}: the five requests are {all} bytes");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_lean_request_keeps_every_rule_the_model_needs() {
    let bodies = five_rounds("anthropic").await;
    let first: Value = serde_json::from_slice(&bodies[0]).unwrap();
    let system = first["system"].to_string();
    for rule in [
        "`todo`",
        "`in_progress`",
        "`completed`",
        "in order",
        "never repeat",
        "file tools",
        "grep and glob tools rather than grep, rg or find",
        "skip .gitignored and hidden files",
        "relative to the workspace root",
        "fix the cause",
        "how you checked",
    ] {
        assert!(system.contains(rule), "the system prompt lost {rule:?}: {system}");
    }
    let tool = |name: &str| {
        first["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|tool| tool["name"] == name)
            .unwrap()
            .to_string()
    };
    for (name, rule) in [
        ("bash", "workspace root"),
        ("bash", "non-interactive"),
        ("bash", "timeout"),
        ("bash", "600000"),
        ("bash", "$TMPDIR"),
        ("bash", "no network"),
        ("bash", "unless the person allows more"),
        ("read_file", "numbered"),
        ("read_file", "8 MiB"),
        ("edit_file", "exactly once"),
        ("edit_file", "copied exactly as read"),
        ("write_file", "parent folders"),
        ("grep", "newest files first"),
        ("grep", "offset pages on"),
        ("glob", "any depth"),
        ("todo", "whole list"),
        ("todo", "beside a step's call"),
        ("task", "clean context"),
        ("task", "large output"),
        ("task", "one at a time"),
        ("task", "read-only"),
    ] {
        assert!(tool(name).contains(rule), "{name} lost {rule:?}");
    }
}

/// `body` less the bytes that close its `messages` array and the body: `]}`.
fn open_end(body: &[u8]) -> &[u8] {
    body.strip_suffix(b"]}").expect("the history is the body's last field")
}

#[tokio::test(flavor = "multi_thread")]
async fn every_openai_request_begins_with_the_bytes_of_the_one_before() {
    let bodies = five_rounds("openai").await;
    for (round, pair) in bodies.windows(2).enumerate() {
        let (before, next) = (open_end(&pair[0]), &pair[1]);
        assert!(
            next.starts_with(before),
            "request {} changed the bytes of request {} at byte {}",
            round + 2,
            round + 1,
            before.iter().zip(next.iter()).position(|(a, b)| a != b).unwrap_or(before.len())
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn on_anthropic_only_the_cache_breakpoints_move() {
    const MARK: &str = r#","cache_control":{"type":"ephemeral"}"#;
    let bodies = five_rounds("anthropic").await;
    let unmarked: Vec<Vec<u8>> =
        bodies.iter().map(|body| text(body).replace(MARK, "").into_bytes()).collect();
    for pair in unmarked.windows(2) {
        assert!(pair[1].starts_with(open_end(&pair[0])), "{}", text(&pair[1]));
    }
}
