//! Masking and the board: every accepted board answer is the whole board, so whatever masks, the
//! newest accepted answer stays as it was sent and the older ones go to one line — even when the
//! newest board call was rejected.

use super::*;
use crate::agent::compaction::fixtures::{board_input, round};
use crate::agent::journal::compaction::apply_masks;
use crate::board::Board;
use crate::message::Message;

/// The history of a task: the plan, a big command, `updates` (each accepted or not, as the
/// board answers it), then three more big commands; with each board call's answer, and the
/// board it ends with.
fn task(updates: &[Value]) -> (History, Vec<(String, String)>, Board) {
    let big = format!("Exit code 0\n{}", "output line\n".repeat(500));
    let mut board = Board::default();
    let mut history = vec![Message::user_text("Do it.")];
    let mut answers = Vec::new();
    let first = board_input(8, 0);
    let answer = board.update(&first).unwrap();
    history.extend(round("plan", "todo", first, &answer, false));
    answers.push(("plan".to_owned(), answer));
    history.extend(round("b0", "bash", json!({"command": "make"}), &big, false));
    for (n, input) in updates.iter().enumerate() {
        let id = format!("u{n}");
        let (answer, is_error) = match board.update(input) {
            Ok(answer) => (answer, false),
            Err(err) => (err.to_string(), true),
        };
        history.extend(round(&id, "todo", input.clone(), &answer, is_error));
        answers.push((id, answer));
    }
    for n in 1..=3 {
        history.extend(round(&format!("b{n}"), "bash", json!({"command": "make"}), &big, false));
    }
    (history.into_iter().collect(), answers, board)
}

fn masked(history: &History) -> History {
    let mut history = history.clone();
    let masks = plan(&history, 0);
    apply_masks(history.iter_mut(), &masks).unwrap();
    history
}

pub(super) fn result<'a>(history: &'a History, id: &str) -> &'a str {
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

fn input<'a>(history: &'a History, id: &str) -> &'a Value {
    history
        .iter()
        .flat_map(|message| message.tool_uses())
        .find_map(|(call, _, input)| (call == id).then_some(input))
        .unwrap()
}

/// A step forward: `done` completed, the next one started.
fn step(done: usize) -> Value {
    json!({"update": [{"id": done.to_string(), "status": "completed"},
                      {"id": (done + 1).to_string(), "status": "in_progress"}]})
}

#[test]
fn a_rejected_newest_board_call_leaves_the_last_accepted_board_whole() {
    // The newest board call names an item that is not there: refused.
    let rejected = json!({"update": [{"id": "99", "status": "completed"}]});
    let (history, answers, board) = task(&[rejected]);
    assert!(result(&history, "u0").starts_with("Update: no item '99'"));
    let history = masked(&history);
    assert_eq!(result(&history, "plan"), answers[0].1, "the last accepted board, as sent");
    assert!(result(&history, "plan").ends_with(&board.render()), "and it is the whole board");
    assert!(result(&history, "b1").starts_with("[bash `make`"), "masking did mask");
}

#[test]
fn a_rejected_whole_list_after_steps_leaves_the_newest_accepted_board_and_the_refusal() {
    // A whole list that drops six unfinished items: refused, and the newest call.
    let dropping =
        json!({"items": [{"id": "1", "text": "Step number 1 of the plan", "status": "completed"}]});
    let (history, answers, board) =
        task(&[json!({"update": [{"id": "1", "status": "in_progress"}]}), step(1), dropping]);
    let refusal = result(&history, "u2").to_owned();
    assert!(refusal.starts_with("The list leaves out items not completed"));
    let history = masked(&history);
    assert_eq!(result(&history, "u1"), answers[2].1, "the newest accepted answer, as sent");
    assert!(result(&history, "u1").ends_with(&board.render()));
    assert!(result(&history, "u1").contains("(1/8 completed)"));
    assert_eq!(result(&history, "plan"), SUPERSEDED_BOARD);
    assert_eq!(result(&history, "u0"), SUPERSEDED_BOARD);
    assert_eq!(result(&history, "u2"), refusal, "the refusal is left as sent");
}

#[test]
fn every_board_answer_before_the_newest_accepted_one_goes_to_one_line() {
    let added = json!({"update": [{"id": "9", "text": "One more"}]});
    let (history, answers, board) =
        task(&[json!({"update": [{"id": "1", "status": "in_progress"}]}), added, step(1)]);
    let history = masked(&history);
    for id in ["plan", "u0", "u1"] {
        assert_eq!(result(&history, id), SUPERSEDED_BOARD, "{id}");
    }
    assert_eq!(result(&history, "u2"), answers[3].1, "the newest answer, as sent");
    assert!(result(&history, "u2").ends_with(&board.render()));
    assert!(result(&history, "u2").contains("#9: One more"), "the whole board, added item too");
    // The superseded plan's bulky call went too; the newest call stays.
    assert!(input(&history, "plan")["elided"].as_str().unwrap().contains("8 items"));
    assert_eq!(input(&history, "u2"), &step(1));
    // Masking again finds nothing more to do.
    assert!(plan(&history, 0).is_empty());
}

#[test]
fn the_newest_accepted_board_is_the_newest_render_whatever_the_kind_of_update() {
    let kinds = [
        ("a status", json!({"update": [{"id": "1", "status": "completed"}]})),
        ("a rename", json!({"update": [{"id": "2", "text": "Step two, renamed"}]})),
        ("an added item", json!({"update": [{"id": "9", "text": "One more"}]})),
        (
            "a whole list without ids",
            json!({"items": (1..=8).map(|i| json!({"text": format!("Step {i}")})).collect::<Vec<_>>()}),
        ),
        ("replace", json!({"replace": true, "items": [{"id": "a", "text": "Another plan"}]})),
        ("an emptied board", json!({"replace": true, "items": []})),
    ];
    for (kind, update) in kinds {
        let (history, _, board) = task(&[update]);
        let history = masked(&history);
        assert!(result(&history, "u0").ends_with(&board.render()), "{kind}");
        assert_eq!(result(&history, "plan"), SUPERSEDED_BOARD, "{kind}");
    }
}
