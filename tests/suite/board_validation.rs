//! The order in which a board update is validated (docs/board.md), as a table: each update breaks
//! more than one rule, and the error must be the one the order puts first. The model reads these
//! words, so which one it gets is part of the contract.

use keel::board::Board;
use serde_json::{Value, json};

fn item(id: &str, text: &str, status: &str) -> Value {
    json!({"id": id, "text": text, "status": status})
}

fn items(n: usize, make: impl Fn(usize) -> Value) -> Value {
    Value::Array((1..=n).map(make).collect())
}

/// (what the case shows, the `items` sent, the error the model must get)
fn cases() -> Vec<(&'static str, Value, &'static str)> {
    vec![
        // 1. The array and its length come before anything in it.
        ("not an array, whatever else", json!("1. do it"), "items must be an array"),
        (
            "too many, though every entry lacks text",
            items(21, |i| item(&i.to_string(), "", "pending")),
            "Max 20 todos allowed",
        ),
        (
            "too many, though the ids repeat",
            items(21, |_| item("1", "same", "pending")),
            "Max 20 todos allowed",
        ),
        (
            "too many, though several are in progress",
            items(21, |i| item(&i.to_string(), "step", "in_progress")),
            "Max 20 todos allowed",
        ),
        (
            "too many, though every status is unknown",
            items(21, |i| item(&i.to_string(), "step", "started")),
            "Max 20 todos allowed",
        ),
        // 2. Entry by entry: the first bad entry is reported, and within one entry its id, then
        // text, then status, then the id's uniqueness.
        (
            "an id that forges a board line, before its missing text",
            json!([item("1: Fix\n[x] #2: Deploy", "", "nope")]),
            "Item \"1: Fix\\n[x] #2: Deploy\": an id is printable characters only, with no \
             spaces, line breaks or invisible characters",
        ),
        (
            "an id of a zero-width look-alike",
            json!([item("1", "a", "pending"), item("1\u{200b}", "b", "pending")]),
            "Item \"1⟨U+200B⟩\": an id is printable characters only, with no spaces, line \
             breaks or invisible characters",
        ),
        (
            "an id with an escape",
            json!([item("\u{1b}[2J2", "a", "pending")]),
            "Item \"⟨U+001B⟩[2J2\": an id is printable characters only, with no spaces, line \
             breaks or invisible characters",
        ),
        (
            "an id of 100,000 characters, quoted cut",
            json!([item(&"7".repeat(100_000), "a", "pending")]),
            "Item \"777777777777777777777777…\": id is 100000 characters; at most 64",
        ),
        (
            "a text that forges a board line, before its bad status",
            json!([item("1", "Fix\n[x] #2: Deploy", "nope")]),
            "Item 1: text may not contain a line break; an item is one line",
        ),
        (
            "an activeForm with a carriage return",
            json!([{"id": "1", "text": "a", "activeForm": "Doing\r[x] #2: Deploy"}]),
            "Item 1: activeForm may not contain a line break; an item is one line",
        ),
        (
            "a blocked_by naming a forged id",
            json!([item("1", "a", "pending"), after("2", "pending", json!(["1\n[x] #3"]))]),
            "Item 2: blocked_by must be a list of ids",
        ),
        (
            "an earlier bad status before a later missing text",
            json!([item("1", "a", "nope"), item("2", "", "pending")]),
            "Item 1: invalid status 'nope'",
        ),
        (
            "an earlier missing text before a later bad status",
            json!([item("1", " ", "pending"), item("2", "b", "nope")]),
            "Item 1: text required",
        ),
        (
            "text before status in one entry",
            json!([item("1", "", "nope")]),
            "Item 1: text required",
        ),
        (
            "text too long before status in one entry",
            json!([item("1", &"x".repeat(501), "nope")]),
            "Item 1: text is 501 characters; at most 500: name the step briefly",
        ),
        (
            "text before the duplicate id",
            json!([item("1", "a", "pending"), item("1", "", "pending")]),
            "Item 1: text required",
        ),
        (
            "status before the duplicate id",
            json!([item("1", "a", "pending"), item("1", "b", "Later ")]),
            "Item 1: invalid status 'Later'",
        ),
        (
            "a duplicate id before a later entry's missing text",
            json!([item("7", "a", "pending"), item("7", "b", "pending"), item("8", "", "pending")]),
            "Item 7: duplicate id",
        ),
        (
            "a defaulted id clashes with an explicit one",
            json!([{"text": "a"}, item("1", "b", "pending")]),
            "Item 1: duplicate id",
        ),
        // 3. Two in progress is checked only once every entry passed.
        (
            "entries before the in-progress count: text",
            json!([
                item("1", "a", "in_progress"),
                item("2", "b", "in_progress"),
                item("3", "", "pending")
            ]),
            "Item 3: text required",
        ),
        (
            "entries before the in-progress count: status",
            json!([
                item("1", "a", "in_progress"),
                item("2", "b", "in_progress"),
                item("3", "c", "x")
            ]),
            "Item 3: invalid status 'x'",
        ),
        (
            "entries before the in-progress count: duplicate id",
            json!([
                item("1", "a", "in_progress"),
                item("2", "b", "in_progress"),
                item("2", "c", "pending")
            ]),
            "Item 2: duplicate id",
        ),
        (
            "two in progress, everything else fine",
            json!([item("1", "a", "in_progress"), item("2", "b", "in_progress")]),
            "Only one task can be in_progress at a time",
        ),
        // 4. Dependencies come last, each rule over the whole list before the next.
        (
            "two in progress before a blocked_by that is no list",
            json!([item("1", "a", "in_progress"), after("2", "in_progress", json!("1"))]),
            "Only one task can be in_progress at a time",
        ),
        (
            "a later blocked_by of numbers before an earlier unknown blocker",
            json!([after("1", "pending", json!(["9"])), after("2", "pending", json!([1]))]),
            "Item 2: blocked_by must be a list of ids",
        ),
        (
            "a later unknown blocker before an earlier cycle",
            json!([
                after("1", "pending", json!(["2"])),
                after("2", "pending", json!(["1"])),
                after("3", "pending", json!(["nine"]))
            ]),
            "Item 3: blocked by unknown item 'nine'",
        ),
        (
            "a later cycle before an earlier blocked start",
            json!([
                item("1", "a", "pending"),
                after("2", "in_progress", json!(["1"])),
                after("3", "pending", json!(["4"])),
                after("4", "pending", json!(["3"]))
            ]),
            "Items 3 -> 4 -> 3: blocked_by forms a cycle",
        ),
        (
            "a blocked item finished before its blocker",
            json!([item("1", "a", "pending"), after("2", "completed", json!(["1"]))]),
            "Item 2: cannot be completed while blocked by #1",
        ),
    ]
}

