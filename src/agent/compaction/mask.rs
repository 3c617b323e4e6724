//! Observation masking, the cheap compaction: tool results older than the newest rounds become
//! one-line stubs that say what ran and how to get it back, board answers a later update
//! superseded become one line, and the bulky inputs of old calls (a superseded board, a whole
//! file written) are elided the same way.
//!
//! Only results and inputs change; every call keeps its one result, so the history stays valid
//! for both protocols. An assistant turn that carries thinking is left exactly as it came (the
//! Anthropic API checks it), and the current board is never elided: every accepted board answer
//! is the whole board, so the newest one stays as it is and the older ones go to one line.

use crate::agent::journal::compaction::Mask;
use crate::message::{ContentBlock, History, Role};
use crate::tools::search::tally_of;
use crate::tools::{Masking, ToolCall, registry};
use serde_json::{Map, Value, json};
use std::collections::HashMap;

/// The rounds kept whole when masking alone is enough.
pub const KEEP_ROUNDS: usize = 3;
/// Results and input fields this short are left as they are: a stub would save nothing.
const MIN_MASKED_BYTES: usize = 256;
/// How much of a command or path a stub quotes, in characters.
const STUB_QUOTE_CHARS: usize = 80;
/// Bytes in a kilobyte, as stubs count them.
const KILOBYTE: f64 = 1000.0;

/// The masks that elide what can go from `history`, keeping the newest `keep_rounds` rounds
/// whole (0: only the newest board answer is kept).
pub fn plan(history: &History, keep_rounds: usize) -> Vec<Mask> {
    let calls = calls_of(history);
    let current_board = current_board(history, &calls);
    let mut masks = Vec::new();
    let recent = recent_start(history, keep_rounds);
    for message in history.iter().take(recent) {
        for block in &message.content {
            match block {
                ContentBlock::ToolResult { tool_use_id, content, is_error } => {
                    let Some(call) = calls.get(tool_use_id.as_str()) else { continue };
                    if current_board == Some(tool_use_id.as_str()) || is_stub(content) {
                        continue;
                    }
                    // A refused update changed no board, so no later one superseded it.
                    if call.is_board() && *is_error {
                        continue;
                    }
                    let stub = if call.is_board() {
                        SUPERSEDED_BOARD.to_owned()
                    } else {
                        stub(&call.call, content, *is_error)
                    };
                    if stub.len() < content.len()
                        && (content.len() > MIN_MASKED_BYTES || call.is_board())
                    {
                        masks.push(Mask::Result { id: tool_use_id.clone(), content: stub });
                    }
                }
                ContentBlock::ToolUse { id, .. } => {
                    let Some(call) = calls.get(id.as_str()) else { continue };
                    if call.thinking || current_board == Some(id.as_str()) {
                        continue;
                    }
                    if let Some(input) = elided_input(&call.call) {
                        masks.push(Mask::Input { id: id.clone(), input });
                    }
                }
                _ => {}
            }
        }
    }
    masks
}

/// What a superseded board answer becomes: the line a round's earlier board answers get too.
pub const SUPERSEDED_BOARD: &str = crate::board::SUPERSEDED;
/// What marks a stub: every one ends so.
const STUB_END: &str = "elided]";
/// What an elided string in a call's input becomes, after its start.
const ELIDED_INPUT: &str = "[elided]";

/// What ends a stub that says how to get the result back.
const STUB_AGAIN_END: &str = " if needed]";

fn is_stub(content: &str) -> bool {
    content == SUPERSEDED_BOARD
        || content.starts_with('[')
            && (content.ends_with(STUB_END) || content.ends_with(STUB_AGAIN_END))
}

/// One call as masking sees it.
struct Call {
    call: ToolCall,
    /// What masking keeps of its result, as its tool says; `None` for a name no tool has.
    masking: Option<Masking>,
    /// Its assistant turn carries thinking, which must be sent back unchanged.
    thinking: bool,
}

impl Call {
    /// Whether it updated the board (its answer is a board, or an error that changed none).
    fn is_board(&self) -> bool {
        self.masking == Some(Masking::Board)
    }
}

fn calls_of(history: &History) -> HashMap<&str, Call> {
    let mut calls = HashMap::new();
    for message in history.iter().filter(|message| message.role == Role::Assistant) {
        let thinking = message.content.iter().any(|block| {
            matches!(block, ContentBlock::Thinking { .. } | ContentBlock::RedactedThinking { .. })
        });
        for block in &message.content {
            if let (ContentBlock::ToolUse { id, .. }, Some(call)) =
                (block, ToolCall::from_block(block))
            {
                let masking = masking_of(&call);
                calls.insert(id.as_str(), Call { call, masking, thinking });
            }
        }
    }
    calls
}

