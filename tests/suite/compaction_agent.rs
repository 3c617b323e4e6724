//! Compaction inside the agent, against the loopback server over both protocols: a summary
//! request that fails (500 after the retries) leaves keel with masking and the board rather than
//! dead; `/compact` summarises on demand; the inspector's history is exactly the `messages` of
//! the request sent; the status bar's share of the window follows the estimate.

use crate::support::{llm, wire};
use keel::agent::{self, Activity, AgentConfig, AgentEvent, AgentHandle, Command, Entry, Snapshot};
use keel::llm::anthropic::AnthropicClient;
use keel::llm::openai::OpenAiClient;
use keel::llm::{Provider, WireFormat};
use keel::message::ContentBlock;
use keel::runtime::Workspace;
use keel::tools::Tools;
use llm::FakeLlm;
use llm::window::{self, Switches, TooLong};
use serde_json::Value;
use std::time::Duration;

const WINDOW: u32 = 24_000;
const PROMPT: &str = "Work through the steps on the board.";
/// Far past any run here on a loaded machine.
const WAIT: Duration = Duration::from_secs(60);

struct Run {
    handle: AgentHandle,
    work: tempfile::TempDir,
}

fn provider(server: &FakeLlm, format: WireFormat) -> Provider {
    match format {
        WireFormat::Anthropic => Provider::Anthropic(
            AnthropicClient::new(wire::settings(&server.anthropic_base(), 2)).unwrap(),
        ),
        WireFormat::OpenAi => {
            Provider::OpenAi(OpenAiClient::new(wire::settings(&server.openai_base(), 2)).unwrap())
        }
    }
}

fn start(server: &FakeLlm, format: WireFormat, output_bytes: usize) -> Run {
    start_with(server, format, output_bytes, AgentConfig::default().max_rounds)
}

fn start_with(server: &FakeLlm, format: WireFormat, output_bytes: usize, max_rounds: u32) -> Run {
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("big.txt"), window::big_file(output_bytes)).unwrap();
    keel::runtime::supervisor::set_program(crate::support::bin::program());
    let config = AgentConfig {
        system_prompt: "You are keel.".into(),
        context_window: WINDOW,
        context_window_assumed: false,
        max_rounds,
        ..AgentConfig::default()
    };
    let tools = Tools::new(Workspace::new(work.path()).unwrap());
    let handle = agent::spawn(config, Some(provider(server, format)), tools);
    Run { handle, work }
}

impl Run {
    /// Events until one that `done` accepts, that one included.
    async fn until(&mut self, done: impl Fn(&AgentEvent) -> bool) -> Vec<AgentEvent> {
        let mut events = Vec::new();
        loop {
            let event = tokio::time::timeout(WAIT, self.handle.events.recv())
                .await
                .expect("the agent did not get there in time")
                .expect("the agent stopped");
            let last = done(&event);
            events.push(event);
            if last {
                return events;
            }
        }
    }

    async fn turn(&mut self, prompt: &str) -> Vec<AgentEvent> {
        self.handle.commands.send(Command::Submit(prompt.into())).unwrap();
        self.until(|event| matches!(event, AgentEvent::Result { .. })).await
    }

    /// The first snapshot from now on that `check` accepts.
    async fn wait_for(&mut self, check: impl Fn(&Snapshot) -> bool) -> Snapshot {
        crate::support::agent::wait_for(&mut self.handle, check).await
    }

    /// The snapshot the agent sends once it is idle again with `last` as its newest line.
    async fn idle_after(&mut self, last: fn(&Entry) -> bool) -> Snapshot {
        self.wait_for(|snapshot| {
            snapshot.activity == Activity::Idle && snapshot.transcript.last().is_some_and(last)
        })
        .await
    }
}

fn outcome(events: &[AgentEvent]) -> String {
    match events.last() {
        Some(AgentEvent::Result { outcome, error, done, total, .. }) => {
            format!("{outcome:?} {done}/{total} {}", error.clone().unwrap_or_default())
        }
        other => panic!("no result: {other:?}"),
    }
}

