//! What people who use other coding agents daily reach for in their first hour: diffs to read
//! after the fact, undo told to the model, the slash menu, `/model`, `@path` mentions,
//! `!command`, plan approval in words, the composer's Home and End, the mouse left to select
//! text, and a project's `.mcp.json` — each tested for real, and each new way in tried as an
//! attacker would.

mod composer_keys;
mod diffs;
mod e2e;
mod mcp_json;
mod mentions;
mod model_switch;
mod persons_command;
mod undo_told;

use crate::support::agent::Wire;
use serde_json::Value;

/// The text of the request's newest message, the person's: its text blocks joined (Anthropic),
/// or its content (OpenAI-compatible).
pub fn last_user_text(body: &Value, wire: Wire) -> String {
    let last = body["messages"].as_array().unwrap().last().unwrap();
    assert_eq!(last["role"], "user", "{last}");
    match wire {
        Wire::Anthropic => last["content"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|block| block["type"] == "text")
            .map(|block| block["text"].as_str().unwrap().to_owned())
            .collect::<Vec<_>>()
            .join("\n"),
        Wire::OpenAi => last["content"].as_str().unwrap().to_owned(),
    }
}
