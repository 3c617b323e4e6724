//! Masking and the board: whatever masks, the current board stays readable — the newest
//! accepted whole board, with the compact answers accepted after it — even when the newest board
//! call was rejected.

use super::*;
use crate::agent::journal::compaction::apply_masks;
use crate::board::Board;
use crate::message::Message;

/// One round: a call and its answer.
fn round(id: &str, name: &str, input: Value, result: &str, is_error: bool) -> [Message; 2] {
    [
        Message::assistant(vec![ContentBlock::ToolUse { id: id.into(), name: name.into(), input }]),
        Message {
            role: Role::User,
            content: vec![ContentBlock::ToolResult {
                tool_use_id: id.into(),
                content: result.into(),
                is_error,
            }],
        },
    ]
}

/// A plan of `steps` items whose ids keel gives (their positions): answered with the whole board.
fn plan_of(steps: usize) -> Value {
    let items: Vec<Value> = (1..=steps)
        .map(|i| json!({"text": format!("Step number {i} of the plan"), "status": "pending"}))
        .collect();
    json!({ "items": items })
}

/// The history of a task: the plan, a big command, `updates` (each accepted or not, as the
/// board answers it), then three more big commands.
fn task(updates: &[Value]) -> (History, Vec<(String, String)>) {
    let big = format!("Exit code 0\n{}", "output line\n".repeat(500));
    let mut board = Board::default();
    let mut history = vec![Message::user_text("Do it.")];
    let mut answers = Vec::new();
    let first = plan_of(8);
    let answer = board.apply(&first).unwrap();
    history.extend(round("plan", "todo", first, &answer, false));
    answers.push(("plan".to_owned(), answer));
    history.extend(round("b0", "bash", json!({"command": "make"}), &big, false));
    for (n, input) in updates.iter().enumerate() {
        let id = format!("u{n}");
        let (answer, is_error) = match board.apply(input) {
            Ok(answer) => (answer, false),
            Err(err) => (err.to_string(), true),
        };
        history.extend(round(&id, "todo", input.clone(), &answer, is_error));
        answers.push((id, answer));
    }
    for n in 1..=3 {
        history.extend(round(&format!("b{n}"), "bash", json!({"command": "make"}), &big, false));
    }
    (history.into_iter().collect(), answers)
}

fn masked(history: &History) -> History {
    let mut history = history.clone();
    let masks = plan(&history, 0);
    apply_masks(history.iter_mut(), &masks).unwrap();
    history
}

fn result<'a>(history: &'a History, id: &str) -> &'a str {
    history
        .iter()
        .flat_map(|message| &message.content)
        .find_map(|block| match block {
            ContentBlock::ToolResult { tool_use_id, content, .. } if tool_use_id == id => {
                Some(content.as_str())
            }
            _ => None,
        })
        .unwrap()
}

#[test]
fn a_rejected_newest_board_call_leaves_the_last_accepted_board_whole() {
    // The newest board call names an item that is not there: refused.
    let rejected = json!({"update": [{"id": "99", "status": "completed"}]});
    let (history, answers) = task(&[rejected]);
    assert!(result(&history, "u0").starts_with("Update: no item '99'"));
    assert!(crate::board::is_whole(&answers[0].1), "the plan's answer is a whole board");
    let history = masked(&history);
    assert_eq!(result(&history, "plan"), answers[0].1, "the last accepted board, whole");
    assert!(result(&history, "plan").ends_with("(0/8 completed)"));
    assert!(result(&history, "b1").starts_with("[bash `make`"), "masking did mask");
}

#[test]
fn a_rejected_whole_list_after_compact_answers_leaves_the_board_and_its_steps() {
    let step = |done: usize| {
        json!({"update": [{"id": done.to_string(), "status": "completed"},
                          {"id": (done + 1).to_string(), "status": "in_progress"}]})
    };
    // A whole list that drops six unfinished items: refused, and the newest call.
    let dropping =
        json!({"items": [{"id": "1", "text": "Step number 1 of the plan", "status": "completed"}]});
    let (history, answers) =
        task(&[json!({"update": [{"id": "1", "status": "in_progress"}]}), step(1), dropping]);
    assert!(result(&history, "u2").starts_with("The list leaves out items not completed"));
    let history = masked(&history);
    // The whole board and every compact answer after it stay as sent: together they say
    // where the board stands.
    for (id, answer) in &answers[..3] {
        assert_eq!(result(&history, id), answer, "{id}");
    }
    assert!(result(&history, "u1").contains("(1/8 completed)"));
}

