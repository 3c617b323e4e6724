//! Property tests for the board: whatever sequence of updates the model sends — well-formed,
//! half-formed or garbage — validation never panics and the board's invariants always hold.

use keel::board::{Board, MAX_ITEMS, Status};
use proptest::prelude::*;
use serde_json::{Value, json};
use std::collections::HashSet;

/// Any JSON value, nested a few levels.
fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        ".{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::hash_map("[a-z]{1,8}", inner, 0..6)
                .prop_map(|map| Value::Object(map.into_iter().collect())),
        ]
    })
}

/// Entries that look like what a model sends, with frequent mistakes.
fn plausible_item() -> impl Strategy<Value = Value> {
    let id = prop_oneof![
        Just(Value::Null),
        "[1-9]".prop_map(Value::String),
        (1u32..30).prop_map(|n| json!(n)),
    ];
    let text = prop_oneof![
        Just(json!("")),
        Just(json!("   ")),
        "[a-z ]{1,20}".prop_map(Value::String),
        Just(json!(7))
    ];
    let status = prop_oneof![
        Just(json!("pending")),
        Just(json!("in_progress")),
        Just(json!("completed")),
        Just(json!(" IN_PROGRESS ")),
        Just(json!("done")),
        Just(Value::Null),
        Just(json!(3)),
    ];
    (id, text, status)
        .prop_map(|(id, text, status)| json!({"id": id, "text": text, "status": status}))
}

fn update() -> impl Strategy<Value = Value> {
    prop_oneof![
        3 => prop::collection::vec(plausible_item(), 0..25).prop_map(|items| json!({ "items": items })),
        1 => any_json(),
        1 => any_json().prop_map(|items| json!({ "items": items })),
    ]
}

fn assert_invariants(board: &Board) {
    assert!(board.total() <= MAX_ITEMS);
    let in_progress = board.items().iter().filter(|item| item.status == Status::InProgress).count();
    assert!(in_progress <= 1);
    let ids: HashSet<&str> = board.items().iter().map(|item| item.id.as_str()).collect();
    assert_eq!(ids.len(), board.total(), "ids are unique");
    assert!(board.items().iter().all(|item| !item.text.trim().is_empty()));
    assert!(board.done() <= board.total());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn invariants_hold_after_any_sequence_of_updates(updates in prop::collection::vec(update(), 1..12)) {
        let mut board = Board::default();
        for input in &updates {
            let before = board.clone();
            match board.update(input) {
                Ok(rendered) => prop_assert_eq!(rendered, board.render()),
                Err(err) => {
                    prop_assert_eq!(&board, &before, "a rejected update changes nothing");
                    prop_assert!(!err.to_string().is_empty());
                }
            }
            assert_invariants(&board);
        }
    }

    #[test]
    fn rendering_counts_what_it_shows(items in prop::collection::vec(plausible_item(), 0..20)) {
        let mut board = Board::default();
        if board.update(&json!({ "items": items })).is_ok() && !board.is_empty() {
            let rendered = board.render();
            let footer = format!("({}/{} completed)", board.done(), board.total());
            prop_assert!(rendered.ends_with(&footer));
            prop_assert_eq!(rendered.lines().filter(|line| line.starts_with('[')).count(), board.total());
        }
    }
}

#[test]
fn ten_thousand_items_are_refused_quickly() {
    let items: Vec<Value> = (0..10_000).map(|i| json!({"id": i, "text": "x"})).collect();
    let mut board = Board::default();
    assert_eq!(
        board.update(&json!({ "items": items })).unwrap_err().to_string(),
        "Max 20 todos allowed"
    );
    assert!(board.is_empty());
}
