//! Checks on the board: the field in both forms of update, its validation, what the model reads,
//! and what keeps a check from going quietly.

use super::*;
use serde_json::json;

fn board(items: Value) -> Board {
    let mut board = Board::default();
    board.update(&json!({ "items": items })).expect("a valid board");
    board
}

#[test]
fn a_check_is_set_in_either_form_and_null_removes_it() {
    let mut board = board(json!([
        {"id": "1", "text": "Parse", "status": "in_progress", "check": " cargo test -q parser "},
        {"id": "2", "text": "Ship", "status": "pending"}
    ]));
    assert_eq!(board.get("1").unwrap().check.as_deref(), Some("cargo test -q parser"));
    board.update(&json!({"update": [{"id": "2", "check": "test -s out.csv"}]})).unwrap();
    assert_eq!(board.get("2").unwrap().check.as_deref(), Some("test -s out.csv"));
    board.update(&json!({"update": [{"id": "2", "check": null}]})).unwrap();
    assert_eq!(board.get("2").unwrap().check, None);
}

#[test]
fn a_whole_list_without_the_field_keeps_the_check_its_item_had() {
    let mut board = board(json!([{"id": "1", "text": "Parse", "check": "true"}]));
    board
        .update(&json!({"items": [{"id": "1", "text": "Parse", "status": "in_progress"}]}))
        .unwrap();
    assert_eq!(board.get("1").unwrap().check.as_deref(), Some("true"));
}

#[test]
fn the_rendered_board_marks_a_check_and_a_pass_briefly() {
    let mut board = board(json!([
        {"id": "1", "text": "Parse", "status": "completed", "check": "true"},
        {"id": "2", "text": "Ship", "check": "test -s out.csv"},
        {"id": "3", "text": "Tell"}
    ]));
    assert!(!board.get("1").unwrap().check_passed, "only keel marks a pass");
    board.mark_check_passed("1");
    assert_eq!(
        board.render(),
        "[x] #1: Parse  (check passed)\n[ ] #2: Ship  (check)\n[ ] #3: Tell\n\n(1/3 completed)"
    );
    let plan = board.render_with_checks();
    assert!(plan.contains("[ ] #2: Ship  (check)\n      check: test -s out.csv\n[ ] #3"), "{plan}");
}

#[test]
fn the_model_cannot_forge_a_pass_and_a_changed_or_reopened_check_loses_it() {
    let mut board =
        board(json!([{"id": "1", "text": "Parse", "status": "completed", "check": "a"}]));
    board.mark_check_passed("1");
    board.update(&json!({"update": [{"id": "1", "text": "Parse it"}]})).unwrap();
    assert!(board.get("1").unwrap().check_passed, "the same check, still completed");
    board.update(&json!({"update": [{"id": "1", "check": "b"}]})).unwrap();
    assert!(!board.get("1").unwrap().check_passed, "a new check has not passed");
    let mut forged = Board::default();
    forged
        .update(&json!({"items": [{"id": "1", "text": "x", "status": "completed",
            "check": "a", "check_passed": true}]}))
        .unwrap();
    assert!(!forged.get("1").unwrap().check_passed);
}

#[test]
fn a_check_is_one_printable_line_of_at_most_a_thousand_characters() {
    let refused = |check: Value| {
        let mut board = board(json!([{"id": "1", "text": "Parse", "check": "true"}]));
        let before = board.clone();
        let err = board.update(&json!({"update": [{"id": "1", "check": check}]})).unwrap_err();
        assert_eq!(board, before, "a refused update leaves the board as it was");
        err.to_string()
    };
    assert_eq!(
        refused(json!("a\nb")),
        "Item 1: check may not contain a line break; an item is one line"
    );
    assert_eq!(
        refused(json!("x".repeat(MAX_CHECK_CHARS + 1))),
        "Item 1: check is 1001 characters; at most 1000: one command"
    );
    assert_eq!(refused(json!("  ")), "Item 1: check is empty; send null to remove it");
    assert_eq!(
        refused(json!("true\u{200b}")),
        "Item 1: check is printable characters only, with no invisible characters"
    );
    assert_eq!(
        refused(json!(["true"])),
        "Item 1: check must be a command (a string), or null to remove it"
    );
}

#[test]
fn a_check_cannot_go_in_the_update_that_completes_its_item() {
    let mut board =
        board(json!([{"id": "1", "text": "Parse", "status": "in_progress", "check": "t"}]));
    let before = board.clone();
    let err = board
        .update(&json!({"update": [{"id": "1", "status": "completed", "check": null}]}))
        .unwrap_err();
    assert_eq!(err, BoardError::CheckDroppedOnCompletion("1".into()));
    assert_eq!(board, before);
    board.update(&json!({"update": [{"id": "1", "check": null}]})).unwrap();
    board.update(&json!({"update": [{"id": "1", "status": "completed"}]})).unwrap();
}

#[test]
fn the_person_sets_and_removes_a_check_through_the_same_rules() {
    let board = board(json!([{"id": "1", "text": "Parse", "status": "completed", "check": "t"}]));
    let set = BoardEdit::parse("check #1 cargo test -q").unwrap();
    assert_eq!(set, BoardEdit::Check { id: "1".into(), command: Some("cargo test -q".into()) });
    let (after, said) = set.apply(&board).unwrap();
    assert_eq!(said, "set #1's check to `cargo test -q`");
    assert_eq!(after.get("1").unwrap().check.as_deref(), Some("cargo test -q"));
    let (after, said) = BoardEdit::parse("check 1").unwrap().apply(&after).unwrap();
    assert_eq!(
        (said.as_str(), after.get("1").unwrap().check.clone()),
        ("removed #1's check", None)
    );
    let long = format!("check 1 {}", "x".repeat(MAX_CHECK_CHARS + 1));
    let err = BoardEdit::parse(&long).unwrap().apply(&board).unwrap_err();
    assert!(err.to_string().contains("at most 1000"), "{err}");
}

#[test]
fn a_failed_check_reads_as_its_exit_the_command_and_the_tail_of_its_output() {
    let failed = BoardError::CheckFailed {
        id: "3".into(),
        exit: "exit 1".into(),
        command: "cargo test -q parser".into(),
        output: "test parser ... FAILED\n".into(),
    };
    assert_eq!(
        failed.to_string(),
        "Item 3: its check failed (exit 1): cargo test -q parser\ntest parser ... FAILED"
    );
}