/// The id of the newest accepted board update: its answer is the current board, whole. Rejected
/// updates changed nothing and are passed over.
fn current_board<'a>(history: &'a History, calls: &HashMap<&str, Call>) -> Option<&'a str> {
    history.iter().rev().flat_map(|message| message.content.iter().rev()).find_map(|block| {
        match block {
            ContentBlock::ToolResult { tool_use_id, is_error: false, .. }
                if calls.get(tool_use_id.as_str()).is_some_and(Call::is_board) =>
            {
                Some(tool_use_id.as_str())
            }
            _ => None,
        }
    })
}

/// Where the newest `keep` rounds (answers that asked for tools) begin; the history's length
/// when `keep` is 0.
fn recent_start(history: &History, keep: usize) -> usize {
    if keep == 0 {
        return history.len();
    }
    let rounds = history.iter().enumerate().rev().filter(|(_, message)| {
        message.role == Role::Assistant && message.tool_uses().next().is_some()
    });
    rounds.take(keep).last().map_or(0, |(index, _)| index)
}

/// What masking keeps of a call's result, as its tool says.
fn masking_of(call: &ToolCall) -> Option<Masking> {
    registry::describe(&call.name).map(|tool| tool.masking())
}

/// The one line a result becomes: what ran, how it ended, how big it was, how to get it back.
pub fn stub(call: &ToolCall, content: &str, is_error: bool) -> String {
    let quoted = quote(&call.summary());
    let size = size(content.len());
    let masking = masking_of(call);
    let ending = match masking {
        Some(Masking::Command) => command_ending(content, is_error),
        _ if is_error => "failed".to_owned(),
        Some(Masking::Search) => tally_of(content).unwrap_or_default(),
        _ => String::new(),
    };
    let again = match masking {
        Some(Masking::Command) => "run it again",
        Some(Masking::Read) => "read it again",
        Some(Masking::Search) => "search again",
        _ => "call it again",
    };
    let outcome = if ending.is_empty() { size } else { format!("{ending}, {size}") };
    format!("[{} `{quoted}` → {outcome}; elided — {again} if needed]", call.name)
}

/// How a command ended, from the headline of its result (`Exit code 1`, …).
fn command_ending(content: &str, is_error: bool) -> String {
    let first = content.lines().next().unwrap_or_default();
    if let Some(code) = first.strip_prefix("Exit code ").and_then(|rest| rest.split(' ').next()) {
        return format!("exit {code}");
    }
    if first.starts_with("Killed by signal") {
        return "killed".to_owned();
    }
    if first.starts_with("Command timed out") {
        return "timed out".to_owned();
    }
    if is_error { "failed".to_owned() } else { "ok".to_owned() }
}

fn quote(text: &str) -> String {
    let mut quoted: String = text.chars().take(STUB_QUOTE_CHARS).collect();
    if quoted.len() < text.len() {
        quoted.push('…');
    }
    quoted.replace('`', "'")
}

/// `812 B`, `14.2 KB`.
pub fn size(bytes: usize) -> String {
    if (bytes as f64) < KILOBYTE {
        format!("{bytes} B")
    } else {
        format!("{:.1} KB", bytes as f64 / KILOBYTE)
    }
}

