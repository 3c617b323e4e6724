#![allow(clippy::unwrap_used, clippy::expect_used)]
//! How fast a streamed answer is read: SSE framing, event decoding and tool-call assembly over a
//! 10 MB recorded stream, for both wire protocols, delivered in chunks the size a socket hands
//! over. Reported as throughput (criterion's `Throughput::Bytes`).
//!
//! Then a long answer through the whole of `keel -p`, as a process: 256 KB and 1 MB of text in
//! 16-byte deltas, each delta shown as it comes. Linear time is the larger taking about four
//! times the smaller's; with `KEEL_BENCH_BASELINE=/path/to/an/older/keel` that binary is timed on
//! the same answers in the same run.

mod support;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use futures_util::stream;
use keel::llm::WireFormat;
use serde_json::{Value, json};
use std::convert::Infallible;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use support::fake_llm;
use support::loopback::Loopback;
use tokio::sync::mpsc;

/// The size of the recorded stream.
const STREAM_BYTES: usize = 10 << 20;
/// The size of the pieces the body arrives in, as a socket read returns them.
const CHUNK_BYTES: usize = 16 * 1024;
/// Bytes of a tool call's input in one `input_json_delta` / `arguments` fragment.
const FRAGMENT_BYTES: usize = 48;
/// A text delta: a few words, as models stream them.
const TEXT_DELTA: &str = "and a few more words ";

/// `body` in pieces of `size` bytes.
fn chunked(body: &str, size: usize) -> Vec<Vec<u8>> {
    body.as_bytes().chunks(size).map(<[u8]>::to_vec).collect()
}

fn event(body: &mut String, name: Option<&str>, data: &Value) {
    if let Some(name) = name {
        body.push_str("event: ");
        body.push_str(name);
        body.push('\n');
    }
    body.push_str("data: ");
    body.push_str(&data.to_string());
    body.push_str("\n\n");
}

/// A `write_file` call's input: a file of a few KB, so its JSON streams in many fragments.
fn tool_input(index: usize) -> String {
    let content: String =
        (0..60).map(|line| format!("fn step_{index}_{line}() -> u32 {{ {line} }}\n")).collect();
    json!({"path": format!("src/step_{index}.rs"), "content": content}).to_string()
}

/// A tool input's JSON in fragments of `FRAGMENT_BYTES` characters.
fn fragments(input: &str) -> Vec<String> {
    let chars: Vec<char> = input.chars().collect();
    chars.chunks(FRAGMENT_BYTES).map(|piece| piece.iter().collect()).collect()
}

/// An Anthropic Messages stream of about `STREAM_BYTES`: text blocks of many small deltas and
/// `tool_use` blocks streamed as `input_json_delta` fragments, with pings among them.
fn anthropic_recording() -> String {
    let mut body = String::new();
    event(
        &mut body,
        Some("message_start"),
        &json!({"type": "message_start", "message": {"id": "msg_1",
        "type": "message", "role": "assistant", "content": [], "model": "bench", "stop_reason": null,
        "usage": {"input_tokens": 100, "output_tokens": 1}}}),
    );
    let mut block = 0;
    while body.len() < STREAM_BYTES {
        event(
            &mut body,
            Some("content_block_start"),
            &json!({"type": "content_block_start",
            "index": block, "content_block": {"type": "text", "text": ""}}),
        );
        for _ in 0..200 {
            event(
                &mut body,
                Some("content_block_delta"),
                &json!({"type": "content_block_delta",
                "index": block, "delta": {"type": "text_delta", "text": TEXT_DELTA}}),
            );
        }
        event(&mut body, Some("ping"), &json!({"type": "ping"}));
        event(
            &mut body,
            Some("content_block_stop"),
            &json!({"type": "content_block_stop", "index": block}),
        );
        block += 1;
        event(
            &mut body,
            Some("content_block_start"),
            &json!({"type": "content_block_start",
            "index": block, "content_block": {"type": "tool_use", "id": format!("toolu_{block}"),
            "name": "write_file", "input": {}}}),
        );
        for fragment in fragments(&tool_input(block)) {
            event(
                &mut body,
                Some("content_block_delta"),
                &json!({"type": "content_block_delta",
                "index": block, "delta": {"type": "input_json_delta", "partial_json": fragment}}),
            );
        }
        event(
            &mut body,
            Some("content_block_stop"),
            &json!({"type": "content_block_stop", "index": block}),
        );
        block += 1;
    }
    event(
        &mut body,
        Some("message_delta"),
        &json!({"type": "message_delta",
        "delta": {"stop_reason": "tool_use", "stop_sequence": null}, "usage": {"output_tokens": 500_000}}),
    );
    event(&mut body, Some("message_stop"), &json!({"type": "message_stop"}));
    body
}

