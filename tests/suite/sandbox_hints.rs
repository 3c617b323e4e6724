//! The model is told its sandbox, over both wire protocols: the `bash` tool's description says
//! what commands may do, and a command whose output shows a failed network lookup (in a sandbox with
//! no network) or a write refused by a read-only file system gets a line after its output naming
//! the setting the person can change. `-p` shows the same on the tool's line, and a command that
//! exited 0 is not reported as a plain success. Real `bwrap`, real commands; the workspace lives
//! outside `/tmp`.

use crate::support::files::outside_tmp;
use crate::support::{bin, llm};
use llm::{FakeLlm, text, tool};
use serde_json::{Value, json};

/// What the `bash` tool's description says of the sandbox.
const SANDBOX_SENTENCE: &str = "writing only in the workspace and $TMPDIR, with no network, \
                                unless the person allows more";

/// A lookup that fails without a network (git is one of the programs the tests need), and a
/// command that exits 0 all the same.
const LOOKUP: &str = "timeout 5 git ls-remote https://example.com/keel.git || true";
/// A write outside the workspace.
const OUTSIDE_WRITE: &str = "touch /usr/keel-hint-probe";

#[derive(Clone, Copy)]
enum Protocol {
    Anthropic,
    OpenAi,
}

/// Runs `keel -p` over `protocol` with `args`, the model running the two commands; returns the
/// request bodies and stderr.
fn run(protocol: Protocol, args: &[&str]) -> (Vec<Value>, String) {
    let (home, work) = (outside_tmp(), outside_tmp());
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let steps = vec![
        tool("bash", json!({ "command": LOOKUP })),
        tool("bash", json!({ "command": OUTSIDE_WRITE })),
        text("Done."),
    ];
    let server = runtime.block_on(FakeLlm::start(steps, std::time::Duration::ZERO));
    let mut command = bin::keel(home.path());
    command.args(["-p", "go", "--approval", "auto", "--workdir"]).arg(work.path()).args(args);
    match protocol {
        Protocol::Anthropic => command
            .env("ANTHROPIC_API_KEY", "sk-test")
            .env("ANTHROPIC_BASE_URL", server.anthropic_base()),
        Protocol::OpenAi => {
            command.env("OPENAI_API_KEY", "sk-test").env("OPENAI_BASE_URL", server.openai_base())
        }
    };
    let output = bin::output_within(&mut command, "keel -p");
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    (runtime.block_on(server.bodies()), stderr)
}

/// The text of every tool result in the last request, in order, whatever the protocol.
fn results(bodies: &[Value]) -> Vec<String> {
    let messages = bodies.last().unwrap()["messages"].as_array().unwrap();
    let mut found = Vec::new();
    for message in messages {
        if message["role"] == "tool" {
            found.push(message["content"].as_str().unwrap_or_default().to_owned());
        }
        for block in message["content"].as_array().into_iter().flatten() {
            if block["type"] == "tool_result" {
                found.push(block["content"].as_str().unwrap_or_default().to_owned());
            }
        }
    }
    found
}

fn check_protocol(protocol: Protocol) {
    let (bodies, stderr) = run(protocol, &[]);
    let first = bodies[0].to_string();
    let sentence = serde_json::to_string(SANDBOX_SENTENCE).unwrap();
    assert!(first.contains(sentence.trim_matches('"')), "the bash tool's description: {first}");

    let results = results(&bodies);
    assert_eq!(results.len(), 2, "{results:?}");
    let lookup = &results[0];
    assert!(lookup.starts_with("Exit code 0"), "{lookup}");
    assert!(lookup.contains("[keel: the sandbox has no network"), "{lookup}");
    assert!(lookup.contains("`--network`") && lookup.contains("`network = true`"), "{lookup}");
    let write = &results[1];
    assert!(write.contains("Read-only file system"), "{write}");
    assert!(write.contains("[keel: the sandbox let this command write only in the workspace"));
    assert!(write.contains("`writable_roots`") && write.contains("`--sandbox off`"), "{write}");

    // The person reads the same on the tool's line: no plain ✓ for the lookup that failed.
    assert!(stderr.contains("⚠ exit 0") && stderr.contains("no network"), "{stderr}");
    assert!(stderr.contains("read-only here"), "{stderr}");
    assert!(!std::path::Path::new("/usr/keel-hint-probe").exists());
}

#[test]
fn over_anthropic_the_model_is_told_its_sandbox_and_why_a_command_failed() {
    check_protocol(Protocol::Anthropic);
}

#[test]
fn over_openai_the_model_is_told_its_sandbox_and_why_a_command_failed() {
    check_protocol(Protocol::OpenAi);
}

#[test]
fn with_the_network_on_a_failed_lookup_is_not_blamed_on_the_sandbox() {
    let (bodies, stderr) = run(Protocol::Anthropic, &["--network"]);
    let results = results(&bodies);
    assert!(!results[0].contains("[keel: "), "{}", results[0]);
    assert!(!stderr.contains("no network"), "{stderr}");
    // The write is still refused by the sandbox, and explained.
    assert!(results[1].contains("`writable_roots`"), "{}", results[1]);
}
