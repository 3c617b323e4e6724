//! The board's two forms of update (docs/board.md): `update` changes items by id and goes
//! through exactly the whole list's validation, in its order, leaving the board as it was when
//! refused; a whole list that leaves out an unfinished item is refused unless it says
//! `"replace": true`; and what the model reads back after every valid update, whatever its
//! kind: the whole board, as the pane shows it.

use keel::board::{Board, Status};
use serde_json::{Value, json};

fn item(id: &str, text: &str, status: &str) -> Value {
    json!({"id": id, "text": text, "status": status})
}

/// A board of `1` in progress, `2` pending, `3` pending blocked by `2`.
fn three() -> Board {
    let mut board = Board::default();
    board
        .update(&json!({"items": [
            item("1", "Read the code", "in_progress"),
            item("2", "Write the parser", "pending"),
            {"id": "3", "text": "Test the parser", "status": "pending", "blocked_by": ["2"]}
        ]}))
        .unwrap();
    board
}

fn update(entries: Value) -> Value {
    json!({ "update": entries })
}

#[test]
fn an_update_changes_only_the_named_fields_of_the_named_items() {
    let mut board = three();
    board
        .update(&update(json!([
            {"id": "1", "status": "completed"},
            {"id": "2", "status": "in_progress", "activeForm": "Writing the parser"}
        ])))
        .unwrap();
    let statuses: Vec<Status> = board.items().iter().map(|item| item.status).collect();
    assert_eq!(statuses, [Status::Completed, Status::InProgress, Status::Pending]);
    assert_eq!(board.items()[1].text, "Write the parser", "text kept");
    assert_eq!(board.items()[1].active_form.as_deref(), Some("Writing the parser"));
    assert_eq!(board.items()[2].blocked_by, ["2"], "blockers kept");
    // Numbers are ids as text, as in the whole list; text and blockers change too.
    board.update(&update(json!([{"id": 3, "text": "Test it well", "blocked_by": []}]))).unwrap();
    assert_eq!(board.items()[2].text, "Test it well");
    assert!(board.items()[2].blocked_by.is_empty());
}

#[test]
fn an_unknown_id_with_a_text_adds_an_item_at_the_end_and_without_one_is_refused() {
    let mut board = three();
    board.update(&update(json!([{"id": "4", "text": "Write the docs"}]))).unwrap();
    assert_eq!(board.total(), 4);
    assert_eq!(board.items()[3].text, "Write the docs");
    assert_eq!(board.items()[3].status, Status::Pending, "status defaults as in a whole list");
    let before = board.clone();
    let err = board.update(&update(json!([{"id": "9", "status": "completed"}]))).unwrap_err();
    assert_eq!(err.to_string(), "Update: no item '9' on the board; give a text to add it");
    assert_eq!(board, before);
}

#[test]
fn the_shape_of_an_update_is_checked_before_anything_changes() {
    let cases = [
        (json!({"update": "1 done"}), "update must be an array"),
        (json!({"update": [{"id": "1"}, {"status": "completed"}]}), "Update 2: id required"),
        (json!({"update": [{"id": "  "}]}), "Update 1: id required"),
        (json!({"update": ["1"]}), "Update 1: id required"),
        (
            json!({"update": [], "items": []}),
            "send either items (the whole list) or update (changes by id), not both",
        ),
    ];
    for (input, expected) in cases {
        let mut board = three();
        let before = board.clone();
        assert_eq!(board.update(&input).unwrap_err().to_string(), expected, "{input}");
        assert_eq!(board, before, "{input}: the board stays as it was");
    }
}

/// Each rule of the whole list's validation, met through an update, in the documented order:
/// (what the case shows, the update's entries, the error).
fn rules() -> Vec<(&'static str, Value, &'static str)> {
    let adds = |n: usize| -> Value {
        (10..10 + n).map(|i| json!({"id": i.to_string(), "text": "more"})).collect()
    };
    vec![
        ("1. at most 20 items, before any entry's own rule", adds(18), "Max 20 todos allowed"),
        ("2. text required", json!([{"id": "2", "text": "  "}]), "Item 2: text required"),
        (
            "2. text at most 500 characters",
            json!([{"id": "2", "text": "x".repeat(501)}]),
            "Item 2: text is 501 characters; at most 500: name the step briefly",
        ),
        (
            "2. activeForm at most 500 characters",
            json!([{"id": "1", "activeForm": "x".repeat(501)}]),
            "Item 1: text is 501 characters; at most 500: name the step briefly",
        ),
        (
            "2. status, quoted as sent",
            json!([{"id": "1", "status": " Done "}]),
            "Item 1: invalid status 'Done'",
        ),
        (
            "2. the first bad item in board order, not update order",
            json!([{"id": "3", "status": "x"}, {"id": "1", "text": ""}]),
            "Item 1: text required",
        ),
        (
            "3. one item in progress",
            json!([{"id": "2", "status": "in_progress"}]),
            "Only one task can be in_progress at a time",
        ),
        (
            "3. in progress before dependencies",
            json!([{"id": "2", "status": "in_progress", "blocked_by": "1"}]),
            "Only one task can be in_progress at a time",
        ),
        (
            "4. blocked_by a list of ids",
            json!([{"id": "2", "blocked_by": [1]}]),
            "Item 2: blocked_by must be a list of ids",
        ),
        (
            "4. blockers exist",
            json!([{"id": "2", "blocked_by": ["9"]}]),
            "Item 2: blocked by unknown item '9'",
        ),
        (
            "4. no cycle",
            json!([{"id": "2", "blocked_by": ["3"]}]),
            "Items 2 -> 3 -> 2: blocked_by forms a cycle",
        ),
        (
            "4. nothing starts while blocked",
            json!([{"id": "1", "status": "completed"}, {"id": "3", "status": "in_progress"}]),
            "Item 3: cannot be in_progress while blocked by #2",
        ),
        (
            "4. nothing finishes while blocked",
            json!([{"id": "3", "status": "completed"}]),
            "Item 3: cannot be completed while blocked by #2",
        ),
    ]
}