/// The input of an old call with its bulky parts elided; `None` when nothing in it is bulky.
fn elided_input(call: &ToolCall) -> Option<Value> {
    let fields = call.input.as_object()?;
    if masking_of(call) == Some(Masking::Board) {
        let items = fields.get("items").and_then(Value::as_array).map_or(0, Vec::len);
        let size = call.input.to_string().len();
        return (size > MIN_MASKED_BYTES).then(
            || json!({ "elided": format!("a board of {items} items a later update replaced") }),
        );
    }
    let mut changed = false;
    let mut out = Map::new();
    for (key, value) in fields {
        match value.as_str() {
            Some(text) if text.len() > MIN_MASKED_BYTES && key != "path" => {
                let start: String = text.chars().take(STUB_QUOTE_CHARS).collect();
                out.insert(
                    key.clone(),
                    Value::String(format!("{start}… {ELIDED_INPUT} ({})", size(text.len()))),
                );
                changed = true;
            }
            _ => {
                out.insert(key.clone(), value.clone());
            }
        }
    }
    changed.then_some(Value::Object(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::compaction::fixtures::board_input;
    use crate::agent::journal::compaction::apply_masks;

    use crate::message::Message;

    fn round(id: &str, name: &str, input: Value, result: &str) -> [Message; 2] {
        [
            Message::assistant(vec![ContentBlock::ToolUse {
                id: id.into(),
                name: name.into(),
                input,
            }]),
            Message {
                role: Role::User,
                content: vec![ContentBlock::ToolResult {
                    tool_use_id: id.into(),
                    content: result.into(),
                    is_error: result.starts_with("Exit code 1"),
                }],
            },
        ]
    }

    fn board(done: usize) -> Value {
        board_input(8, done)
    }

    fn task() -> History {
        let big = format!("Exit code 1\n{}", "failing test output\n".repeat(700));
        let mut history = vec![Message::user_text("Fix the tests.")];
        let rendered = |done| {
            format!("{}\n({done}/8 completed)", "[ ] #n: Step number n of the plan\n".repeat(8))
        };
        history.extend(round("t1", "todo", board(0), &rendered(0)));
        history.extend(round("t2", "bash", json!({"command": "pytest"}), &big));
        history.extend(round("t3", "todo", board(1), &rendered(1)));
        history.extend(round("t4", "read_file", json!({"path": "a.py"}), &"x".repeat(5000)));
        history.extend(round("t5", "bash", json!({"command": "ls"}), "Exit code 0\na.py"));
        history.extend(round("t6", "bash", json!({"command": "pytest -x"}), &big));
        history.into_iter().collect()
    }

    #[test]
    fn old_results_become_stubs_that_say_what_ran_and_the_newest_rounds_stay() {
        let mut history = task();
        let masks = plan(&history, KEEP_ROUNDS);
        apply_masks(history.iter_mut(), &masks).unwrap();
        let pytest = super::board_tests::result(&history, "t2");
        assert_eq!(pytest, "[bash `pytest` → exit 1, 14.0 KB; elided — run it again if needed]");
        assert_eq!(super::board_tests::result(&history, "t1"), SUPERSEDED_BOARD);
        // The current board, and the newest three rounds, whole.
        assert!(super::board_tests::result(&history, "t3").contains("(1/8 completed)"));
        assert_eq!(super::board_tests::result(&history, "t4").len(), 5000);
        assert!(super::board_tests::result(&history, "t6").len() > 10_000);
        // The superseded board's input went too; the current one's stays.
        let inputs: Vec<&Value> = history
            .iter()
            .flat_map(|message| message.tool_uses().map(|(_, _, input)| input))
            .collect();
        assert!(inputs[0]["elided"].as_str().unwrap().contains("8 items"));
        assert_eq!(inputs[2]["items"].as_array().unwrap().len(), 8);
        // A second plan finds nothing more to do at the same depth.
        assert!(plan(&history, KEEP_ROUNDS).is_empty());
    }

    #[test]
    fn keeping_fewer_rounds_masks_more_and_never_the_current_board() {
        let history = task();
        let ids: Vec<String> = plan(&history, 0).iter().map(|mask| mask.id().to_owned()).collect();
        assert!(ids.contains(&"t6".to_owned()) && ids.contains(&"t4".to_owned()));
        assert!(!ids.contains(&"t3".to_owned()), "{ids:?}");
        assert!(!ids.contains(&"t5".to_owned()), "a short result stays: {ids:?}");
    }

    #[test]
    fn an_old_search_becomes_a_stub_that_says_what_it_found() {
        let lines: String = (1..=40).map(|n| format!("src/a.rs:{n}:let needle = {n};\n")).collect();
        let found = format!("{lines}[40 matches in 1 file]");
        let mut history: Vec<Message> = vec![Message::user_text("Find the needles.")];
        history.extend(round("g1", "grep", json!({"pattern": "needle", "path": "src"}), &found));
        history.extend(round("g2", "glob", json!({"pattern": "**/*.rs"}), &found));
        let mut history: History = history.into_iter().collect();
        let masks = plan(&history, 0);
        apply_masks(history.iter_mut(), &masks).unwrap();
        assert_eq!(
            super::board_tests::result(&history, "g1"),
            "[grep `needle src` → 40 matches in 1 file, 1.2 KB; elided — search again if needed]"
        );
        assert!(
            super::board_tests::result(&history, "g2")
                .starts_with("[glob `**/*.rs` → 40 matches in 1 file")
        );
        assert!(is_stub(super::board_tests::result(&history, "g1")), "a stub is not masked again");
    }

    #[test]
    fn turns_with_thinking_keep_their_inputs_exactly() {
        let content = "y".repeat(3000);
        let mut history: Vec<Message> = vec![Message::user_text("go")];
        history.push(Message::assistant(vec![
            ContentBlock::Thinking { thinking: "plan".into(), signature: Some("sig".into()) },
            ContentBlock::ToolUse {
                id: "w1".into(),
                name: "write_file".into(),
                input: json!({"path": "big.txt", "content": content}),
            },
        ]));
        history.push(Message {
            role: Role::User,
            content: vec![ContentBlock::ToolResult {
                tool_use_id: "w1".into(),
                content: "Wrote big.txt".into(),
                is_error: false,
            }],
        });
        history.extend(round(
            "w2",
            "write_file",
            json!({"path": "b.txt", "content": content}),
            "ok",
        ));
        let history: History = history.into_iter().collect();
        let masks = plan(&history, 0);
        assert_eq!(masks.len(), 1, "{masks:?}");
        let Mask::Input { id, input } = &masks[0] else { panic!("{masks:?}") };
        assert_eq!(id, "w2");
        assert_eq!(input["path"], "b.txt");
        assert!(input["content"].as_str().unwrap().ends_with("[elided] (3.0 KB)"));
    }
}

#[cfg(test)]
mod board_tests;
