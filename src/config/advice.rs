//! What to tell a person who has no API key configured: the advice that fits what they did set
//! (a provider named, an OpenAI-compatible base URL without its key), for `-p`'s error and the
//! TUI's first screen alike. Names of variables and files are marked as `code`.

use crate::llm::WireFormat;

/// The user's own config file, as the advice names it.
const USER_FILE: &str = "~/.config/keel/config.toml";

/// How to configure a key, for someone who has none. `provider` is the provider named by a flag,
/// `KEEL_PROVIDER` or a config file (`None`: none named); `env` reads the environment.
pub fn missing_key(provider: Option<WireFormat>, env: &dyn Fn(&str) -> Option<String>) -> String {
    let set = |name: &str| env(name).filter(|value| !value.trim().is_empty());
    let placeholder = "a local server that checks no key (Ollama, vLLM, llama.cpp) still needs \
                       it set, and any placeholder works, such as `OPENAI_API_KEY=local`";
    match provider {
        Some(WireFormat::OpenAi) => format!(
            "no API key for the OpenAI-compatible provider: set `OPENAI_API_KEY` (or `api_key` \
             in `{USER_FILE}`); {placeholder}"
        ),
        Some(WireFormat::Anthropic) => format!(
            "no API key for Anthropic: set `ANTHROPIC_API_KEY` (or `api_key` in `{USER_FILE}`)"
        ),
        None => match set("OPENAI_BASE_URL") {
            Some(url) => format!(
                "`OPENAI_BASE_URL` is set ({url}) but `OPENAI_API_KEY` is not: set it too; \
                 {placeholder}"
            ),
            None => format!(
                "no API key: set `ANTHROPIC_API_KEY` (or `OPENAI_API_KEY`, with `OPENAI_BASE_URL` \
                 for another OpenAI-compatible server: a local one takes any placeholder key), \
                 or put `provider`, `model` and `api_key` in `{USER_FILE}`"
            ),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(vars: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| vars.iter().find(|(key, _)| *key == name).map(|(_, value)| (*value).to_owned())
    }

    #[test]
    fn a_local_openai_server_without_a_key_is_told_any_placeholder_works() {
        let advice = missing_key(None, &with(&[("OPENAI_BASE_URL", "http://127.0.0.1:8000/v1")]));
        assert!(advice.contains("http://127.0.0.1:8000/v1"), "{advice}");
        assert!(advice.contains("any placeholder works"), "{advice}");
        assert!(!advice.contains("ANTHROPIC"), "{advice}");
    }

    #[test]
    fn a_named_provider_gets_its_own_variable() {
        let openai = missing_key(Some(WireFormat::OpenAi), &with(&[]));
        assert!(openai.contains("`OPENAI_API_KEY`") && !openai.contains("ANTHROPIC"), "{openai}");
        let anthropic = missing_key(Some(WireFormat::Anthropic), &with(&[]));
        assert!(anthropic.contains("`ANTHROPIC_API_KEY`"), "{anthropic}");
        assert!(!anthropic.contains("OPENAI"), "{anthropic}");
    }
}