#[test]
fn an_update_meets_every_rule_of_the_whole_list_in_its_order_and_changes_nothing_when_refused() {
    for (case, entries, expected) in rules() {
        let mut board = three();
        let before = board.clone();
        let err = board.update(&update(entries)).unwrap_err();
        assert_eq!(err.to_string(), expected, "{case}");
        assert_eq!(board, before, "{case}: a refused update leaves the board as it was");
    }
}

#[test]
fn the_same_rules_give_the_same_words_as_the_whole_list() {
    // The merged list, sent whole, is refused with exactly the update's error.
    let mut by_update = three();
    let mut whole = three();
    let partial = by_update.update(&update(json!([{"id": "3", "status": "completed"}])));
    let list = json!({"items": [
        item("1", "Read the code", "in_progress"),
        item("2", "Write the parser", "pending"),
        {"id": "3", "text": "Test the parser", "status": "completed", "blocked_by": ["2"]}
    ]});
    assert_eq!(partial.unwrap_err(), whole.update(&list).unwrap_err());
}

#[test]
fn a_whole_list_that_drops_unfinished_items_is_refused_naming_them() {
    let mut board = three();
    let before = board.clone();
    let err =
        board.update(&json!({"items": [item("1", "Read the code", "completed")]})).unwrap_err();
    assert_eq!(
        err.to_string(),
        "The list leaves out items not completed: #2 \"Write the parser\", #3 \"Test the parser\". \
         Nothing was changed. Send them too (as completed if they are done), or send \
         \"replace\": true with the list to start a new plan."
    );
    assert_eq!(board, before);
    // One left out is named alone.
    let err = board
        .update(&json!({"items": [
            item("1", "Read the code", "completed"),
            item("2", "Write the parser", "in_progress")
        ]}))
        .unwrap_err();
    assert!(err.to_string().starts_with("The list leaves out an item not completed: #3 "), "{err}");
    assert_eq!(board, before);
}

#[test]
fn completed_items_may_go_and_replace_starts_a_new_plan_on_purpose() {
    let mut board = three();
    board.update(&update(json!([{"id": "1", "status": "completed"}]))).unwrap();
    // #1 is done: a list without it loses nothing.
    board
        .update(&json!({"items": [
            item("2", "Write the parser", "in_progress"),
            {"id": "3", "text": "Test the parser", "status": "pending", "blocked_by": ["2"]}
        ]}))
        .unwrap();
    assert_eq!(board.total(), 2);
    board
        .update(&json!({"replace": true, "items": [item("a", "Another plan", "pending")]}))
        .unwrap();
    assert_eq!(board.items().len(), 1);
    // `replace` must be true itself, not merely present.
    let before = board.clone();
    assert!(board.update(&json!({"replace": "yes", "items": []})).is_err());
    assert_eq!(board, before);
    assert_eq!(board.update(&json!({"replace": true, "items": []})).unwrap(), "No todos.");
}

