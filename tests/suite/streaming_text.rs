//! A streamed answer costs keel work in proportion to each delta, not to the answer so far: a
//! real agent reads an answer of many deltas from a loopback server, and every snapshot it sends
//! shares the text before the newest delta with the snapshots before it — the first delta stays
//! at one address from the first snapshot to the last — instead of carrying a fresh copy of the
//! whole answer (which made a 1 MB answer in 16-byte deltas take 27 times as long as 256 KB).

use crate::support::wire;
use keel::agent::{self, AgentConfig, AgentEvent, Command, Snapshot};
use keel::llm::Provider;
use keel::llm::anthropic::AnthropicClient;
use keel::runtime::Workspace;
use keel::tools::Tools;
use serde_json::json;
use std::time::Duration;
use wire::{RawServer, Reply, anthropic_sse};

const HANG_GUARD: Duration = Duration::from_secs(30);
/// Deltas in the answer.
const DELTAS: usize = 60;

/// One answer of `DELTAS` text deltas, `word N ` each.
fn many_deltas() -> (String, String) {
    let words: Vec<String> = (0..DELTAS).map(|n| format!("word {n} ")).collect();
    let mut events = vec![
        json!({"type":"message_start","message":{"usage":{"input_tokens":3,"output_tokens":1}}}),
        json!({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}),
    ];
    events.extend(words.iter().map(|word| {
        json!({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":word}})
    }));
    events.extend([
        json!({"type":"content_block_stop","index":0}),
        json!({"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":5}}),
        json!({"type":"message_stop"}),
    ]);
    (anthropic_sse(&events), words.concat())
}

/// Every snapshot of one turn answered by `body`.
async fn snapshots_of(body: &str) -> Vec<Snapshot> {
    let server = RawServer::start(vec![Reply::sse(body)]).await;
    let dir = tempfile::tempdir().unwrap();
    let client = AnthropicClient::new(wire::settings(&server.base_url, 0)).unwrap();
    let tools = Tools::new(Workspace::new(dir.path()).unwrap());
    let mut handle = agent::spawn(AgentConfig::default(), Some(Provider::Anthropic(client)), tools);
    handle.commands.send(Command::Submit("Say a lot.".into())).unwrap();
    let until_result = async {
        while let Some(event) = handle.events.recv().await {
            if matches!(event, AgentEvent::Result { .. }) {
                return;
            }
        }
        panic!("the agent stopped before the turn ended");
    };
    tokio::time::timeout(HANG_GUARD, until_result).await.expect("the turn never ended");
    handle.commands.send(Command::Quit).unwrap();
    tokio::time::timeout(HANG_GUARD, &mut handle.task).await.expect("no stop").unwrap();
    std::iter::from_fn(|| handle.snapshots.try_recv().ok()).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn each_delta_is_appended_and_the_text_before_it_shared_not_copied() {
    let (body, answer) = many_deltas();
    let snapshots = snapshots_of(&body).await;
    let streaming: Vec<_> =
        snapshots.iter().filter_map(|snapshot| snapshot.streaming.as_ref()).collect();
    assert_eq!(streaming.len(), DELTAS, "one snapshot per delta, each showing it");
    let first_piece = |index: usize| streaming[index].pieces_from(0).next().unwrap().as_ptr();
    for (index, text) in streaming.iter().enumerate() {
        assert_eq!(text.piece_count(), index + 1, "the delta is appended as a piece of its own");
        assert_eq!(first_piece(index), first_piece(0), "snapshot {index} copied the text");
        assert!(answer.starts_with(&text.to_string()), "snapshot {index}: {text}");
        assert_eq!(text.answer(), streaming[0].answer(), "one answer throughout");
    }
    assert_eq!(streaming[DELTAS - 1].to_string(), answer);
    let last = snapshots.last().unwrap();
    assert!(last.streaming.is_none(), "the finished answer is in the history, not streaming");
    assert_eq!(last.history.last().unwrap().text(), answer);
}
