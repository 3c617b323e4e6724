//! stub: what a file-changing tool call would change, for the approval prompt.
use super::Tools;
use serde_json::Value;

pub fn preview(_tools: &Tools, _name: &str, _input: &Value) -> Option<String> {
    None
}