/// Every kind of valid update, from the board of `three()`: (the kind, the update, the whole
/// board the model must read back, written out as docs/board.md's "Rendering" draws it).
fn every_kind() -> Vec<(&'static str, Value, &'static str)> {
    vec![
        (
            "update of a status",
            update(json!([
                {"id": "1", "status": "completed"},
                {"id": "2", "status": "in_progress", "activeForm": "Writing the parser"}
            ])),
            "[x] #1: Read the code\n[>] #2: Write the parser  <- Writing the parser\n\
             [ ] #3: Test the parser  (blocked by #2)\n\n(1/3 completed)",
        ),
        (
            "a rename",
            update(json!([{"id": "3", "text": "Test the parser well"}])),
            "[>] #1: Read the code\n[ ] #2: Write the parser\n\
             [ ] #3: Test the parser well  (blocked by #2)\n\n(0/3 completed)",
        ),
        (
            "an added item",
            update(json!([{"id": "4", "text": "Write the docs"}])),
            "[>] #1: Read the code\n[ ] #2: Write the parser\n\
             [ ] #3: Test the parser  (blocked by #2)\n[ ] #4: Write the docs\n\n(0/4 completed)",
        ),
        (
            "a whole list with ids",
            json!({"items": [
                item("1", "Read the code", "completed"),
                item("2", "Write the parser", "completed"),
                {"id": "3", "text": "Test the parser", "status": "in_progress", "blocked_by": ["2"]}
            ]}),
            "[x] #1: Read the code\n[x] #2: Write the parser\n[>] #3: Test the parser\n\n\
             (2/3 completed)",
        ),
        (
            "a whole list without ids",
            json!({"items": [
                {"text": "Read the code", "status": "completed"},
                {"text": "Write the parser", "status": "in_progress"},
                {"text": "Test the parser"}
            ]}),
            "[x] #1: Read the code\n[>] #2: Write the parser\n[ ] #3: Test the parser\n\n\
             (1/3 completed)",
        ),
        (
            "replace",
            json!({"replace": true, "items": [item("a", "Another plan", "pending")]}),
            "[ ] #a: Another plan\n\n(0/1 completed)",
        ),
        ("an emptied board", json!({"replace": true, "items": []}), "No todos."),
        (
            "an update that changes nothing",
            update(json!([{"id": "1"}])),
            "[>] #1: Read the code\n[ ] #2: Write the parser\n\
             [ ] #3: Test the parser  (blocked by #2)\n\n(0/3 completed)",
        ),
    ]
}

#[test]
fn every_valid_update_is_answered_with_the_whole_board() {
    // The first plan, with its ids and without: the board, every item.
    let mut board = Board::default();
    let first = board
        .update(
            &json!({"items": [item("1", "Read", "in_progress"), item("2", "Write", "pending")]}),
        )
        .unwrap();
    assert_eq!(first, "[>] #1: Read\n[ ] #2: Write\n\n(0/2 completed)");
    let mut board = Board::default();
    let first = board
        .update(&json!({"items": [{"text": "Read", "status": "in_progress"}, {"text": "Write"}]}))
        .unwrap();
    assert_eq!(first, "[>] #1: Read\n[ ] #2: Write\n\n(0/2 completed)");
    // Every later kind, from a board of three items: the whole board as it now stands.
    for (kind, input, expected) in every_kind() {
        let mut board = three();
        let answer = board.update(&input).unwrap();
        assert_eq!(answer, expected, "{kind}");
        assert_eq!(answer, board.render(), "{kind}: the answer is the pane's text");
    }
}

#[test]
fn a_plan_moved_on_item_by_item_shows_every_step_in_every_answer() {
    // The failure the board is there to prevent: after the first update, steps 4–10 must still
    // be in front of the model.
    let mut board = Board::default();
    let items: Vec<Value> = (1..=10)
        .map(|k| {
            item(
                &k.to_string(),
                &format!("Step {k}"),
                if k == 1 { "in_progress" } else { "pending" },
            )
        })
        .collect();
    board.update(&json!({ "items": items })).unwrap();
    for k in 1..=10 {
        let mut entries = vec![json!({"id": k.to_string(), "status": "completed"})];
        if k < 10 {
            entries.push(json!({"id": (k + 1).to_string(), "status": "in_progress"}));
        }
        let answer = board.update(&update(json!(entries))).unwrap();
        for step in 1..=10 {
            let marker = match step {
                s if s <= k => "[x]",
                s if s == k + 1 => "[>]",
                _ => "[ ]",
            };
            assert!(answer.contains(&format!("{marker} #{step}: Step {step}\n")), "{k}: {answer}");
        }
        assert!(answer.ends_with(&format!("\n\n({k}/10 completed)")), "{answer}");
    }
}

#[test]
fn an_update_cannot_grow_the_board_past_its_cap_whatever_it_sends() {
    let entries: Vec<Value> =
        (0..10_000).map(|i| json!({"id": format!("n{i}"), "text": "x"})).collect();
    let mut board = three();
    let before = board.clone();
    assert_eq!(
        board.update(&update(json!(entries))).unwrap_err().to_string(),
        "Max 20 todos allowed"
    );
    assert_eq!(board, before);
}

#[test]
fn the_conversation_names_an_update_by_its_changes() {
    use keel::board::summarize_update;
    assert_eq!(
        summarize_update(&update(json!([{"id": "1", "status": "completed"}]))),
        "#1 completed"
    );
    assert_eq!(
        summarize_update(&update(json!([
            {"id": "3", "status": "completed"},
            {"id": "4", "status": "in_progress"}
        ]))),
        "#3 completed, #4 in_progress"
    );
    assert_eq!(
        summarize_update(&update(json!([{"id": "5", "text": "Ship it"}]))),
        "#5 text",
        "an item added or renamed"
    );
    assert_eq!(summarize_update(&update(json!("x"))), "malformed update");
}