#[test]
fn a_later_whole_board_supersedes_the_earlier_one_and_the_compact_answers_before_it() {
    let added = json!({"update": [{"id": "9", "text": "One more"}]});
    let (history, answers) = task(&[
        json!({"update": [{"id": "1", "status": "in_progress"}]}),
        added,
        json!({"update": [{"id": "1", "status": "completed"}]}),
    ]);
    let history = masked(&history);
    assert_eq!(result(&history, "plan"), SUPERSEDED_BOARD);
    assert_eq!(result(&history, "u0"), SUPERSEDED_BOARD);
    assert_eq!(result(&history, "u1"), answers[2].1, "the newest whole board");
    assert!(result(&history, "u1").contains("#9: One more"));
    assert_eq!(result(&history, "u2"), answers[3].1, "the compact answer after it");
}

#[test]
fn a_compaction_makes_the_current_board_whole_where_the_newest_answer_was_compact() {
    let step = json!({"update": [{"id": "1", "status": "in_progress"}]});
    let next = json!({"update": [{"id": "1", "status": "completed"}, {"id": "2", "status": "in_progress"}]});
    let (history, answers) = task(&[step, next]);
    let mut board = Board::default();
    board.apply(&plan_of(8)).unwrap();
    board.apply(&json!({"update": [{"id": "1", "status": "completed"}, {"id": "2", "status": "in_progress"}]})).unwrap();
    let current = board.render();
    let mut compacted = history.clone();
    let masks = plan_with_board(&history, 0, Some(&current));
    apply_masks(compacted.iter_mut(), &masks).unwrap();
    assert_eq!(result(&compacted, "u1"), current, "the newest answer is now the whole board");
    assert!(answers[2].1.starts_with(crate::board::COMPACT_PREFIX), "it was compact");
    assert_eq!(result(&compacted, "u0"), SUPERSEDED_BOARD);
    assert_eq!(result(&compacted, "plan"), SUPERSEDED_BOARD);
    // Once whole, a second plan leaves it so.
    assert!(plan_with_board(&compacted, 0, Some(&current)).iter().all(|mask| mask.id() != "u1"));
}

#[test]
fn a_plan_taken_as_sent_keeps_its_call_until_a_compaction_makes_the_board_whole() {
    // Sent with its ids, the plan is answered as taken as sent: its call is the board.
    let items: Vec<Value> = (1..=8)
        .map(|i| json!({"id": i.to_string(), "text": format!("Step number {i} of the plan"), "status": "pending"}))
        .collect();
    let plan = json!({ "items": items });
    let step = json!({"update": [{"id": "1", "status": "in_progress"}]});
    let mut board = Board::default();
    let said = board.apply(&plan).unwrap();
    assert!(!crate::board::is_whole(&said), "{said}");
    let mut history = vec![Message::user_text("Do it.")];
    history.extend(round("plan", "todo", plan.clone(), &said, false));
    let big = format!("Exit code 0\n{}", "output line\n".repeat(500));
    history.extend(round("b0", "bash", json!({"command": "make"}), &big, false));
    let stepped = board.apply(&step).unwrap();
    history.extend(round("u0", "todo", step, &stepped, false));
    for n in 1..=3 {
        history.extend(round(&format!("b{n}"), "bash", json!({"command": "make"}), &big, false));
    }
    let history: History = history.into_iter().collect();
    // Masking alone: no whole board in the history, so the plan's call and every answer stay.
    let masks = plan_with_board(&history, 0, None);
    assert!(masks.iter().all(|mask| mask.id() != "plan" && mask.id() != "u0"), "{masks:?}");
    assert!(masks.iter().any(|mask| mask.id() == "b0"), "masking did mask");
    // A compaction with the board makes the newest answer the whole board.
    let current = board.render();
    let mut compacted = history.clone();
    apply_masks(compacted.iter_mut(), &plan_with_board(&history, 0, Some(&current))).unwrap();
    assert_eq!(result(&compacted, "u0"), current);
    assert_eq!(result(&compacted, "plan"), SUPERSEDED_BOARD);
}
