//! A compacted session resumes compacted, its history keeping every call answered and the reasoning
//! as it came; and the strict server that checks this refuses an unanswered call and altered
//! reasoning.

use super::{
    OUTPUT_BYTES, PROMPT, Run, STEPS, WINDOW, assert_finished_anchored, compacted, compactions,
    run, workspace,
};
use crate::support::{bin, llm};
use bin::{last_result, sessions};
use llm::FakeLlm;
use llm::window::{self, Switches, TooLong};
use serde_json::Value;

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
