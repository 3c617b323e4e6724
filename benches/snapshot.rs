#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The cost of building and sending one `Snapshot` as the history grows. Sharing the history
//! (an `imbl` vector) should make 100,000 messages cost what 10 do. The agent builds each
//! snapshot by cloning the one it keeps (see `agent::state`), so the clone and the channel are
//! what is measured.

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use keel::agent::Snapshot;
use keel::message::{ContentBlock, Message};
use serde_json::json;
use std::hint::black_box;
use tokio::sync::mpsc;

fn snapshot_with(messages: usize) -> Snapshot {
    let mut state = Snapshot { system_prompt: "system".into(), ..Snapshot::default() };
    for index in 0..messages {
        let message = if index % 2 == 0 {
            Message::user_text(format!("message {index}: please do the next step"))
        } else {
            Message::assistant(vec![
                ContentBlock::Text { text: format!("Working on step {index}.") },
                ContentBlock::ToolUse {
                    id: format!("t{index}"),
                    name: "bash".into(),
                    input: json!({"command": "ls"}),
                },
            ])
        };
        state.history.push_back(message);
    }
    state
}

fn snapshot_cost(c: &mut Criterion) {
    let mut group = c.benchmark_group("snapshot_build_and_send");
    for messages in [10, 1_000, 100_000] {
        let mut state = snapshot_with(messages);
        let (snapshots, mut snapshot_rx) = mpsc::unbounded_channel();
        group.bench_with_input(BenchmarkId::from_parameter(messages), &messages, |b, _| {
            b.iter(|| {
                state.seq += 1;
                snapshots.send(state.clone()).unwrap();
                black_box(snapshot_rx.try_recv().unwrap());
            });
        });
    }
    group.finish();
}

criterion_group!(benches, snapshot_cost);
criterion_main!(benches);
