//! A server's own answer that the prompt is too long for the model, in every phrasing keel knows,
//! and the numbers it states: the limit (the model's context window) and the prompt's size.
//!
//! Servers word it differently and put the numbers in different places: Anthropic (`prompt is
//! too long: N tokens > M maximum`), OpenAI (`context_length_exceeded`, "This model's maximum
//! context length is M tokens"), vLLM and DeepSeek (OpenAI's words), llama.cpp and Ollama
//! (`exceed_context_size_error` with `n_prompt_tokens` and `n_ctx`), LiteLLM (its
//! `ContextWindowExceededError` around the upstream's words), and a few more. Whatever the
//! status — llama.cpp has said it with a 500 — such an answer is never retried as it is: the
//! agent makes the request smaller first. A number that does not parse is simply not stated.

use serde_json::Value;

/// What a "too long" refusal said.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Overflow {
    /// The context window the server stated, in tokens.
    pub limit: Option<u64>,
    /// The refused prompt's size as the server counted it, in tokens.
    pub prompt: Option<u64>,
}

/// One way of saying it: words that give it away (lowercase), and the words each number follows.
struct Phrasing {
    marker: &'static str,
    limit_after: &'static [&'static str],
    prompt_after: &'static [&'static str],
}

/// Every phrasing keel recognises, the more specific first.
const PHRASINGS: &[Phrasing] = &[
    // Anthropic: "prompt is too long: 209303 tokens > 200000 maximum".
    Phrasing {
        marker: "prompt is too long",
        limit_after: &["tokens > "],
        prompt_after: &["prompt is too long: "],
    },
    // Anthropic: "input length and `max_tokens` exceed context limit: 197451 + 8192 > 200000".
    Phrasing {
        marker: "exceed context limit",
        limit_after: &[" > "],
        prompt_after: &["exceed context limit: "],
    },
    // OpenAI, vLLM, DeepSeek, OpenRouter ("this endpoint's maximum context length is").
    Phrasing {
        marker: "maximum context length is",
        limit_after: &["maximum context length is "],
        prompt_after: &["resulted in ", "tokens (", "your request has ", "you requested "],
    },
    // OpenAI's newer models: "Input tokens exceed the configured limit of 272000 tokens".
    Phrasing {
        marker: "input tokens exceed the configured limit",
        limit_after: &["configured limit of "],
        prompt_after: &["resulted in "],
    },
    // llama.cpp (and Ollama's runner): "request (4390 tokens) exceeds the available context
    // size (4096 tokens)", or the same without numbers (they are in `n_ctx` then).
    Phrasing {
        marker: "exceeds the available context size",
        limit_after: &["context size ("],
        prompt_after: &["request ("],
    },
    Phrasing { marker: "context size has been exceeded", limit_after: &[], prompt_after: &[] },
    // Ollama.
    Phrasing {
        marker: "prompt is longer than the context length",
        limit_after: &[],
        prompt_after: &[],
    },
    Phrasing {
        marker: "input length exceeds the context length",
        limit_after: &[],
        prompt_after: &[],
    },
    // SGLang: "The input (N tokens) is longer than the model's context length (M tokens)".
    Phrasing {
        marker: "is longer than the model's context length",
        limit_after: &["context length ("],
        prompt_after: &["input ("],
    },
    // Gemini through OpenAI-compatible proxies.
    Phrasing {
        marker: "exceeds the maximum number of tokens allowed",
        limit_after: &["tokens allowed ("],
        prompt_after: &["token count ("],
    },
    // Mistral: "Prompt contains 40000 tokens …, too large for model with 32768 maximum context
    // length".
    Phrasing {
        marker: "too large for model with",
        limit_after: &["model with "],
        prompt_after: &["prompt contains "],
    },
    // Cerebras: "Current length is 9000 while limit is 8192".
    Phrasing {
        marker: "while limit is",
        limit_after: &["while limit is "],
        prompt_after: &["current length is "],
    },
    // OpenAI's Responses wording, and LiteLLM's own name for all of these.
    Phrasing {
        marker: "exceeds the context window of this model",
        limit_after: &[],
        prompt_after: &[],
    },
    Phrasing { marker: "contextwindowexceedederror", limit_after: &[], prompt_after: &[] },
];

