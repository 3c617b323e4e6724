//! The composer's own tests: pastes, recall, and the counts its tokens show.

use super::*;

#[test]
fn small_pastes_are_inserted_as_they_are() {
    let mut composer = Composer::new();
    composer.paste("line one\r\nline two");
    assert_eq!(composer.text(), "line one\nline two");
    assert_eq!(composer.shown(), composer.text());
}

#[test]
fn big_pastes_become_a_token_and_are_sent_whole() {
    let mut composer = Composer::new();
    let big = "x".repeat(INLINE_PASTE_MAX_BYTES + 1);
    composer.paste(&format!("{big}\nend"));
    assert!(composer.shown().starts_with("[paste #1: 2 lines"));
    assert_eq!(composer.take(), format!("{big}\nend"));
    assert!(composer.is_empty());
}

#[test]
fn recall_walks_back_and_forth() {
    let mut composer = Composer::new();
    composer.paste("first");
    composer.take();
    composer.paste("second");
    composer.take();
    assert!(composer.older());
    assert_eq!(composer.text(), "second");
    assert!(composer.older());
    assert_eq!(composer.text(), "first");
    assert!(composer.newer());
    assert_eq!(composer.text(), "second");
    assert!(composer.newer());
    assert!(composer.is_empty());
}

#[test]
fn thousands_are_grouped() {
    assert_eq!(group_thousands(98_304), "98,304");
    assert_eq!(group_thousands(999), "999");
    assert_eq!(group_thousands(1_000_000), "1,000,000");
}
