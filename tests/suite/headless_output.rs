//! `keel -p`'s printer holds stdout and stderr only while it prints an event, never while it
//! waits for the next one: a write from another thread (a tool's blocking job, or a panic message
//! from one) goes through at once instead of hanging the run.

use keel::agent::{self, AgentConfig, ApprovalMode, Command};
use keel::headless::{self, OutputFormat};
use keel::llm::Provider;
use keel::llm::scripted::ScriptedProvider;
use keel::runtime::Workspace;
use keel::tools::Tools;
use serde_json::json;
use std::io::Write;
use std::time::Duration;

/// Far longer than a write takes; reached only when the write waits for the run to end.
const HANG_GUARD: Duration = Duration::from_secs(10);

#[tokio::test(flavor = "multi_thread")]
async fn another_thread_can_write_while_the_run_waits() {
    let dir = tempfile::tempdir().unwrap();
    keel::runtime::supervisor::set_program(crate::support::bin::program());
    // The run waits for an approval no one gives until the writes are through.
    let script = json!({
        "prompt": "go",
        "finished": "finished",
        "steps": [{"text": "", "tools": [{"name": "bash", "input": {"command": "true"}}]}],
    });
    let provider = ScriptedProvider::from_json(&script.to_string(), Duration::ZERO).unwrap();
    let config = AgentConfig { approval: ApprovalMode::Ask, ..AgentConfig::default() };
    let tools = Tools::new(Workspace::new(dir.path()).unwrap());
    let handle = agent::spawn(config, Some(Provider::Scripted(provider)), tools);
    let commands = handle.commands.clone();
    let printing = headless::Printing { format: OutputFormat::Text, ..Default::default() };
    let run = headless::run(handle, Command::Submit("go".into()), printing);

    let (wrote, written) = tokio::sync::oneshot::channel();
    std::thread::spawn(move || {
        // The real handles, not the test harness's captured output.
        let out = std::io::stdout().write_all(b"").and_then(|()| std::io::stdout().flush());
        let err = std::io::stderr().write_all(b"another thread writes\n");
        let _ = wrote.send(out.and(err).is_ok());
    });
    let other_thread = async {
        let wrote = tokio::time::timeout(HANG_GUARD, written).await;
        // Ends the run either way, so that a failure is reported rather than hung on.
        commands.send(Command::Cancel).unwrap();
        wrote
    };
    let (result, wrote) = tokio::join!(tokio::time::timeout(HANG_GUARD, run), other_thread);
    let wrote = wrote.expect(
        "a write from another thread waited for the whole -p run: the printer holds the lock",
    );
    assert!(wrote.unwrap(), "the write itself failed");
    assert!(result.expect("the run did not end").is_ok());
}
