//! A child agent's success on its item (`task {"item": K}`) goes through the same gate as the
//! model's own claim: the item's check runs first, then the TaskCompleted hooks, in a live
//! agent against the loopback server. A failing check or a refusing hook leaves the item as it
//! was, and the parent's model reads why; the hooks read the check's result.

use super::board_checks_agent::{checks_ended, item};
use super::hooks::{Scripts, hooks, one, save_stdin};
use crate::support::agent::{Wire, start, until_result};
use crate::support::llm::family::{ChildScript, FamilyLlm, child};
use crate::support::llm::{text, tool};
use keel::agent::{AgentConfig, AgentEvent, Command, Sessions};
use keel::board::Status;
use serde_json::{Value, json};
use std::path::Path;

/// The check of item 1: the file its child writes.
const CHECK: &str = "test -e a.txt";

/// A child, found by `marker`, that writes `a.txt` when `writes`, and reports.
fn worker(marker: &str, writes: bool) -> ChildScript {
    let mut steps = Vec::new();
    if writes {
        steps.push(tool("write_file", json!({"path": "a.txt", "content": "done\n"})));
    }
    steps.push(text(&format!("Report: {marker} is done.")));
    child(marker, steps)
}

/// What a parent's run gave: its `task` answers (error or not, text), its events, the board.
struct Ran {
    answers: Vec<(bool, String)>,
    events: Vec<AgentEvent>,
    statuses: Vec<(Status, bool)>,
}

/// Plans `items`, hands each of `tasks` (item, marker) to a child in turn, and ends.
async fn run(
    wire: Wire,
    items: &[Value],
    tasks: &[(&str, &str)],
    children: Vec<ChildScript>,
    config: impl FnOnce(&Path) -> AgentConfig,
) -> Ran {
    let mut parent = vec![tool("todo", json!({ "items": items }))];
    for (id, marker) in tasks {
        parent.push(tool("task", json!({"prompt": format!("{marker}: do it"), "item": id})));
    }
    parent.push(text("Over."));
    let server = FamilyLlm::start(parent, children).await;
    let work = tempfile::tempdir().unwrap();
    let mut handle = start(&server, wire, work.path(), config(work.path()), Sessions::Off);
    handle.commands.send(Command::Submit("Do the steps.".into())).unwrap();
    let events = until_result(&mut handle).await;
    let answers = events
        .iter()
        .filter_map(|event| match event {
            AgentEvent::ToolEnd { name, is_error, output, .. } if name == "task" => {
                Some((*is_error, output.clone()))
            }
            _ => None,
        })
        .collect();
    let board = crate::support::agent::latest(&mut handle).board;
    let statuses = board.items().iter().map(|item| (item.status, item.check_passed)).collect();
    Ran { answers, events, statuses }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_childs_success_completes_its_item_only_when_the_check_passes() {
    for wire in [Wire::Anthropic, Wire::OpenAi] {
        let items = [item("1", "pending", Some(CHECK))];
        let honest = vec![worker("HONEST", true)];
        let ran = run(wire, &items, &[("1", "HONEST")], honest, |_| AgentConfig::default()).await;
        assert_eq!(ran.statuses, [(Status::Completed, true)], "{wire:?}");
        let (refused, answer) = &ran.answers[0];
        assert!(!refused, "{wire:?}: {answer}");
        assert!(answer.contains("[x] #1: Step 1  (check passed)"), "{wire:?}: {answer}");
        assert_eq!(checks_ended(&ran.events), [("1".to_owned(), true)]);

        let lazy = vec![worker("LAZY", false)];
        let ran = run(wire, &items, &[("1", "LAZY")], lazy, |_| AgentConfig::default()).await;
        assert_eq!(ran.statuses, [(Status::InProgress, false)], "{wire:?}: not completed");
        let (refused, answer) = &ran.answers[0];
        assert!(refused, "{wire:?}: {answer}");
        assert!(
            answer.starts_with(
                "The child agent a1 finished, but item #1 could not be completed: Item 1: its \
                 check failed (exit 1): test -e a.txt"
            ),
            "{wire:?}: {answer}"
        );
        assert!(answer.contains("Report: LAZY is done."), "the report still reaches the parent");
        assert_eq!(checks_ended(&ran.events), [("1".to_owned(), false)]);
    }
}

/// The config of workspace `work` with the person's TaskCompleted hook `command`.
fn with_hook(command: &str) -> impl FnOnce(&Path) -> AgentConfig + use<> {
    let text = one("TaskCompleted", None, command, None);
    move |work| AgentConfig { hooks: hooks(work, &text, false), ..AgentConfig::default() }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_childs_success_runs_the_task_completed_hooks_with_the_checks_result() {
    let scripts = Scripts::new();
    let seen = scripts.path("seen.jsonl");
    let items = [item("1", "pending", Some(CHECK)), item("2", "pending", None)];
    let children = vec![worker("FIRST", true), worker("SECOND", false)];
    let config = with_hook(&save_stdin(&seen));
    let tasks = [("1", "FIRST"), ("2", "SECOND")];
    let ran = run(Wire::Anthropic, &items, &tasks, children, config).await;
    assert_eq!(ran.statuses, [(Status::Completed, true), (Status::Completed, false)]);

    let inputs = scripts.inputs("seen.jsonl");
    assert_eq!(inputs.len(), 2, "one TaskCompleted per child's item: {inputs:?}");
    assert_eq!(inputs[0]["hook_event_name"], "TaskCompleted");
    assert_eq!(
        (&inputs[0]["task_id"], &inputs[0]["task_subject"]),
        (&json!("1"), &json!("Step 1"))
    );
    let check = &inputs[0]["check"];
    assert_eq!(
        (&check["command"], &check["exit_code"], &check["passed"]),
        (&json!(CHECK), &json!(0), &json!(true)),
        "{check}"
    );
    assert!(inputs[0]["board_text"].as_str().unwrap().contains("[x] #1: Step 1  (check passed)"));
    assert_eq!(inputs[1]["task_id"], "2");
    assert!(inputs[1].get("check").is_none(), "an item without a check: {}", inputs[1]);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_task_completed_hook_that_refuses_keeps_a_childs_item_open_after_its_check() {
    let scripts = Scripts::new();
    let block =
        scripts.script("block.sh", "cat > /dev/null\necho 'the changelog is missing' >&2\nexit 2");
    let items = [item("1", "pending", Some(CHECK))];
    let config = with_hook(&block);
    let ran =
        run(Wire::OpenAi, &items, &[("1", "BLOCKED")], vec![worker("BLOCKED", true)], config).await;
    assert_eq!(ran.statuses, [(Status::InProgress, false)], "the hook kept it open");
    let (refused, answer) = &ran.answers[0];
    assert!(refused, "{answer}");
    assert!(
        answer.contains(
            "item #1 could not be completed: Item 1: cannot be completed: the changelog is missing"
        ),
        "{answer}"
    );
    assert_eq!(checks_ended(&ran.events), [("1".to_owned(), true)], "the check ran first");
}
