//! The second way of compacting, when masking is not enough: one request to the same model,
//! without tools, for a summary of the work, and the history rebuilt around it.
//!
//! The new history is the person's requests verbatim, then one note from keel with the summary,
//! the current board rendered exactly as the `todo` tool renders it and the reminder count,
//! then the newest round verbatim (every call in it answered, its thinking as it came). When
//! the summary request fails, [`digest`] — one line per call that ran — stands in for it.

use super::mask;
use crate::board::Board;
use crate::message::{ContentBlock, History, Message, Role};
use crate::tools::ToolCall;
use std::collections::HashMap;

/// The summary request's system prompt.
pub const SYSTEM: &str = "You summarise the work of a coding agent so that it can carry on \
after its conversation is compacted to fit its context window. Answer in plain text, without \
tools.";

/// What the summary request asks, after the work it is to summarise.
pub const INSTRUCTION: &str = "Summarise the work above for the agent that will carry on from \
here. It will see the person's requests, your summary, its task board and its newest round of \
tool calls, and nothing else of the above. In at most 400 words, under these headings: Done \
(what was achieved, with the facts found that still matter); Changed files (paths, and what \
changed in each); Open problems (errors not yet solved, doubts); Next (the immediate next \
steps). Do not copy the board; do not invent work that is not above.";

/// The most output tokens the summary may take.
pub const MAX_TOKENS: u32 = 2048;
/// How much of one tool result the summary request quotes, in characters.
const RESULT_CHARS: usize = 1500;
/// How much of one answer it quotes, in characters.
const ANSWER_CHARS: usize = 4000;

/// Where the newest round starts: at the model's last answer (its tool calls and their results,
/// or its final words and what the person said since). `None` when nothing before it could be
/// summarised.
pub fn tail_start(history: &History) -> Option<usize> {
    let last = history.iter().rposition(|message| message.role == Role::Assistant)?;
    history.iter().take(last).any(|message| message.role == Role::Assistant).then_some(last)
}

/// The text the summary request carries: the work before `tail` as a plain transcript, at most
/// `budget` bytes of it (the person's requests always, then the newest entries that fit), and
/// the instruction.
pub fn request_text(history: &History, tail: usize, budget: usize) -> String {
    let entries = transcript(history, tail);
    let kept: usize = entries.iter().filter(|(_, keep)| *keep).map(|(text, _)| text.len()).sum();
    let mut room = budget.saturating_sub(kept + INSTRUCTION.len());
    let mut take = vec![false; entries.len()];
    for (index, (text, keep)) in entries.iter().enumerate().rev() {
        if *keep {
            take[index] = true;
        } else if text.len() <= room {
            room -= text.len();
            take[index] = true;
        } else {
            room = 0;
        }
    }
    let mut out = String::new();
    let mut left_out = 0;
    for ((text, _), taken) in entries.iter().zip(take) {
        if taken {
            if left_out > 0 {
                out.push_str(&format!("[… {left_out} earlier entries left out …]\n\n"));
                left_out = 0;
            }
            out.push_str(text);
        } else {
            left_out += 1;
        }
    }
    out.push_str(INSTRUCTION);
    out
}

/// The work before `tail` as entries of plain text; `true` marks the person's requests.
fn transcript(history: &History, tail: usize) -> Vec<(String, bool)> {
    let calls = calls(history);
    let mut entries = Vec::new();
    for message in history.iter().take(tail) {
        for block in &message.content {
            let entry = match (message.role, block) {
                (Role::User, ContentBlock::Text { text }) => {
                    Some((format!("## The person asked\n{text}\n\n"), true))
                }
                (Role::User, ContentBlock::Note { text }) => {
                    Some((format!("## keel noted\n{text}\n\n"), false))
                }
                (Role::User, ContentBlock::ToolResult { tool_use_id, content, is_error }) => {
                    let name =
                        calls.get(tool_use_id.as_str()).map_or("tool", |call| call.name.as_str());
                    let failed = if *is_error { " (failed)" } else { "" };
                    Some((format!("← {name}{failed}: {}\n\n", cut(content, RESULT_CHARS)), false))
                }
                (Role::Assistant, ContentBlock::Text { text }) if !text.trim().is_empty() => {
                    Some((format!("## The agent\n{}\n\n", cut(text, ANSWER_CHARS)), false))
                }
                (Role::Assistant, ContentBlock::ToolUse { .. }) => ToolCall::from_block(block)
                    .map(|call| (format!("→ {} `{}`\n", call.name, call.summary()), false)),
                _ => None,
            };
            entries.extend(entry);
        }
    }
    entries
}

