//! The context window keel assumes for a model when none is configured: a figure for the model
//! families it knows, else [`DEFAULT_CONTEXT_WINDOW`].
//!
//! The figures are the vendors' own for the family's current models, rounded down where members
//! differ. One that is too large is corrected by the server: its "too long" answer states the
//! real limit and keel learns it. One that is too small only makes keel compact early.

pub use crate::agent::DEFAULT_CONTEXT_WINDOW;

/// Model name prefixes (lowercase, after any `vendor/` part) and their windows; the longest
/// matching prefix wins.
const FAMILIES: &[(&str, u32)] = &[
    ("claude", 200_000),
    ("gpt-4.1", 1_047_576),
    ("gpt-4o", 128_000),
    ("gpt-4-turbo", 128_000),
    ("gpt-4", 8_192),
    ("gpt-3.5", 16_385),
    ("gpt-5", 400_000),
    ("o1", 200_000),
    ("o3", 200_000),
    ("o4", 200_000),
    ("deepseek", 128_000),
    ("gemini", 1_048_576),
    ("qwen", 32_768),
    ("qwen3-coder", 262_144),
    ("llama3.1", 128_000),
    ("llama3.2", 128_000),
    ("llama3.3", 128_000),
    ("llama-3.1", 128_000),
    ("llama-3.3", 128_000),
    ("llama3", 8_192),
    ("mistral-large", 128_000),
    ("codestral", 256_000),
    ("mixtral", 32_768),
    ("kimi", 128_000),
    ("moonshot", 128_000),
    ("glm-4", 128_000),
];

/// The window assumed for `model`.
pub fn default_window(model: &str) -> u32 {
    let name = model.trim().to_lowercase();
    let name = name.rsplit('/').next().unwrap_or_default();
    FAMILIES
        .iter()
        .filter(|(prefix, _)| name.starts_with(prefix))
        .max_by_key(|(prefix, _)| prefix.len())
        .map_or(DEFAULT_CONTEXT_WINDOW, |(_, window)| *window)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_are_known_by_their_longest_prefix() {
        let cases = [
            ("claude-sonnet-4-5", 200_000),
            ("anthropic/claude-sonnet-4.5", 200_000),
            ("gpt-4.1", 1_047_576),
            ("gpt-4o-mini", 128_000),
            ("gpt-4", 8_192),
            ("deepseek-chat", 128_000),
            ("qwen/qwen3-coder", 262_144),
            ("Qwen2.5-Coder-32B", 32_768),
            ("llama3.1:8b", 128_000),
            ("llama3:8b", 8_192),
            ("my-own-model", DEFAULT_CONTEXT_WINDOW),
            ("", DEFAULT_CONTEXT_WINDOW),
        ];
        for (model, window) in cases {
            assert_eq!(default_window(model), window, "{model}");
        }
    }
}
