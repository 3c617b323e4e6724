//! Long sessions with `keel -p`, against a loopback server with a finite context window that
//! refuses what does not fit as a real server words it (docs/architecture.md, DESIGN §8): a task
//! whose tool output is many times the window finishes, every request within the window, the
//! original request and the current board in every request once keel has compacted, no step
//! done twice — with the window configured, and learned from the server's own refusal. And a
//! model that keeps no plan but the board keel renders back to it (`llm::follower`) finishes
//! twenty steps at three times the window without planning again.

use crate::support::{bin, llm};
use bin::{json_lines, keel, last_result, output_within, sessions, text};
use llm::window::{self, Switches, TooLong};
use llm::{FakeLlm, board};
use serde_json::Value;
use std::collections::HashSet;
use std::path::Path;

/// The window of the issue's measure: 24,000 tokens.
const WINDOW: usize = 24_000;
const PROMPT: &str = "Work through the twenty steps on the board.";
/// The task: 20 steps, each printing 12 KB (240 KB of tool output in all).
const STEPS: usize = 20;
const OUTPUT_BYTES: usize = 12_000;

/// One run of `keel -p` over `protocol` (`anthropic` or `openai`).
struct Run {
    output: std::process::Output,
    events: Vec<Value>,
    bodies: Vec<Vec<u8>>,
}

fn command(
    home: &Path,
    work: &Path,
    protocol: &str,
    server: &FakeLlm,
    args: &[&str],
) -> std::process::Command {
    let mut command = keel(home);
    command.args(["--output-format", "json", "--workdir"]).arg(work).args(args);
    match protocol {
        "anthropic" => command
            .env("ANTHROPIC_API_KEY", "test-key")
            .env("ANTHROPIC_BASE_URL", server.anthropic_base()),
        _ => command.env("OPENAI_API_KEY", "test-key").env("OPENAI_BASE_URL", server.openai_base()),
    };
    command
}

/// A workspace with the task's `big.txt`.
fn workspace(output_bytes: usize) -> tempfile::TempDir {
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("big.txt"), window::big_file(output_bytes)).unwrap();
    work
}

async fn run(server: &FakeLlm, protocol: &str, (home, work): (&Path, &Path), args: &[&str]) -> Run {
    let seen = server.raw_bodies().await.len();
    let mut command = command(home, work, protocol, server, args);
    let output = output_within(&mut command, "the long task");
    let events = json_lines(&output);
    let bodies = server.raw_bodies().await.split_off(seen);
    Run { output, events, bodies }
}

fn parse(body: &[u8]) -> Value {
    serde_json::from_slice(body).unwrap()
}

/// The board the fake's `board(done, STEPS)` renders to, as keel's todo tool renders it.
fn rendered_board(done: usize) -> String {
    let mut board_state = keel::board::Board::default();
    board_state.update(&board(done, STEPS)).unwrap()
}

/// How many steps the board showed done when `body` was sent: the newest board update before it.
fn done_before(body: &[u8]) -> usize {
    // Step 2k is the board update that completes step k; the plan is step 0.
    let next = window::step_by_id(body);
    next.saturating_sub(1) / 2
}

/// Whether a request's history was compacted: a stub, or keel's summary note, is in it.
fn compacted(body: &[u8]) -> bool {
    let text = String::from_utf8_lossy(body);
    text.contains("elided") || text.contains("keel compacted the conversation")
}

/// The request's text as the model reads it (JSON strings unescaped).
fn words(body: &[u8]) -> String {
    let body = parse(body);
    let mut out = String::new();
    collect_strings(&body["messages"], &mut out);
    out
}

fn collect_strings(value: &Value, out: &mut String) {
    match value {
        Value::String(text) => {
            out.push_str(text);
            out.push('\n');
        }
        Value::Array(items) => items.iter().for_each(|item| collect_strings(item, out)),
        Value::Object(fields) => fields.values().for_each(|item| collect_strings(item, out)),
        _ => {}
    }
}