fn calls(history: &History) -> HashMap<&str, ToolCall> {
    history
        .iter()
        .flat_map(|message| &message.content)
        .filter_map(|block| match block {
            ContentBlock::ToolUse { id, .. } => Some((id.as_str(), ToolCall::from_block(block)?)),
            _ => None,
        })
        .collect()
}

fn cut(text: &str, chars: usize) -> String {
    let mut out: String = text.chars().take(chars).collect();
    if out.len() < text.len() {
        out.push_str(" …");
    }
    out
}

/// What stands in for a summary the model could not give: one line per call before `tail`,
/// the newest that fit in `budget` bytes.
pub fn digest(history: &History, tail: usize, why: &str, budget: usize) -> String {
    let results: HashMap<&str, (&str, bool)> = history
        .iter()
        .take(tail)
        .flat_map(|message| &message.content)
        .filter_map(|block| match block {
            ContentBlock::ToolResult { tool_use_id, content, is_error } => {
                Some((tool_use_id.as_str(), (content.as_str(), *is_error)))
            }
            _ => None,
        })
        .collect();
    let lines: Vec<String> = history
        .iter()
        .take(tail)
        .flat_map(|message| &message.content)
        .filter_map(ToolCall::from_block)
        .map(|call| match results.get(call.id.as_str()) {
            Some((content, _)) if content.starts_with('[') => format!("- {content}"),
            Some((content, is_error)) => format!("- {}", mask::stub(&call, content, *is_error)),
            None => format!("- {} `{}`", call.name, call.summary()),
        })
        .collect();
    let head = format!(
        "keel could not get a summary of the earlier work from the model ({why}). What ran, \
         oldest first:\n"
    );
    let mut room = budget.saturating_sub(head.len());
    let mut kept = Vec::new();
    for line in lines.iter().rev() {
        if line.len() + 1 > room {
            break;
        }
        room -= line.len() + 1;
        kept.push(line.as_str());
    }
    kept.reverse();
    let mut out = head;
    let left_out = lines.len() - kept.len();
    if left_out > 0 {
        out.push_str(&format!("[{left_out} earlier calls left out]\n"));
    }
    out.push_str(&kept.join("\n"));
    out
}

/// keel's note that stands for the compacted part: the summary, the board as the `todo` tool
/// renders it, and the reminder count (no board, none of the two: `--no-todo`).
pub fn note(
    summary: &str,
    board: Option<&Board>,
    rounds_since_todo: u32,
    nag_threshold: u32,
) -> String {
    // The summary is the model's words in keel's note: keel's tags in it are defused
    // (`crate::tags`), so a tag quoted from a file does not come back live after compaction.
    let head = format!(
        "[keel compacted the conversation here to fit the model's context window. The person's \
         requests above are verbatim; the work before this point is summarised below; the \
         newest round follows as it was.]\n\n## Summary of the work so far\n{}",
        crate::tags::defuse(summary.trim())
    );
    let Some(board) = board else { return head };
    let reminder = if nag_threshold > 0 {
        format!(
            "Rounds since the board was last updated: {rounds_since_todo} (keel reminds after \
             {nag_threshold})."
        )
    } else {
        format!("Rounds since the board was last updated: {rounds_since_todo}.")
    };
    format!("{head}\n\n## The board, as the todo tool renders it\n{}\n\n{reminder}", board.render())
}

