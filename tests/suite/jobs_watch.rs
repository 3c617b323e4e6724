//! While a background job a command left runs on after its turn, keel keeps looking at what it
//! may leave in the workspace's repositories: a `.git/commondir` or a `sub/.git` the job writes
//! while the agent sits idle is put right as the job ends, or within seconds while it runs on,
//! and the person told.

use crate::support::agent::{Wire, provider, until_result};
use crate::support::files::outside_tmp;
use crate::support::llm::{FakeLlm, text, tool};
use keel::agent::{self, AgentConfig, AgentEvent, ApprovalMode, Command, Sessions};
use keel::runtime::Workspace;
use keel::runtime::sandbox::{Availability, Mode, Policy, Sandbox};
use keel::tools::Tools;
use serde_json::json;
use std::time::Duration;

/// How long the agent may take to find what the job left: its look every 3 s, and slack.
const FOUND_WITHIN: Duration = Duration::from_secs(15);

/// Runs a turn whose command leaves `job` running in the background, in a repository, then
/// waits while the agent is idle for it to tell of the `.git/commondir` and `later/.git` the job
/// makes a second later.
async fn job_left_while_idle(job: &str) {
    let work = outside_tmp();
    let w = work.path();
    let init = std::process::Command::new("git").args(["init", "-q"]).current_dir(w).status();
    assert!(init.unwrap().success());
    let plant = "sleep 1; echo ../elsewhere > .git/commondir; mkdir -p later; git -C later init -q";
    let job = format!("({plant}; {job}) > /dev/null 2>&1 & echo started");
    let steps = vec![tool("bash", json!({ "command": job })), text("Started.")];
    let server = FakeLlm::start(steps, Duration::ZERO).await;
    keel::runtime::supervisor::set_program(crate::support::bin::program());
    let sandbox = Sandbox::probe(Policy { mode: Mode::Workspace, ..Policy::default() }, None);
    assert!(matches!(sandbox.availability, Availability::Ready { .. }), "needs bwrap");
    let tools = Tools::new(Workspace::new(w).unwrap()).with_sandbox(sandbox);
    let config = AgentConfig { approval: ApprovalMode::Auto, ..AgentConfig::default() };
    let provider = Some(provider(&server, Wire::Anthropic));
    let mut handle = agent::spawn_with_session(config, provider, tools, Sessions::Off);
    handle.commands.send(Command::Submit("Start it.".into())).unwrap();
    until_result(&mut handle).await;
    // The turn is over, the job still asleep: nothing of it is there yet.
    assert!(!w.join(".git/commondir").exists() && !w.join("later").exists());

    let mut told = Vec::new();
    let deadline = tokio::time::Instant::now() + FOUND_WITHIN;
    while told.len() < 2 {
        let event = tokio::time::timeout_at(deadline, handle.events.recv()).await;
        match event {
            Ok(Some(AgentEvent::Error { text })) => told.push(text),
            Ok(Some(_)) => {}
            Ok(None) | Err(_) => panic!("the agent did not look while idle: {told:?}"),
        }
    }
    assert!(told.iter().any(|text| text.contains("Removed .git/commondir")), "{told:?}");
    assert!(told.iter().any(|text| text.contains("Moved later/.git aside")), "{told:?}");
    assert!(!w.join(".git/commondir").exists());
    assert!(w.join("later/.git-quarantined").is_dir() && !w.join("later/.git").exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn what_a_job_leaves_before_it_ends_is_put_right_as_it_ends() {
    job_left_while_idle("true").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn what_a_job_that_runs_on_leaves_is_put_right_within_seconds() {
    // Killed with its sandbox when the agent is dropped at the test's end.
    job_left_while_idle("sleep 60").await;
}
