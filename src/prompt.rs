//! keel's own system prompt: the rules every request carries, and the board's paragraph only
//! when the board is on — a model without the `todo` tool is not told to use it, and the
//! paragraph is counted as what the board costs (benches/README.md, "What the board costs").
//! Also the words of plan mode that a model (the demo's scripted one too) is to recognise: the
//! tags around its note and the prompt that starts an approved plan.
//!
//! The prompt files are wrapped for people to read; what is sent has each paragraph on one line
//! (`unwrapped`): a newline inside a paragraph tells the model nothing, and costs two bytes in
//! JSON where a space costs one, in every request.

/// The rules for every task.
const BASE: &str = include_str!("../assets/system_prompt.md");
/// How to keep the board: the plan first, then changes beside a step's own call.
const BOARD: &str = include_str!("../assets/system_prompt_board.md");
/// A child agent's rules (`task`): one step, and a report at the end.
const CHILD: &str = include_str!("../assets/system_prompt_child.md");

/// keel's system prompt for a child agent (the project's instructions go after it, as after the
/// parent's).
pub fn child_system_prompt() -> String {
    unwrapped(CHILD)
}

/// keel's system prompt, with the board's paragraph after the first one when `board` is on.
pub fn system_prompt(board: bool) -> String {
    let base = unwrapped(BASE);
    if !board {
        return base;
    }
    let board = unwrapped(BOARD);
    match base.split_once("\n\n") {
        Some((first, rest)) => format!("{first}\n\n{board}\n\n{rest}"),
        None => format!("{base}\n\n{board}"),
    }
}

/// `text` with each paragraph on one line: the lines of a paragraph joined by a space, the
/// paragraphs still apart by a blank line, the ending trimmed.
fn unwrapped(text: &str) -> String {
    let paragraphs: Vec<String> =
        text.trim_end().split("\n\n").map(|paragraph| paragraph.replace('\n', " ")).collect();
    paragraphs.join("\n\n")
}

/// The prompt that starts the work once the person approves the plan; the board follows it.
pub const PLAN_APPROVED: &str =
    "The plan is approved. Carry it out step by step, keeping the board up to date:";

/// Whether `text` is plan mode's note (`agent::plan_mode::note`).
pub fn is_plan_note(text: &str) -> bool {
    use crate::tags::Tag;
    text.starts_with(&Tag::PlanMode.open()) && text.ends_with(&Tag::PlanMode.close())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_board_paragraph_comes_only_with_the_board() {
        let with = system_prompt(true);
        let without = system_prompt(false);
        assert!(with.contains("`todo`") && with.contains("`update`"), "{with}");
        assert!(with.contains("Give a step whose success a command can show a `check`."), "{with}");
        assert!(!without.contains("todo"), "{without}");
        assert!(with.starts_with("You are keel") && without.starts_with("You are keel"));
        // The board's paragraph is the second; the rules after it are the same either way.
        let paragraphs: Vec<&str> = with.split("\n\n").collect();
        assert!(paragraphs[1].starts_with("For a task of more than two steps"));
        assert_eq!(with.replace(&format!("{}\n\n", paragraphs[1]), ""), without);
    }

    #[test]
    fn each_paragraph_goes_on_one_line() {
        for prompt in [system_prompt(true), system_prompt(false), child_system_prompt()] {
            assert!(!prompt.ends_with('\n'), "{prompt:?}");
            for paragraph in prompt.split("\n\n") {
                assert!(!paragraph.is_empty() && !paragraph.contains('\n'), "{prompt:?}");
                assert!(!paragraph.contains("  "), "a line's end was doubled: {prompt:?}");
            }
        }
        assert_eq!(unwrapped("one\ntwo\n\nthree\n"), "one two\n\nthree");
    }
}