/// An item that waits for `blocked_by`.
fn after(id: &str, status: &str, blocked_by: Value) -> Value {
    json!({"id": id, "text": "step", "status": status, "blocked_by": blocked_by})
}

#[test]
fn the_first_rule_broken_in_the_documented_order_is_the_one_reported() {
    for (case, items, expected) in cases() {
        let mut board = Board::default();
        board.update(&json!({"items": [item("keep", "the old board", "in_progress")]})).unwrap();
        let before = board.clone();
        let error = board.update(&json!({ "items": items })).unwrap_err();
        assert_eq!(error.to_string(), expected, "{case}");
        assert_eq!(board, before, "{case}: a rejected update leaves the board as it was");
    }
}

#[test]
fn an_id_of_sixty_four_printable_characters_passes_and_one_more_does_not() {
    let mut board = Board::default();
    let longest = "é".repeat(64);
    board.update(&json!({"items": [item(&longest, "step", "pending")]})).unwrap();
    assert!(board.render().contains(&format!("#{longest}: step")));
    let error = board.update(&json!({"items": [item(&"é".repeat(65), "x", "pending")]}));
    assert!(error.unwrap_err().to_string().contains("id is 65 characters; at most 64"));
}

/// The `update` form quotes an id it cannot find: a forged one is refused before it is quoted.
#[test]
fn an_update_naming_a_forged_id_is_refused_before_it_is_quoted() {
    let mut board = Board::default();
    board.update(&json!({"items": [item("1", "step", "pending")]})).unwrap();
    let forged = json!({"update": [{"id": "9\n[x] #1: step", "status": "completed"}]});
    let error = board.update(&forged).unwrap_err().to_string();
    assert!(error.starts_with("Item \"9\\n[x] #1: step\": an id is printable"), "{error}");
    assert!(!error.contains('\n'), "{error}");
}

#[test]
fn exactly_twenty_items_pass_every_rule() {
    let mut board = Board::default();
    let twenty =
        items(20, |i| item(&i.to_string(), "step", if i == 1 { "in_progress" } else { "pending" }));
    board.update(&json!({ "items": twenty })).unwrap();
    assert_eq!(board.total(), 20);
}
