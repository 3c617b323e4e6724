#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The cost of building and sending one `Snapshot` as the history grows. Sharing the history
//! (an `imbl` vector) should make 100,000 messages cost what 10 do.

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use keel::agent::state::{Outbox, State};
use keel::llm::WireFormat;
use keel::message::{ContentBlock, Message};
use serde_json::json;
use std::hint::black_box;
use tokio::sync::mpsc;

fn state_with(messages: usize) -> State {
    let mut state = State::new("system", 3, "bench", "model", WireFormat::Anthropic);
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
        let mut state = state_with(messages);
        let (snapshots, mut snapshot_rx) = mpsc::unbounded_channel();
        let (events, _event_rx) = mpsc::unbounded_channel();
        let outbox = Outbox { snapshots, events };
        group.bench_with_input(BenchmarkId::from_parameter(messages), &messages, |b, _| {
            b.iter(|| {
                state.publish(&outbox);
                black_box(snapshot_rx.try_recv().unwrap());
            });
        });
    }
    group.finish();
}

criterion_group!(benches, snapshot_cost);
criterion_main!(benches);
