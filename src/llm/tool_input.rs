//! A tool call's input as the model streamed it, and what keel does when it is not valid JSON.
//!
//! Both protocols stream a tool's arguments as fragments of one JSON text. Once the call is
//! complete the fragments are parsed here. The model sometimes sends arguments that are not a
//! JSON object; that must not fail the request, because the right answer is to tell the model
//! and let it try again. So such input is kept as `{"__invalid_json__": "<the raw text>"}`: a
//! valid object every protocol accepts when the history is sent back, which the agent recognises
//! with [`invalid_input`] and answers with [`invalid_input_message`] as a failed tool result.

use serde_json::{Map, Value};

/// The key under which input that is not a JSON object is kept, as the raw text.
pub const INVALID_INPUT_KEY: &str = "__invalid_json__";
/// How much of the raw text the error message for the model repeats.
const MAX_ECHO_CHARS: usize = 500;

/// Parses the joined fragments of one tool call. Nothing at all means no arguments (`{}`); a JSON
/// object is the input; anything else is kept under [`INVALID_INPUT_KEY`].
pub fn parse(raw: &str) -> Value {
    if raw.trim().is_empty() {
        return Value::Object(Map::new());
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

/// For input that was not a JSON object: the tool result to send back (without any `Error:`
/// prefix; the provider adds what its protocol needs).
pub fn invalid_input_message(input: &Value) -> Option<String> {
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