/// The codes and types of JSON error bodies that say it without the words.
const CODES: [&str; 2] = ["context_length_exceeded", "exceed_context_size_error"];
/// 413: the body is larger than the server takes at all.
const PAYLOAD_TOO_LARGE: u16 = 413;

/// Reads an error answer: `Some` when it says the prompt is too long, with what it stated.
pub fn detect(status: u16, body: &[u8]) -> Option<Overflow> {
    let text = String::from_utf8_lossy(body).to_lowercase();
    let json = serde_json::from_str::<Value>(&text).ok();
    let error = json.as_ref().map(|json| json.get("error").unwrap_or(json));
    let field = |name: &str| error.and_then(|error| error.get(name)?.as_u64());
    let coded = error.is_some_and(|error| {
        ["code", "type"].iter().any(|key| {
            error.get(key).and_then(Value::as_str).is_some_and(|value| CODES.contains(&value))
        })
    });
    let phrasings: Vec<&Phrasing> =
        PHRASINGS.iter().filter(|phrasing| text.contains(phrasing.marker)).collect();
    if phrasings.is_empty() && !coded && status != PAYLOAD_TOO_LARGE {
        return None;
    }
    let find = |pick: fn(&Phrasing) -> &'static [&'static str]| {
        phrasings
            .iter()
            .flat_map(|phrasing| pick(phrasing))
            .find_map(|after| number_after(&text, after))
    };
    Some(Overflow {
        limit: field("n_ctx").or_else(|| find(|phrasing| phrasing.limit_after)),
        prompt: field("n_prompt_tokens").or_else(|| find(|phrasing| phrasing.prompt_after)),
    })
}

