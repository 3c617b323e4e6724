//! What the Markdown renderer draws, line by line.

use super::*;

fn plain(text: &str, width: usize) -> Vec<String> {
    render(text, width, "").iter().map(|line| line.to_string()).collect()
}

#[test]
fn paragraphs_are_separated_and_soft_breaks_join() {
    assert_eq!(plain("one\ntwo\n\nthree", 40), ["one two", "", "three"]);
}

#[test]
fn lists_nest_and_number() {
    let text = "- a\n- b\n  - c\n\n1. x\n2. y";
    assert_eq!(plain(text, 40), ["• a", "• b", "  ◦ c", "", "1. x", "2. y"]);
}

#[test]
fn list_items_wrap_under_their_text() {
    assert_eq!(plain("- alpha beta gamma", 12), ["• alpha beta", "  gamma"]);
}

#[test]
fn code_blocks_keep_spaces_and_get_a_gutter() {
    let text = "```rust\nfn main() {\n    x();\n}\n```";
    assert_eq!(plain(text, 40), ["▏ fn main() {", "▏     x();", "▏ }"]);
}

#[test]
fn inline_styles_are_applied() {
    let lines = render("a **b** *c* `d`", 40, "");
    let styles: Vec<_> = lines[0].spans.iter().map(|span| span.style).collect();
    assert!(styles.contains(&Style::new().add_modifier(Modifier::BOLD)));
    assert!(styles.contains(&Style::new().add_modifier(Modifier::ITALIC)));
    assert!(styles.contains(&theme::INLINE_CODE));
}

#[test]
fn headings_quotes_and_rules() {
    assert_eq!(
        plain("# Title\n\n> quoted\n\n---", 10),
        ["Title", "", "│ quoted", "", "──────────"]
    );
}

#[test]
fn tables_are_drawn_as_aligned_columns() {
    let text = "| Name | Age |\n| --- | ---: |\n| Alice | 30 |\n| Bob | 7 |\n\nafter";
    assert_eq!(
        plain(text, 40),
        ["Name  │ Age", "──────┼────", "Alice │  30", "Bob   │   7", "", "after"]
    );
    let lines = render(text, 40, "");
    assert!(lines[0].spans.iter().any(|span| span.style.add_modifier.contains(Modifier::BOLD)));
}

#[test]
fn margin_is_added_to_every_line() {
    assert_eq!(render("x", 10, "  ")[0].to_string(), "  x".to_owned());
}

#[test]
fn escape_sequences_do_not_survive() {
    assert_eq!(plain("\u{1b}[31mred", 10), ["red"]);
}