/// An OpenAI Chat Completions stream of about `STREAM_BYTES`: content deltas and `tool_calls`
/// fragments keyed by index, the id and name only in the first, then usage and `[DONE]`.
fn openai_recording() -> String {
    let chunk = |delta: Value, finish: Value| {
        json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "bench",
               "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    };
    let mut body = String::new();
    event(&mut body, None, &chunk(json!({"role": "assistant", "content": ""}), Value::Null));
    let mut call = 0;
    while body.len() < STREAM_BYTES {
        for _ in 0..200 {
            event(&mut body, None, &chunk(json!({"content": TEXT_DELTA}), Value::Null));
        }
        event(
            &mut body,
            None,
            &chunk(
                json!({"tool_calls": [{"index": call, "id": format!("call_{call}"),
            "type": "function", "function": {"name": "write_file", "arguments": ""}}]}),
                Value::Null,
            ),
        );
        for fragment in fragments(&tool_input(call)) {
            event(
                &mut body,
                None,
                &chunk(
                    json!({"tool_calls": [{"index": call,
                "function": {"arguments": fragment}}]}),
                    Value::Null,
                ),
            );
        }
        call += 1;
    }
    event(&mut body, None, &chunk(json!({}), json!("tool_calls")));
    event(
        &mut body,
        None,
        &json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1,
        "model": "bench", "choices": [], "usage": {"prompt_tokens": 100, "completion_tokens": 500_000}}),
    );
    body.push_str("data: [DONE]\n\n");
    body
}

fn streaming(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let mut group = c.benchmark_group("sse_decode_10MB");
    for (name, wire, body) in [
        ("anthropic", WireFormat::Anthropic, anthropic_recording()),
        ("openai", WireFormat::OpenAi, openai_recording()),
    ] {
        let chunks = chunked(&body, CHUNK_BYTES);
        // The recording must decode whole, every tool call assembled, or the figure means nothing.
        let (tx, _rx) = mpsc::unbounded_channel();
        let body_stream = stream::iter(chunks.clone().into_iter().map(Ok::<_, Infallible>));
        let completion = runtime.block_on(wire.decode(body_stream, &tx)).unwrap();
        let calls = completion
            .content
            .iter()
            .filter(|block| matches!(block, keel::message::ContentBlock::ToolUse { input, .. } if input["path"].is_string()))
            .count();
        assert!(calls > 100, "{name}: only {calls} tool calls assembled");
        println!(
            "{name}: {} bytes, {} content blocks, {calls} tool calls",
            body.len(),
            completion.content.len()
        );

        group.throughput(Throughput::Bytes(body.len() as u64));
        group.bench_function(name, |b| {
            b.iter_batched(
                || {
                    let (tx, rx) = mpsc::unbounded_channel();
                    (chunks.clone(), tx, rx)
                },
                |(chunks, tx, rx)| {
                    let body = stream::iter(chunks.into_iter().map(Ok::<_, Infallible>));
                    let completion = runtime.block_on(wire.decode(body, &tx)).unwrap();
                    (completion, rx)
                },
                BatchSize::PerIteration,
            );
        });
    }
    group.finish();
}

/// One word of the long answer: 16 bytes, which the fake server streams as one delta.
const ANSWER_WORD: &str = "streamed-words, ";
/// The long answers' sizes.
const ANSWER_SIZES: [usize; 2] = [256 << 10, 1 << 20];
/// Runs of the new binary per size (the median is reported).
const ANSWER_RUNS: usize = 3;

/// `keel -p` from `binary` answered with `server`'s one long answer: (wall time, own time).
fn long_answer_once(
    runtime: &tokio::runtime::Runtime,
    server: &Loopback,
    binary: &Path,
) -> (Duration, Duration) {
    let (home, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    server.take();
    let mut command = Command::new(binary);
    command
        .args(["-p", "Say a lot.", "--workdir"])
        .arg(work.path())
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join("config"))
        .env("XDG_STATE_HOME", home.path().join("state"))
        .env("ANTHROPIC_API_KEY", "bench")
        .env("ANTHROPIC_BASE_URL", &server.base_url)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let started = Instant::now();
    let mut child = command.spawn().unwrap();
    let status = runtime
        .block_on(async { tokio::task::spawn_blocking(move || child.wait()).await })
        .unwrap()
        .unwrap();
    let wall = started.elapsed();
    assert!(status.success(), "the long answer failed");
    let exchanges = server.take_when(1);
    let server_time = exchanges[0].answer_sent - exchanges[0].request_arrived;
    (wall, wall.saturating_sub(server_time))
}

fn median(mut values: Vec<Duration>) -> Duration {
    values.sort();
    values[values.len() / 2]
}

fn long_answer(_c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let keel = PathBuf::from(env!("CARGO_BIN_EXE_keel"));
    let baseline = std::env::var("KEEL_BENCH_BASELINE").ok().map(PathBuf::from);
    let mut walls = Vec::new();
    for bytes in ANSWER_SIZES {
        let answer = ANSWER_WORD.repeat(bytes / ANSWER_WORD.len());
        let server = runtime.block_on(Loopback::start(vec![fake_llm::text(&answer)]));
        let runs: Vec<_> =
            (0..ANSWER_RUNS).map(|_| long_answer_once(&runtime, &server, &keel)).collect();
        let wall = median(runs.iter().map(|run| run.0).collect());
        let own = median(runs.iter().map(|run| run.1).collect());
        walls.push(wall);
        let before = baseline.as_ref().map_or_else(String::new, |baseline| {
            let (wall, own) = long_answer_once(&runtime, &server, baseline);
            format!(" (baseline, once: wall {wall:.2?}, own {own:.2?})")
        });
        println!(
            "keel -p, {} KB answer in {}-byte deltas: wall {wall:.2?}, own {own:.2?}{before}",
            bytes >> 10,
            ANSWER_WORD.len()
        );
    }
    println!(
        "1 MB takes {:.2}x the time of 256 KB (linear: 4x)",
        walls[1].as_secs_f64() / walls[0].as_secs_f64()
    );
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10).measurement_time(Duration::from_secs(10));
    targets = streaming, long_answer
}
criterion_main!(benches);
