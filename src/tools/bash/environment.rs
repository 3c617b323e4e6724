//! The environment commands run in: keel's own, less the provider keys, plus settings that keep
//! programs from waiting for a person who cannot answer.
//!
//! The model reads whatever a command prints, so a key in the environment is a key the model can
//! print (`env`, `echo $ANTHROPIC_API_KEY`) — and send wherever a command can reach. keel's own
//! variables (`KEEL_*`) are withheld too: they configure keel, not the project, and some may hold
//! secrets.

use crate::llm::WireFormat;
use std::ffi::OsStr;
use tokio::process::Command;

/// The prefix of keel's own variables.
const KEEL_PREFIX: &str = "KEEL_";
/// Variables that keep programs from waiting for a person who cannot answer.
const NONINTERACTIVE: &[(&str, &str)] =
    &[("GIT_TERMINAL_PROMPT", "0"), ("GIT_PAGER", "cat"), ("PAGER", "cat")];

/// Whether a variable of keel's environment is kept from commands.
pub fn is_withheld(name: &OsStr) -> bool {
    let name = name.as_encoded_bytes();
    WireFormat::ALL.iter().any(|wire| wire.key_variable().as_bytes() == name)
        || name.starts_with(KEEL_PREFIX.as_bytes())
}

/// The value a command will see for `name`.
pub fn value_for_command(name: &str) -> Option<String> {
    if let Some((_, value)) = NONINTERACTIVE.iter().find(|(key, _)| *key == name) {
        return Some((*value).to_owned());
    }
    if is_withheld(OsStr::new(name)) {
        return None;
    }
    std::env::var(name).ok()
}

/// Gives `cmd` the environment commands run in.
pub fn apply(cmd: &mut Command) {
    for (name, _) in std::env::vars_os() {
        if is_withheld(&name) {
            cmd.env_remove(name);
        }
    }
    for (name, value) in NONINTERACTIVE {
        cmd.env(name, value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_and_keel_settings_are_withheld() {
        for name in ["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "KEEL_API_KEY", "KEEL_MODEL"] {
            assert!(is_withheld(OsStr::new(name)), "{name}");
        }
        for name in ["HOME", "PATH", "ANTHROPIC_BASE_URL", "MY_KEEL_X", "OPENAI_API_KEYS"] {
            assert!(!is_withheld(OsStr::new(name)), "{name}");
        }
        assert_eq!(value_for_command("PAGER").as_deref(), Some("cat"));
    }
}
