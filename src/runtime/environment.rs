//! The environment commands run in: only what `runtime::withheld` hands on of keel's own (the
//! allow-list and the person's `pass_env`, less values that look like secrets), plus settings
//! that keep programs from waiting for a person who cannot answer. The person's own hooks that
//! run as the person get theirs instead, less only keel's own (`apply_persons`).

use crate::runtime::withheld;
use std::ffi::OsStr;
use tokio::process::Command;

/// Variables that keep programs from waiting for a person who cannot answer.
const NONINTERACTIVE: &[(&str, &str)] =
    &[("GIT_TERMINAL_PROMPT", "0"), ("GIT_PAGER", "cat"), ("PAGER", "cat")];

/// The value a command will see for `name`.
pub fn value_for_command(name: &str) -> Option<String> {
    if let Some((_, value)) = NONINTERACTIVE.iter().find(|(key, _)| *key == name) {
        return Some((*value).to_owned());
    }
    if withheld::is_withheld(OsStr::new(name)) {
        return None;
    }
    std::env::var(name).ok()
}

/// Gives `cmd` the environment commands (and confined hooks) run in. Every variable set on
/// `cmd` before is cleared: set the program's own after this.
pub fn apply(cmd: &mut Command) {
    withheld::hand_on(cmd);
    noninteractive(cmd);
}

/// Gives `cmd` the environment the person's own programs (hooks) run in: theirs, tokens
/// included, less what no program keel starts gets (`withheld::is_keels`).
pub fn apply_persons(cmd: &mut Command) {
    withheld::remove_keels(cmd);
    noninteractive(cmd);
}

/// Tells `cmd` no one is there to answer a prompt.
fn noninteractive(cmd: &mut Command) {
    for (name, value) in NONINTERACTIVE {
        cmd.env(name, value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn programs_are_told_no_one_is_there_to_answer() {
        assert_eq!(value_for_command("PAGER").as_deref(), Some("cat"));
        assert_eq!(value_for_command("GIT_TERMINAL_PROMPT").as_deref(), Some("0"));
    }
}