/// The checks every long run must pass: success, each step done once, and from the first
/// compaction on the original request and the current board in every request.
fn assert_finished_anchored(run: &Run, work: &Path, what: &str) {
    assert!(run.output.status.success(), "{what}: {}", text(&run.output.stderr));
    let result = last_result(&run.events);
    assert_eq!((result["done"].as_u64(), result["total"].as_u64()), (Some(20), Some(20)), "{what}");
    let log = std::fs::read_to_string(work.join("progress.log")).unwrap();
    let expected: String = (1..=STEPS).map(|k| format!("step {k}\n")).collect();
    assert_eq!(log, expected, "{what}: every step once, in order");
    let first = run.bodies.iter().position(|body| compacted(body)).expect("a compaction");
    for body in &run.bodies[first..] {
        if window::is_summary_request(&parse(body)) {
            continue;
        }
        let words = words(body);
        assert!(words.contains(PROMPT), "{what}: the request is in every request");
        let board = rendered_board(done_before(body));
        assert!(words.contains(&board), "{what}: the current board in every request:\n{board}");
    }
}

fn compactions(run: &Run) -> Vec<&Value> {
    run.events.iter().filter(|event| event["type"] == "compaction").collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_task_many_times_a_configured_window_finishes_within_it() {
    let window_arg = WINDOW.to_string();
    for protocol in ["anthropic", "openai"] {
        let words = if protocol == "anthropic" { TooLong::Anthropic } else { TooLong::OpenAi };
        let server =
            FakeLlm::start_with(window::long_task(STEPS, 1500), Switches::window(WINDOW, words))
                .await;
        let (home, work) = (tempfile::tempdir().unwrap(), workspace(OUTPUT_BYTES));
        let args = ["-p", PROMPT, "--context-window", window_arg.as_str()];
        let run = run(&server, protocol, (home.path(), work.path()), &args).await;
        assert_finished_anchored(&run, work.path(), protocol);
        let limit = WINDOW * window::BYTES_PER_TOKEN;
        let sizes: Vec<usize> = run.bodies.iter().map(Vec::len).collect();
        assert!(
            sizes.iter().all(|size| *size <= limit),
            "{protocol}: every request within the window: {sizes:?}"
        );
        let events = compactions(&run);
        assert!(
            events.iter().any(|event| event["summarised"].as_u64() > Some(0)),
            "{protocol}: {events:?}"
        );
        let summaries =
            run.bodies.iter().filter(|body| window::is_summary_request(&parse(body))).count();
        assert_eq!(summaries, events.iter().filter(|e| e["summarised"].as_u64() > Some(0)).count());
        eprintln!(
            "{protocol}: {} requests ({summaries} summaries), {} bytes in all, the largest {}",
            sizes.len(),
            sizes.iter().sum::<usize>(),
            sizes.iter().max().unwrap()
        );
    }
}

/// The whole lists a run's model sent after its first plan: each one a plan made again because
/// the model could not tell from what keel rendered where the work stood.
fn re_plans(run: &Run) -> usize {
    let plans = run.events.iter().filter(|event| {
        event["type"] == "tool_start"
            && event["name"] == "todo"
            && event["input"]["items"].is_array()
    });
    plans.count().saturating_sub(1)
}

/// How the board-following model's task is run: tool output per step, the model's own words
/// per step, and whether the window is a small one keel must compact within.
struct Following {
    what: &'static str,
    output: usize,
    chatter: usize,
    small_window: bool,
}

#[tokio::test(flavor = "multi_thread")]
async fn a_model_that_reads_only_the_board_keel_renders_finishes_twenty_steps_without_re_planning()
{
    // The model keeps no plan of its own (`llm::follower`): every answer comes from the newest
    // board keel rendered in the request, and it updates with `update` beside each step's
    // command. Once where the task fits the window, and twice with three times the window of
    // tool output in all: masking enough, then with the model's words making keel summarise.
    let overflow = 3 * WINDOW * window::BYTES_PER_TOKEN / STEPS;
    let cases = [
        Following { what: "fits", output: 3_000, chatter: 0, small_window: false },
        Following { what: "3x the window", output: overflow, chatter: 0, small_window: true },
        Following { what: "3x, summarised", output: overflow, chatter: 1500, small_window: true },
    ];
    let window_arg = WINDOW.to_string();
    for protocol in ["anthropic", "openai"] {
        let words = if protocol == "anthropic" { TooLong::Anthropic } else { TooLong::OpenAi };
        for case in &cases {
            let what = format!("{protocol}, {}", case.what);
            let mut switches = Switches::window(WINDOW, words);
            let mut args = vec!["-p", PROMPT];
            if case.small_window {
                args.extend(["--context-window", window_arg.as_str()]);
            } else {
                switches.max_body = None;
            }
            let server = FakeLlm::start_following(STEPS, case.chatter, switches).await;
            let (home, work) = (tempfile::tempdir().unwrap(), workspace(case.output));
            let run = run(&server, protocol, (home.path(), work.path()), &args).await;
            assert_eq!(re_plans(&run), 0, "{what}: the board it read back was always whole");
            assert!(run.output.status.success(), "{what}: {}", text(&run.output.stderr));
            let result = last_result(&run.events);
            let done = (result["done"].as_u64(), result["total"].as_u64());
            assert_eq!(done, (Some(20), Some(20)), "{what}");
            assert_eq!(result["text"], llm::follower::DONE, "{what}");
            let log = std::fs::read_to_string(work.path().join("progress.log")).unwrap();
            let expected: String = (1..=STEPS).map(|k| format!("step {k}\n")).collect();
            assert_eq!(log, expected, "{what}: every step once, in order");
            let summaries =
                run.bodies.iter().filter(|body| window::is_summary_request(&parse(body))).count();
            // The plan, twenty steps, the closing answer: nothing asked twice.
            assert_eq!(run.bodies.len() - summaries, STEPS + 2, "{what}");
            let events = compactions(&run);
            if case.small_window {
                assert!(STEPS * case.output >= 3 * WINDOW * window::BYTES_PER_TOKEN);
                assert!(!events.is_empty(), "{what}: keel had to compact");
                assert_eq!(summaries > 0, case.chatter > 0, "{what}: {events:?}");
                let limit = WINDOW * window::BYTES_PER_TOKEN;
                assert!(run.bodies.iter().all(|body| body.len() <= limit), "{what}");
            } else {
                assert!(events.is_empty(), "{what}");
            }
        }
    }
}

#[test]
fn the_following_model_finds_a_whole_board_and_nothing_less() {
    use llm::follower::parse_board;
    let board = rendered_board(1);
    let items = parse_board(&board).unwrap();
    assert_eq!(items.len(), STEPS);
    assert_eq!(
        (items[0].0.as_str(), items[1].0.as_str(), items[1].1.as_str()),
        ("[x]", "[>]", "2")
    );
    let reminder = format!("<reminder>Update your todos.</reminder>\n\n{board}");
    assert_eq!(parse_board(&reminder), Some(items));
    assert_eq!(parse_board("No todos."), Some(Vec::new()));
    // A line of what changed, or a board cut short, does not say where the work stands.
    assert_eq!(parse_board("Updated: #1 completed, #2 in_progress.\n(1/20 completed)"), None);
    let cut: Vec<&str> = board.lines().skip(1).collect();
    assert_eq!(parse_board(&cut.join("\n")), None);
}

#[tokio::test(flavor = "multi_thread")]
async fn with_no_window_configured_keel_learns_it_from_each_servers_refusal() {
    let cases = std::iter::once(("anthropic", TooLong::Anthropic))
        .chain(TooLong::OPENAI_COMPATIBLE.into_iter().map(|words| ("openai", words)));
    for (protocol, words) in cases {
        let what = format!("{protocol} refusing as {words:?}");
        let server =
            FakeLlm::start_with(window::long_task(STEPS, 600), Switches::window(WINDOW, words))
                .await;
        let (home, work) = (tempfile::tempdir().unwrap(), workspace(OUTPUT_BYTES));
        let run = run(&server, protocol, (home.path(), work.path()), &["-p", PROMPT]).await;
        assert_finished_anchored(&run, work.path(), &what);
        let limit = WINDOW * window::BYTES_PER_TOKEN;
        let refused: Vec<&Vec<u8>> = run.bodies.iter().filter(|body| body.len() > limit).collect();
        assert!(!refused.is_empty(), "{what}: the server had to say so");
        assert!(refused.len() <= 3, "{what}: {} refusals", refused.len());
        eprintln!(
            "{what}: {} refusals, {} requests, {} compactions",
            refused.len(),
            run.bodies.len(),
            compactions(&run).len()
        );
        let last_refused = run.bodies.iter().rposition(|body| body.len() > limit).unwrap();
        assert!(run.bodies[last_refused + 1..].iter().all(|body| body.len() <= limit), "{what}");
        let distinct: HashSet<&Vec<u8>> = run.bodies.iter().collect();
        assert_eq!(distinct.len(), run.bodies.len(), "{what}: no request sent twice unchanged");
        let events = compactions(&run);
        assert!(events.iter().any(|event| event["trigger"] == "refused"), "{what}: {events:?}");
        if !matches!(words, TooLong::Ollama) {
            // The limit it stated is the window keel works with from then on.
            assert!(events.iter().any(|event| event["window"] == WINDOW), "{what}: {events:?}");
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn masking_alone_suffices_for_a_moderately_long_task() {
    let window_arg = WINDOW.to_string();
    for protocol in ["anthropic", "openai"] {
        let words = if protocol == "anthropic" { TooLong::Anthropic } else { TooLong::OpenAi };
        let server =
            FakeLlm::start_with(window::long_task(STEPS, 0), Switches::window(WINDOW, words)).await;
        let (home, work) = (tempfile::tempdir().unwrap(), workspace(8_000));
        let args = ["-p", PROMPT, "--context-window", window_arg.as_str()];
        let run = run(&server, protocol, (home.path(), work.path()), &args).await;
        assert_finished_anchored(&run, work.path(), protocol);
        assert!(
            run.bodies.iter().all(|body| !window::is_summary_request(&parse(body))),
            "{protocol}: no summary"
        );
        let events = compactions(&run);
        assert!(!events.is_empty(), "{protocol}: it had to compact");
        assert!(
            events
                .iter()
                .all(|event| event["summarised"] == 0 && event["masked"].as_u64() > Some(0))
        );
        assert!(run.bodies.iter().all(|body| body.len() <= WINDOW * window::BYTES_PER_TOKEN));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_compacted_session_resumes_compacted() {
    let window_arg = WINDOW.to_string();
    for protocol in ["anthropic", "openai"] {
        let words = if protocol == "anthropic" { TooLong::Anthropic } else { TooLong::OpenAi };
        let server =
            FakeLlm::start_with(window::long_task(STEPS, 1500), Switches::window(WINDOW, words))
                .await;
        let (home, work) = (tempfile::tempdir().unwrap(), workspace(OUTPUT_BYTES));
        let dirs = (home.path(), work.path());
        let first = ["-p", PROMPT, "--context-window", window_arg.as_str(), "--max-rounds", "34"];
        let stopped = run(&server, protocol, dirs, &first).await;
        assert_eq!(last_result(&stopped.events)["outcome"], "max_rounds", "{protocol}");
        assert!(
            compactions(&stopped).iter().any(|e| e["summarised"].as_u64() > Some(0)),
            "{protocol}"
        );
        let store = sessions(home.path(), work.path());
        let (_, restored) = store.open_newest().unwrap();
        let log = std::fs::read_to_string(
            store.sessions_dir().join(format!("{}.jsonl", store.newest_first().unwrap()[0])),
        )
        .unwrap();
        assert!(log.contains(r#""type":"compaction""#), "{protocol}: the log records it");
        drop(restored);
        let resumed = run(
            &server,
            protocol,
            dirs,
            &["-p", "--continue", "--context-window", window_arg.as_str()],
        )
        .await;
        assert_finished_anchored(
            &Run { bodies: [stopped.bodies.clone(), resumed.bodies.clone()].concat(), ..resumed },
            work.path(),
            protocol,
        );
        let first_again = &resumed_bodies(&server, stopped.bodies.len()).await[0];
        assert!(
            compacted(first_again),
            "{protocol}: the resumed session sends the compacted history"
        );
        assert!(first_again.len() <= WINDOW * window::BYTES_PER_TOKEN);
    }
}

async fn resumed_bodies(server: &FakeLlm, after: usize) -> Vec<Vec<u8>> {
    server.raw_bodies().await.split_off(after)
}

#[tokio::test(flavor = "multi_thread")]
async fn the_compacted_history_keeps_every_call_answered_and_the_reasoning_as_it_came() {
    // Every answer reasons first: signed thinking blocks (Anthropic), reasoning_content
    // (DeepSeek's thinking mode). The server refuses a history that drops or alters them
    // where they must stay, or leaves a call without its result (`llm::valid`).
    let script: Vec<_> = window::long_task(STEPS, 1500)
        .into_iter()
        .enumerate()
        .map(|(index, step)| step.thinking(&format!("Step {index}: what comes next, and why.")))
        .collect();
    let window_arg = WINDOW.to_string();
    for protocol in ["anthropic", "openai"] {
        let words = if protocol == "anthropic" { TooLong::Anthropic } else { TooLong::OpenAi };
        let server = FakeLlm::start_with(script.clone(), Switches::window(WINDOW, words)).await;
        let (home, work) = (tempfile::tempdir().unwrap(), workspace(OUTPUT_BYTES));
        let args = ["-p", PROMPT, "--context-window", window_arg.as_str()];
        let run = run(&server, protocol, (home.path(), work.path()), &args).await;
        assert_finished_anchored(&run, work.path(), protocol);
        assert!(compactions(&run).iter().any(|e| e["summarised"].as_u64() > Some(0)), "{protocol}");
        let thinking = run.bodies.iter().filter(|body| {
            let text = String::from_utf8_lossy(body);
            text.contains("what comes next, and why")
        });
        assert!(thinking.count() > STEPS, "{protocol}: the reasoning went back with its answers");
    }
}

#[test]
fn the_strict_server_refuses_an_unanswered_call_and_altered_reasoning() {
    use llm::valid::problem;
    use llm::{Protocol, reasoning::thinking_block, tool};
    use serde_json::json;
    let steps = vec![tool("bash", json!({"command": "ls"})).thinking("Look first.")];
    let call = |thinking: Value| {
        json!({"role": "assistant", "content": [thinking,
            {"type": "tool_use", "id": "toolu_0_0", "name": "bash", "input": {"command": "ls"}}]})
    };
    let result = json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_0_0", "content": "ok"}]});
    let asked = json!({"role": "user", "content": "go"});
    let good = call(thinking_block("Look first.", 0));
    assert_eq!(
        problem(Protocol::Anthropic, &steps, &[asked.clone(), good.clone(), result.clone()]),
        None
    );
    let unanswered = problem(Protocol::Anthropic, &steps, &[asked.clone(), good, asked.clone()]);
    assert!(unanswered.unwrap().contains("owed"));
    let altered = call(thinking_block("Something else.", 0));
    let altered = problem(Protocol::Anthropic, &steps, &[asked.clone(), altered, result]);
    assert!(altered.unwrap().contains("signature"));
    let openai_call = |reasoning: &str| {
        json!({"role": "assistant", "content": null, "reasoning_content": reasoning,
            "tool_calls": [{"id": "call_0_0", "type": "function", "function": {"name": "bash", "arguments": "{}"}}]})
    };
    let tool_message = json!({"role": "tool", "tool_call_id": "call_0_0", "content": "ok"});
    let fine = [asked.clone(), openai_call("Look first."), tool_message.clone()];
    assert_eq!(problem(Protocol::OpenAi, &steps, &fine), None);
    let missing =
        problem(Protocol::OpenAi, &steps, &[asked.clone(), openai_call(""), tool_message.clone()]);
    assert!(missing.unwrap().contains("reasoning_content"));
    let orphan = problem(Protocol::OpenAi, &steps, &[asked, tool_message]);
    assert!(orphan.unwrap().contains("no call is owed"));
}

#[tokio::test(flavor = "multi_thread")]
async fn when_nothing_fits_keel_says_what_to_raise_and_sends_nothing_twice() {
    for protocol in ["anthropic", "openai"] {
        let words = if protocol == "anthropic" { TooLong::Anthropic } else { TooLong::OpenAi };
        // The server's window holds less than the system prompt and the tools.
        let server =
            FakeLlm::start_with(window::long_task(2, 0), Switches::window(500, words)).await;
        let (home, work) = (tempfile::tempdir().unwrap(), workspace(100));
        let refused = run(&server, protocol, (home.path(), work.path()), &["-p", PROMPT]).await;
        // The window set leaves no room beside --max-tokens' 8192: nothing is sent at all.
        let small = ["-p", PROMPT, "--context-window", "9000"];
        let unsent = run(&server, protocol, (home.path(), work.path()), &small).await;
        assert!(unsent.bodies.is_empty(), "{protocol}: nothing can fit, nothing is sent");
        for (run, source) in [(&refused, "as the server stated it"), (&unsent, "--context-window")]
        {
            assert!(!run.output.status.success(), "{protocol}");
            let result = last_result(&run.events);
            assert_eq!(result["outcome"], "error", "{protocol}");
            let error = result["error"].as_str().unwrap();
            assert!(error.contains("does not fit in the model's context window"), "{error}");
            assert!(error.contains(source) && error.contains("Raise the window"), "{error}");
            assert!(error.contains("--max-tokens"), "{error}");
        }
        assert_eq!(refused.bodies.len(), 1, "{protocol}: the refused request is not sent again");
    }
}