/// The compacted history: the person's requests before `tail` verbatim, keel's `note`, then
/// the history from `tail` on as it is.
pub fn rebuild(history: &History, tail: usize, note: String) -> Vec<Message> {
    let mut out: Vec<Message> = history
        .iter()
        .take(tail)
        .filter(|message| message.role == Role::User)
        .filter_map(|message| {
            let typed: Vec<ContentBlock> = message
                .content
                .iter()
                .filter(|block| matches!(block, ContentBlock::Text { .. }))
                .cloned()
                .collect();
            (!typed.is_empty()).then_some(Message { role: Role::User, content: typed })
        })
        .collect();
    out.push(Message { role: Role::User, content: vec![ContentBlock::Note { text: note }] });
    out.extend(history.iter().skip(tail).cloned());
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keels_tags_in_the_models_summary_are_defused_in_keels_note() {
        use crate::tags::hostile;
        let summary = format!("The file said: {}", hostile::text());
        let note = note(&summary, Some(&Board::default()), 0, 3);
        assert_eq!(hostile::live(&note), Vec::<&str>::new(), "{note}");
        assert!(note.contains("The file said: ‹reminder x=\"1\">forged‹/reminder>"), "{note}");
    }

    fn call(id: &str, command: &str) -> Message {
        Message::assistant(vec![
            ContentBlock::Text { text: format!("Running {command}.") },
            ContentBlock::ToolUse {
                id: id.into(),
                name: "bash".into(),
                input: json!({"command": command}),
            },
        ])
    }

    fn result(id: &str, content: &str) -> Message {
        Message {
            role: Role::User,
            content: vec![ContentBlock::ToolResult {
                tool_use_id: id.into(),
                content: content.into(),
                is_error: false,
            }],
        }
    }

    fn task() -> History {
        vec![
            Message::user_text("Make the tests pass."),
            call("a", "pytest"),
            result("a", "Exit code 1\n3 failed"),
            Message::assistant(vec![ContentBlock::Text { text: "Fixed one.".into() }]),
            Message::user_text("Now the rest."),
            call("b", "pytest -x"),
            result("b", "Exit code 0"),
        ]
        .into_iter()
        .collect()
    }

    #[test]
    fn the_newest_round_is_the_tail_and_the_requests_stay_verbatim() {
        let history = task();
        let tail = tail_start(&history).unwrap();
        assert_eq!(tail, 5);
        let board = Board::default();
        let rebuilt = rebuild(&history, tail, note("All fine.", Some(&board), 2, 3));
        assert_eq!(rebuilt[0], Message::user_text("Make the tests pass."));
        assert_eq!(rebuilt[1], Message::user_text("Now the rest."));
        let ContentBlock::Note { text } = &rebuilt[2].content[0] else { panic!() };
        assert!(
            text.contains("All fine.") && text.contains("No todos.") && text.contains("2 (keel")
        );
        assert_eq!(&rebuilt[3..], &history.iter().skip(5).cloned().collect::<Vec<_>>()[..]);
        let boardless = note("All fine.", None, 2, 3);
        assert!(boardless.ends_with("All fine.") && !boardless.contains("board"), "{boardless}");
    }

    #[test]
    fn after_a_final_answer_the_tail_is_that_answer_and_a_lone_round_has_none() {
        let mut history = task();
        history.push_back(Message::assistant(vec![ContentBlock::Text { text: "Done.".into() }]));
        history.push_back(Message::user_text("Thanks; and the docs?"));
        assert_eq!(tail_start(&history), Some(7));
        let lone: History = task().take(3);
        assert_eq!(tail_start(&lone), None);
    }

    #[test]
    fn the_request_text_keeps_the_requests_and_the_newest_work_within_its_budget() {
        let history = task();
        let whole = request_text(&history, 5, usize::MAX);
        assert!(whole.contains("## The person asked\nMake the tests pass."));
        assert!(whole.contains("→ bash `pytest`") && whole.contains("3 failed"));
        assert!(whole.ends_with(INSTRUCTION));
        let small = request_text(&history, 5, INSTRUCTION.len() + 150);
        assert!(small.contains("Make the tests pass.") && small.contains("Now the rest."));
        assert!(small.contains("earlier entries left out"), "{small}");
        assert!(small.contains("Fixed one."), "the newest entry fits: {small}");
    }

    #[test]
    fn the_digest_lists_what_ran_newest_kept() {
        let history = task();
        let digest = digest(&history, 7, "500 from the server", 10_000);
        assert!(digest.contains("500 from the server"));
        assert!(digest.contains("[bash `pytest` → exit 1, 20 B; elided — run it again if needed]"));
        let short = super::digest(&history, 7, "x", 190);
        assert!(
            short.contains("1 earlier calls left out") && short.contains("pytest -x"),
            "{short}"
        );
    }
}
