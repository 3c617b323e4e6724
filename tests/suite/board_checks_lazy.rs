//! A lazy model held to the work: ten items, each with a check, claimed done before their file
//! is written and then again after it, through `keel -p`. Every early claim is refused with its
//! check's failure and the board left as it was; every honest claim is accepted; the board ends
//! 10/10. (`benches/board_checks.rs` prices the same guarantee on the ten-step task.)

use crate::support::{bin, llm};
use bin::{json_lines, keel, output_within};
use llm::{FakeLlm, Step, text, tool};
use serde_json::{Value, json};
use std::time::Duration;

/// Items on the board.
const ITEMS: usize = 10;

/// The check that shows item `k`'s file was written.
fn check(k: usize) -> String {
    format!("test -s step{k}.txt")
}

/// The plan, then per item: the claim before the work, the work, and the claim after it.
fn lazy_script() -> Vec<Step> {
    let items: Vec<Value> = (1..=ITEMS)
        .map(|k| {
            let status = if k == 1 { "in_progress" } else { "pending" };
            json!({"id": k.to_string(), "text": format!("Write step{k}.txt"), "status": status, "check": check(k)})
        })
        .collect();
    let mut steps = vec![tool("todo", json!({ "items": items }))];
    for k in 1..=ITEMS {
        let mut claim = vec![json!({"id": k.to_string(), "status": "completed"})];
        if k < ITEMS {
            claim.push(json!({"id": (k + 1).to_string(), "status": "in_progress"}));
        }
        let claim = json!({ "update": claim });
        steps.push(tool("todo", claim.clone()));
        steps
            .push(tool("write_file", json!({"path": format!("step{k}.txt"), "content": "done\n"})));
        steps.push(tool("todo", claim));
    }
    steps.push(text("All ten written."));
    steps
}

/// The events of `kind`, in order.
fn of_type<'a>(events: &'a [Value], kind: &str) -> Vec<&'a Value> {
    events.iter().filter(|event| event["type"] == kind).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn every_early_claim_of_ten_is_refused_every_honest_one_accepted_and_the_board_ends_full() {
    let server = FakeLlm::start(lazy_script(), Duration::ZERO).await;
    let (home, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mut command = keel(home.path());
    command.args(["-p", "go", "--output-format", "json", "--workdir"]).arg(work.path());
    command.env("ANTHROPIC_API_KEY", "k").env("ANTHROPIC_BASE_URL", server.anthropic_base());
    let output = output_within(&mut command, "keel -p");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let events = json_lines(&output);

    // The board's answers: the plan, then each item's early claim and its honest one.
    let answers: Vec<&Value> =
        of_type(&events, "tool_end").into_iter().filter(|end| end["name"] == "todo").collect();
    assert_eq!(answers.len(), 1 + 2 * ITEMS, "{events:?}");
    assert_eq!(answers[0]["is_error"], false, "the plan: {}", answers[0]);
    for k in 1..=ITEMS {
        let (early, honest) = (answers[2 * k - 1], answers[2 * k]);
        assert_eq!(early["is_error"], true, "item {k}'s early claim: {early}");
        let failed = format!("Item {k}: its check failed (exit 1): {}", check(k));
        assert!(early["output"].as_str().is_some_and(|said| said.contains(&failed)), "{early}");
        assert_eq!(honest["is_error"], false, "item {k}'s honest claim: {honest}");
        let said = honest["output"].as_str().unwrap_or_default();
        assert!(said.contains(&format!("[x] #{k}: Write step{k}.txt  (check passed)")), "{said}");
        assert!(said.contains(&format!("({k}/{ITEMS} completed)")), "{said}");
    }

    // Each check failed before its file and passed after it, in the items' order.
    let ran: Vec<(Value, Value)> = of_type(&events, "check_end")
        .into_iter()
        .map(|end| (end["item"].clone(), end["passed"].clone()))
        .collect();
    let expected: Vec<(Value, Value)> = (1..=ITEMS)
        .flat_map(|k| [(json!(k.to_string()), json!(false)), (json!(k.to_string()), json!(true))])
        .collect();
    assert_eq!(ran, expected);

    // A refused claim changes nothing: the board moved only on the honest ones, one item each,
    // and ends with all ten completed.
    let done: Vec<Value> =
        of_type(&events, "todo").iter().map(|board| board["done"].clone()).collect();
    assert_eq!(done, (0..=ITEMS).map(|k| json!(k)).collect::<Vec<_>>(), "{events:?}");
    let last = of_type(&events, "todo").last().copied().cloned().unwrap_or_default();
    assert_eq!((last["done"].clone(), last["total"].clone()), (json!(ITEMS), json!(ITEMS)));
}
