//! Answers cut off at the output limit (`max_tokens`), and what the model is told about them.
//!
//! A cut answer is never taken for a finished one. A tool call cut mid-arguments is not run: its
//! result tells the model the answer was cut and to send the call again, shorter or in parts, so
//! the history stays valid (every call answered). A cut text answer is continued: keel asks the
//! model to go on where it stopped, up to [`MAX_CONTINUATIONS`] times in a row; a turn whose
//! answer is still cut after that ends as `max_tokens`, not as a success.

use crate::llm::{Completion, StopReason};
use crate::message::ContentBlock;

/// How many times in a row keel asks the model to go on with a cut text answer.
pub const MAX_CONTINUATIONS: u32 = 3;

/// What keel sends, as its own note, to have a cut text answer continued.
pub const CONTINUE: &str = "Your answer was cut off at the output limit. Go on from exactly \
where it stopped, without repeating anything.";

/// The result of a tool call cut off at the output limit of `max_tokens` tokens.
pub fn cut_call_message(max_tokens: u32) -> String {
    format!(
        "Not run: your answer was cut off at the output limit ({max_tokens} tokens) while you \
         were writing this call, so its arguments are incomplete. Send it again shorter, or \
         split the work into several smaller calls (write a large file in parts)."
    )
}

/// Why a turn ends when the answer is still cut after every continuation.
pub fn still_cut_message(max_tokens: u32) -> String {
    format!(
        "The answer was still cut off at the output limit ({max_tokens} tokens) after \
         {MAX_CONTINUATIONS} continuations. Raise --max-tokens (or max_tokens), or ask for a \
         shorter answer."
    )
}

/// The id of the tool call an answer cut at the output limit was writing when it stopped: its
/// last block, if that is a call. Calls before it are whole.
pub fn cut_call(completion: &Completion) -> Option<String> {
    if completion.stop_reason != StopReason::MaxTokens {
        return None;
    }
    match completion.content.last()? {
        ContentBlock::ToolUse { id, .. } => Some(id.clone()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::Usage;
    use serde_json::json;

    fn completion(stop_reason: StopReason, content: Vec<ContentBlock>) -> Completion {
        Completion { content, stop_reason, usage: Usage::default() }
    }

    fn call(id: &str) -> ContentBlock {
        ContentBlock::ToolUse { id: id.into(), name: "bash".into(), input: json!({}) }
    }

    #[test]
    fn only_the_last_block_of_a_cut_answer_is_a_cut_call() {
        let text = || ContentBlock::Text { text: "x".into() };
        let cut = completion(StopReason::MaxTokens, vec![call("a"), call("b")]);
        assert_eq!(cut_call(&cut).as_deref(), Some("b"));
        assert_eq!(cut_call(&completion(StopReason::MaxTokens, vec![call("a"), text()])), None);
        assert_eq!(cut_call(&completion(StopReason::ToolUse, vec![call("a")])), None);
        assert_eq!(cut_call(&completion(StopReason::MaxTokens, Vec::new())), None);
    }
}