/// The whole number right after the first `after` in `text` (digits, with `,` or `_` between
/// groups, after an optional "about "); `None` when there is none or it does not fit.
fn number_after(text: &str, after: &str) -> Option<u64> {
    let start = text.find(after)? + after.len();
    let rest = text[start..].trim_start();
    let rest = rest.strip_prefix("about ").unwrap_or(rest);
    let mut value: u64 = 0;
    let mut digits = 0;
    for c in rest.chars() {
        match c {
            '0'..='9' => {
                value = value.checked_mul(10)?.checked_add(u64::from(c as u8 - b'0'))?;
                digits += 1;
            }
            ',' | '_' if digits > 0 => {}
            _ => break,
        }
    }
    (digits > 0).then_some(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn both(limit: u64, prompt: u64) -> Option<Overflow> {
        Some(Overflow { limit: Some(limit), prompt: Some(prompt) })
    }

    /// Each server's refusal as it sends it: (who, status, body, what keel reads from it).
    #[test]
    fn every_servers_refusal_is_read_with_its_numbers() {
        let none = Some(Overflow::default());
        let cases: [(&str, u16, &str, Option<Overflow>); 16] = [
            (
                "Anthropic",
                400,
                r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 209303 tokens > 200000 maximum"}}"#,
                both(200_000, 209_303),
            ),
            (
                "Anthropic, input and max_tokens",
                400,
                r#"{"type":"error","error":{"type":"invalid_request_error","message":"input length and `max_tokens` exceed context limit: 197451 + 8192 > 200000, decrease input length or `max_tokens` and try again"}}"#,
                both(200_000, 197_451),
            ),
            (
                "OpenAI",
                400,
                r#"{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130512 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#,
                both(128_000, 130_512),
            ),
            (
                "OpenAI, newer models",
                400,
                r#"{"error":{"message":"Input tokens exceed the configured limit of 272000 tokens. Your messages resulted in 509178 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#,
                both(272_000, 509_178),
            ),
            (
                "OpenAI, the code alone",
                400,
                r#"{"error":{"message":"Your input exceeds the limit.","type":"invalid_request_error","code":"context_length_exceeded"}}"#,
                none,
            ),
            (
                "vLLM",
                400,
                r#"{"object":"error","message":"This model's maximum context length is 16384 tokens. However, you requested 122946 tokens (112946 in the messages, 10000 in the completion). Please reduce the length of the messages or completion.","type":"BadRequestError","param":null,"code":400}"#,
                both(16_384, 112_946),
            ),
            (
                "vLLM, newer",
                400,
                r#"{"error":{"message":"This model's maximum context length is 2048 tokens. However, your request has 8 input tokens plus 2045 'max_tokens'. Please reduce one or the other.","type":"BadRequestError","param":"input_tokens, max_tokens","code":400}}"#,
                both(2048, 8),
            ),
            (
                "llama.cpp",
                400,
                r#"{"error":{"code":400,"message":"the request exceeds the available context size. try increasing the context size or enable context shift","type":"exceed_context_size_error","n_prompt_tokens":14429,"n_ctx":8192}}"#,
                both(8192, 14_429),
            ),
            (
                "llama.cpp, numbers in the words",
                400,
                r#"{"error":{"code":400,"message":"request (4390 tokens) exceeds the available context size (4096 tokens), try increasing it","type":"exceed_context_size_error"}}"#,
                both(4096, 4390),
            ),
            (
                "llama.cpp, as a 500",
                500,
                r#"{"error":{"code":500,"message":"Context size has been exceeded.","type":"server_error"}}"#,
                none,
            ),
            (
                "Ollama",
                400,
                r#"{"error":"the prompt is longer than the context length currently available to the model"}"#,
                none,
            ),
            (
                "Ollama, embedded runner",
                500,
                r#"{"error":"input length exceeds the context length"}"#,
                none,
            ),
            (
                "LiteLLM",
                400,
                r#"{"error":{"message":"litellm.ContextWindowExceededError: litellm.BadRequestError: ContextWindowExceededError: OpenAIException - This model's maximum context length is 32,768 tokens. However, you requested 40,000 tokens (31,808 in the messages, 8,192 in the completion).","type":null,"param":null,"code":"400"}}"#,
                both(32_768, 31_808),
            ),
            (
                "LiteLLM around Anthropic",
                400,
                r#"{"error":{"message":"litellm.ContextWindowExceededError: AnthropicError - {\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"prompt is too long: 209303 tokens > 200000 maximum\"}}","code":"400"}}"#,
                both(200_000, 209_303),
            ),
            (
                "SGLang",
                400,
                r#"{"object":"error","message":"The input (9000 tokens) is longer than the model's context length (8192 tokens).","code":400}"#,
                both(8192, 9000),
            ),
            (
                "a body too large for the server at all",
                413,
                r#"{"type":"error","error":{"type":"request_too_large","message":"Request exceeds the maximum allowed number of bytes."}}"#,
                none,
            ),
        ];
        for (who, status, body, expected) in cases {
            assert_eq!(detect(status, body.as_bytes()), expected, "{who}");
        }
    }

    #[test]
    fn other_refusals_are_not_taken_for_a_long_prompt() {
        for (status, body) in [
            (
                400,
                r#"{"error":{"message":"max_tokens: 100000 > 64000, which is the maximum allowed","type":"invalid_request_error"}}"#,
            ),
            (400, r#"{"error":{"message":"messages: roles must alternate"}}"#),
            (500, "upstream failed"),
            (429, r#"{"error":{"message":"rate limited"}}"#),
        ] {
            assert_eq!(detect(status, body.as_bytes()), None, "{body}");
        }
    }

    #[test]
    fn numbers_a_server_cannot_mean_are_not_stated() {
        let huge = r#"{"error":{"message":"This model's maximum context length is 99999999999999999999999 tokens.","code":"context_length_exceeded"}}"#;
        assert_eq!(detect(400, huge.as_bytes()), Some(Overflow::default()));
        let negative = r#"{"error":{"message":"prompt is too long: -5 tokens > -1 maximum"}}"#;
        assert_eq!(detect(400, negative.as_bytes()), Some(Overflow::default()));
        let text =
            r#"{"error":{"type":"exceed_context_size_error","n_ctx":"many","n_prompt_tokens":-3}}"#;
        assert_eq!(detect(400, text.as_bytes()), Some(Overflow::default()));
        assert_eq!(number_after("limit is 1,024 tokens", "limit is "), Some(1024));
        assert_eq!(number_after("limit is ,5", "limit is "), None);
    }
}
