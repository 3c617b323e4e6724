//! A server's answer to a tool call, made into what the model and the person read.
//!
//! Text is kept as it is; an image, audio or a binary resource becomes a short note (keel's tool
//! results carry text only); a text resource is its text; structured content is JSON text; the
//! server's `isError` makes the result an error. The model's copy is capped as `bash`'s output is,
//! the person's is kept whole up to the display limit. The answer is read as JSON rather than
//! through the SDK's types, so a server's unknown content kinds are named, not dropped.

use crate::tools::ToolOutcome;
use crate::tools::output::{CappedBuffer, DISPLAY_OUTPUT_LIMIT, MODEL_OUTPUT_LIMIT};
use serde_json::Value;

/// A result with no content at all.
const EMPTY: &str = "(the tool returned nothing)";

/// The outcome of a call the server answered with `result` (a `CallToolResult` as JSON).
pub fn outcome(result: &Value) -> ToolOutcome {
    let content = result.get("content").and_then(Value::as_array);
    let mut parts: Vec<String> = content.into_iter().flatten().map(content_text).collect();
    // The protocol asks servers to send structured content as text too (the filesystem server
    // sends its own text beside it): it is added only when no text says it already.
    let has_text = content.into_iter().flatten().any(|block| block["type"] == "text");
    if let Some(structured) = result.get("structuredContent").filter(|value| !value.is_null())
        && !has_text
    {
        parts.push(serde_json::to_string_pretty(structured).unwrap_or_default());
    }
    let is_error = result.get("isError").and_then(Value::as_bool).unwrap_or(false);
    let text = if parts.is_empty() { EMPTY.to_owned() } else { parts.join("\n") };
    capped(text, is_error)
}

/// `text` as a tool outcome: capped for the model, whole (up to the display limit) for the person.
pub fn capped(text: String, is_error: bool) -> ToolOutcome {
    let mut buffer = CappedBuffer::new(DISPLAY_OUTPUT_LIMIT);
    buffer.push(text.as_bytes());
    ToolOutcome {
        for_model: buffer.render(MODEL_OUTPUT_LIMIT),
        for_display: buffer.render(DISPLAY_OUTPUT_LIMIT),
        is_error,
        ..ToolOutcome::default()
    }
}

/// One content block as text.
fn content_text(block: &Value) -> String {
    let field = |name: &str| block.get(name).and_then(Value::as_str).unwrap_or_default();
    match field("type") {
        "text" => field("text").to_owned(),
        kind @ ("image" | "audio") => {
            let bytes = field("data").len() / 4 * 3;
            format!("[{kind}: {}, about {bytes} bytes, not shown]", field("mimeType"))
        }
        "resource" => {
            let resource = block.get("resource").unwrap_or(&Value::Null);
            let text = resource.get("text").and_then(Value::as_str);
            let uri = resource.get("uri").and_then(Value::as_str).unwrap_or_default();
            text.map_or_else(|| format!("[resource {uri}: binary, not shown]"), str::to_owned)
        }
        "resource_link" => format!("[resource link: {}]", field("uri")),
        other => format!("[{other} content, not shown]"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn texts_images_structure_and_errors_are_read() {
        let answer = outcome(&json!({
            "content": [
                {"type": "image", "data": "AAAA", "mimeType": "image/png"},
                {"type": "resource", "resource": {"uri": "file:///a", "text": "inside"}},
                {"type": "mystery"}
            ],
            "structuredContent": {"n": 1},
        }));
        assert_eq!(
            answer.for_model,
            "[image: image/png, about 3 bytes, not shown]\ninside\n[mystery content, not \
             shown]\n{\n  \"n\": 1\n}"
        );
        assert!(!answer.is_error);
        let error = outcome(&json!({"content": [{"type": "text", "text": "{\"n\":1}"}],
            "structuredContent": {"n": 1}, "isError": true}));
        assert!(error.is_error);
        assert_eq!(error.for_model, "{\"n\":1}");
        assert_eq!(outcome(&json!({})).for_model, EMPTY);
    }

    #[test]
    fn the_model_reads_a_capped_copy_and_the_person_the_whole() {
        let answer = outcome(&json!({"content": [{"type": "text", "text": "x".repeat(100_000)}]}));
        assert!(answer.for_model.len() < MODEL_OUTPUT_LIMIT + 100);
        assert!(answer.for_model.contains("bytes omitted"));
        assert_eq!(answer.for_display.len(), 100_000);
    }
}
