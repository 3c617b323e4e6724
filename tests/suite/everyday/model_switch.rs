//! `/model`: the next request goes to the model named — over the same provider, or over the
//! other one where its key was set — with that model's context window, and the status bar's
//! snapshot names it; a provider with no key is refused, saying which variable to set.

use crate::support::agent::{WAIT, Wire, provider, until_result};
use crate::support::llm::{FakeLlm, text};
use keel::agent::{self, AgentConfig, AgentEvent, AgentHandle, Command, Sessions, Snapshot};
use keel::llm::retry::RetryPolicy;
use keel::llm::{HttpSettings, Routes, WireFormat};
use keel::runtime::Workspace;
use keel::tools::Tools;
use std::time::Duration;

/// What the agent says or refuses after a `/model`.
async fn switch(handle: &mut AgentHandle, spec: &str) -> AgentEvent {
    handle.commands.send(Command::SwitchModel(spec.into())).unwrap();
    tokio::time::timeout(WAIT, async {
        loop {
            let event = handle.events.recv().await.unwrap();
            if matches!(event, AgentEvent::Notice { .. } | AgentEvent::Error { .. }) {
                return event;
            }
        }
    })
    .await
    .unwrap()
}

async fn snapshot_where(handle: &mut AgentHandle, check: impl Fn(&Snapshot) -> bool) -> Snapshot {
    crate::support::agent::wait_for(handle, check).await
}

fn openai_route(server: &FakeLlm) -> Routes {
    let settings = HttpSettings {
        base_url: server.openai_base(),
        api_key: "k".into(),
        model: String::new(),
        connect_timeout: Duration::from_secs(5),
        idle_timeout: Duration::from_secs(30),
        stall_timeout: Duration::from_secs(30),
        retry: RetryPolicy::default(),
    };
    Routes::new(keel::config::default_window).with(WireFormat::OpenAi, settings)
}

#[tokio::test(flavor = "multi_thread")]
async fn the_next_request_goes_to_the_model_named_with_its_window() {
    let server =
        FakeLlm::start(vec![text("one"), text("two"), text("three")], Duration::ZERO).await;
    let dir = tempfile::tempdir().unwrap();
    keel::runtime::supervisor::set_program(crate::support::bin::program());
    let config = AgentConfig { routes: openai_route(&server), ..AgentConfig::default() };
    let tools = Tools::new(Workspace::new(dir.path()).unwrap());
    let mut handle = agent::spawn_with_session(
        config,
        Some(provider(&server, Wire::Anthropic)),
        tools,
        Sessions::Off,
    );

    let AgentEvent::Notice { text } = switch(&mut handle, "claude-opus-4-1").await else {
        panic!("switched")
    };
    assert_eq!(
        text,
        "Model: claude-opus-4-1 (anthropic) from the next request on; context window 200,000 tokens."
    );
    let shown = snapshot_where(&mut handle, |s| &*s.model == "claude-opus-4-1").await;
    assert_eq!((&*shown.provider, shown.context.window), ("anthropic", 200_000));
    handle.commands.send(Command::Submit("hi".into())).unwrap();
    until_result(&mut handle).await;

    let AgentEvent::Notice { text } = switch(&mut handle, "openai gpt-4o").await else {
        panic!("switched to the other provider")
    };
    assert!(text.starts_with("Model: gpt-4o (openai)") && text.contains("128,000"), "{text}");
    let shown = snapshot_where(&mut handle, |s| &*s.model == "gpt-4o").await;
    assert_eq!((&*shown.provider, shown.wire_format), ("openai", WireFormat::OpenAi));
    handle.commands.send(Command::Submit("and now?".into())).unwrap();
    until_result(&mut handle).await;

    let requests = server.server.received_requests().await.unwrap();
    let sent: Vec<(String, String)> = requests
        .iter()
        .map(|request| {
            let body: serde_json::Value = serde_json::from_slice(&request.body).unwrap();
            (request.url.path().to_owned(), body["model"].as_str().unwrap().to_owned())
        })
        .collect();
    assert_eq!(
        sent,
        vec![
            ("/v1/messages".to_owned(), "claude-opus-4-1".to_owned()),
            ("/v1/chat/completions".to_owned(), "gpt-4o".to_owned()),
        ],
        "the conversation went on across the switch"
    );
    handle.commands.send(Command::Quit).unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_provider_without_a_key_is_refused_and_model_alone_says_what_is_in_use() {
    let server = FakeLlm::start(vec![text("one")], Duration::ZERO).await;
    let dir = tempfile::tempdir().unwrap();
    let mut handle = crate::support::agent::start(
        &server,
        Wire::Anthropic,
        dir.path(),
        AgentConfig::default(),
        Sessions::Off,
    );
    let AgentEvent::Error { text } = switch(&mut handle, "openai gpt-4o").await else {
        panic!("refused")
    };
    assert!(text.contains("OPENAI_API_KEY was not set when keel started"), "{text}");
    let AgentEvent::Error { text } = switch(&mut handle, "mistral large").await else {
        panic!("refused")
    };
    assert!(text.contains("mistral is not a provider keel knows"), "{text}");
    let AgentEvent::Notice { text } = switch(&mut handle, "").await else { panic!("told") };
    assert!(text.starts_with("Model: fake (anthropic), context window 128,000 tokens."), "{text}");
    assert!(text.contains("keys set: anthropic"), "{text}");
    handle.commands.send(Command::Quit).unwrap();
}