fn parse(body: &[u8]) -> Value {
    serde_json::from_slice(body).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failing_summary_falls_back_to_masking_and_the_board() {
    for format in [WireFormat::Anthropic, WireFormat::OpenAi] {
        let words =
            if format == WireFormat::Anthropic { TooLong::Anthropic } else { TooLong::OpenAi };
        let switches =
            Switches { failing_summaries: true, ..Switches::window(WINDOW as usize, words) };
        let server = FakeLlm::start_with(window::long_task(20, 1500), switches).await;
        let mut run = start(&server, format, 12_000);
        let events = run.turn(PROMPT).await;
        assert_eq!(outcome(&events), "Success 20/20 ", "{format:?}");
        let log = std::fs::read_to_string(run.work.path().join("progress.log")).unwrap();
        assert_eq!(log, (1..=20).map(|k| format!("step {k}\n")).collect::<String>(), "{format:?}");
        let fallbacks: Vec<&AgentEvent> = events
            .iter()
            .filter(|event| matches!(event, AgentEvent::Compaction { summary_error: Some(_), .. }))
            .collect();
        assert!(!fallbacks.is_empty(), "{format:?}: the summary was asked for, and failed");
        let AgentEvent::Compaction { summary_error: Some(why), .. } = fallbacks[0] else {
            unreachable!()
        };
        assert!(why.contains("500") && why.contains("summaries are down"), "{why}");
        let retries =
            events.iter().filter(|event| matches!(event, AgentEvent::Retry { .. })).count();
        assert!(retries >= 2, "{format:?}: the summary request was retried first");
        // What the model got in place of the summary: what ran, and the board.
        let bodies = server.raw_bodies().await;
        let after = bodies
            .iter()
            .position(|body| String::from_utf8_lossy(body).contains("could not get a summary"))
            .expect("the fallback reached the model");
        for body in &bodies[after..] {
            if window::is_summary_request(&parse(body)) {
                continue;
            }
            let text = String::from_utf8_lossy(body);
            assert!(text.contains(PROMPT) && text.contains("completed)"), "{format:?}");
            assert!(body.len() <= WINDOW as usize * window::BYTES_PER_TOKEN);
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn compact_on_demand_summarises_and_the_inspector_shows_what_is_sent() {
    for format in [WireFormat::Anthropic, WireFormat::OpenAi] {
        let words =
            if format == WireFormat::Anthropic { TooLong::Anthropic } else { TooLong::OpenAi };
        let server = FakeLlm::start_with(
            window::long_task(3, 200),
            Switches::window(WINDOW as usize, words),
        )
        .await;
        // Four responses a turn: the first turn stops half way, on a round of tool calls.
        let mut run = start_with(&server, format, 2_000, 4);
        assert_eq!(
            outcome(&run.turn(PROMPT).await),
            "MaxRounds 1/3 Stopped after 4 model responses in this turn (the limit set by --max-rounds or max_rounds). Send a message to let it go on.",
            "{format:?}"
        );
        let before = run.idle_after(|entry| matches!(entry, Entry::Error { .. })).await;
        assert!(before.context.percent().is_some_and(|percent| percent > 0), "ctx is shown");
        run.handle.commands.send(Command::Compact).unwrap();
        let events = run.until(|event| matches!(event, AgentEvent::Compaction { .. })).await;
        let Some(AgentEvent::Compaction {
            trigger, summarised, tokens_before, tokens_after, ..
        }) = events.last()
        else {
            unreachable!()
        };
        assert_eq!(trigger.as_str(), "request");
        assert!(*summarised > 0 && tokens_after < tokens_before, "{format:?}: {events:?}");
        let after = run.idle_after(|entry| matches!(entry, Entry::Notice { .. })).await;
        // The model's view: the request, keel's note with the summary and the board, the newest round.
        assert_eq!(after.history[0].text(), PROMPT);
        let note = after.history.iter().find_map(|message| {
            message.content.iter().find_map(|block| match block {
                ContentBlock::Note { text } => Some(text.clone()),
                _ => None,
            })
        });
        let note = note.expect("keel's note");
        assert!(note.contains(window::SUMMARY) && note.contains("(1/3 completed)"), "{note}");
        assert_eq!(after.history.len(), 4, "the request, the note, the newest round");
        assert_eq!(&after.history[2], &before.history[before.history.len() - 2]);
        // The person's view keeps everything, with a line where the model's was compacted.
        assert_eq!(after.transcript.len(), before.transcript.len() + 1);
        assert!(
            matches!(after.transcript.last(), Some(Entry::Notice { text }) if text.contains("Compacted"))
        );
        // The work goes on from the newest round, and what is sent is what the inspector shows.
        run.handle.commands.send(Command::Continue).unwrap();
        let events = run.until(|event| matches!(event, AgentEvent::Result { .. })).await;
        assert_eq!(outcome(&events), "Success 3/3 ", "{format:?}");
        let sent = server.raw_bodies().await.pop().unwrap();
        let now = run.idle_after(|entry| matches!(entry, Entry::Assistant { .. })).await;
        let shown = now.history.take(now.history.len() - 1);
        wire::assert_inspector_matches_body(format, "You are keel.", &shown, &sent);
        let log = std::fs::read_to_string(run.work.path().join("progress.log")).unwrap();
        assert_eq!(log, "step 1\nstep 2\nstep 3\n", "{format:?}: no step twice");
    }
}
