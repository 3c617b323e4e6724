//! A tool call's input as the model streamed it, and what keel does when it is not valid JSON.
//!
//! Both protocols stream a tool's arguments as fragments of one JSON text. Once the call is
//! complete the fragments are parsed here. The model sometimes sends arguments that are not a
//! JSON object; that must not fail the request, because the right answer is to tell the model
//! and let it try again. So such input is kept as `{"__invalid_json__": "<the raw text>"}`: a
//! valid object every protocol accepts when the history is sent back, which the agent recognises
//! with [`invalid_input`] and answers with [`invalid_input_message`] as a failed tool result.
//! Input larger than [`MAX_TOOL_INPUT_BYTES`] is refused the same way, keeping only its size
//! (`{"__input_too_large__": N}`): a history holding a megabyte-sized call could not go on.

use serde_json::{Map, Value};

/// The key under which input that is not a JSON object is kept, as the raw text.
pub const INVALID_INPUT_KEY: &str = "__invalid_json__";
/// How much of the raw text the error message for the model repeats.
const MAX_ECHO_CHARS: usize = 500;
/// The key under which input larger than [`MAX_TOOL_INPUT_BYTES`] is kept: its size only.
pub const OVERSIZED_INPUT_KEY: &str = "__input_too_large__";
/// The most one tool call's input may hold, in bytes. Larger input is refused without being
/// kept, so that the history (sent again with every request, saved in the session log) stays
/// small enough to go on with.
pub const MAX_TOOL_INPUT_BYTES: usize = 1 << 20;

/// Parses the joined fragments of one tool call. Nothing at all means no arguments (`{}`); a JSON
/// object is the input; anything else is kept under [`INVALID_INPUT_KEY`].
pub fn parse(raw: &str) -> Value {
    if raw.trim().is_empty() {
        return Value::Object(Map::new());
    }
    if raw.len() > MAX_TOOL_INPUT_BYTES {
        let mut marker = Map::new();
        marker.insert(OVERSIZED_INPUT_KEY.to_owned(), Value::from(raw.len()));
        return Value::Object(marker);
    }
    match serde_json::from_str::<Value>(raw) {
        Ok(value @ Value::Object(_)) => value,
        _ => {
            let mut marker = Map::new();
            marker.insert(INVALID_INPUT_KEY.to_owned(), Value::String(raw.to_owned()));
            Value::Object(marker)
        }
    }
}

/// The raw text of input that was not a JSON object, if this is such input.
pub fn invalid_input(input: &Value) -> Option<&str> {
    let object = input.as_object()?;
    if object.len() != 1 {
        return None;
    }
    object.get(INVALID_INPUT_KEY)?.as_str()
}

/// The size of input refused as too large, if this is such input.
pub fn oversized_input(input: &Value) -> Option<u64> {
    let object = input.as_object()?;
    if object.len() != 1 {
        return None;
    }
    object.get(OVERSIZED_INPUT_KEY)?.as_u64()
}

/// For input that was not a JSON object: the tool result to send back (without any `Error:`
/// prefix; the provider adds what its protocol needs).
pub fn invalid_input_message(input: &Value) -> Option<String> {
    if let Some(size) = oversized_input(input) {
        return Some(format!(
            "the tool input was {size} bytes, more than the {} KiB one call may carry, so \
             nothing was run. Send large content in parts: write_file the first part, then add \
             the rest with further calls (edit_file, or bash with `cat >> FILE`).",
            MAX_TOOL_INPUT_BYTES >> 10
        ));
    }
    let raw = invalid_input(input)?;
    let problem = match serde_json::from_str::<Value>(raw) {
        Ok(_) => "it is valid JSON but not an object".to_owned(),
        Err(error) => format!("it is not valid JSON ({error})"),
    };
    let mut echo: String = raw.chars().take(MAX_ECHO_CHARS).collect();
    if raw.chars().nth(MAX_ECHO_CHARS).is_some() {
        echo.push('…');
    }
    Some(format!("the tool input must be a JSON object, but {problem}. The input was: {echo}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn empty_means_no_arguments() {
        assert_eq!(parse(""), json!({}));
        assert_eq!(parse("  \n"), json!({}));
    }

    #[test]
    fn objects_pass_through() {
        assert_eq!(parse(r#"{"command":"ls"}"#), json!({"command": "ls"}));
        assert_eq!(invalid_input(&json!({"command": "ls"})), None);
    }

    #[test]
    fn anything_else_is_kept_raw_and_explained() {
        for raw in [r#"{"command": "ls"#, "[1]", "\"text\""] {
            let input = parse(raw);
            assert_eq!(invalid_input(&input), Some(raw));
            let message = invalid_input_message(&input).unwrap();
            assert!(message.contains(raw), "{message}");
        }
        assert!(invalid_input_message(&json!({})).is_none());
    }
}
