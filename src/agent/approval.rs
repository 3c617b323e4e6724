//! Which tool calls may run without asking the person (the `--approval` mode).
//!
//! Reading (`read_file`) and planning (`todo`) never ask. In `ask` mode the person's "always"
//! answers are remembered for the session: per tool, and for `bash` per first word of the command,
//! so allowing `cargo` does not allow `rm`. Commands that can wreck the machine are refused by the
//! `bash` tool itself, whatever the mode.

use super::ApprovalMode;
use crate::tools::ToolName;
use serde_json::Value;
use std::collections::HashSet;

/// What to do with one tool call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Run,
    Ask,
    /// Refused without asking; the text goes to the model.
    Refuse(String),
}

/// The mode plus what the person allowed for the rest of the session.
#[derive(Debug, Clone, Default)]
pub struct Approvals {
    mode: ApprovalMode,
    always: HashSet<String>,
}

impl Approvals {
    pub fn new(mode: ApprovalMode) -> Self {
        Self { mode, always: HashSet::new() }
    }

    pub fn check(&self, tool: &ToolName, input: &Value) -> Verdict {
        if !tool.changes_things() {
            return Verdict::Run;
        }
        match self.mode {
            ApprovalMode::Auto => Verdict::Run,
            ApprovalMode::ReadOnly => Verdict::Refuse(format!(
                "keel is in read-only mode: `{tool}` is not allowed. Only read_file and todo can run; \
                 tell the user what you would do instead."
            )),
            ApprovalMode::Ask if self.always.contains(&allow_key(tool, input)) => Verdict::Run,
            ApprovalMode::Ask => Verdict::Ask,
        }
    }

    /// Remembers an "always" answer for this kind of call.
    pub fn allow_always(&mut self, tool: &ToolName, input: &Value) {
        self.always.insert(allow_key(tool, input));
    }
}

/// What an "always" answer covers: the tool, and for `bash` the command's first word.
fn allow_key(tool: &ToolName, input: &Value) -> String {
    if *tool == ToolName::Bash {
        let first_word = input
            .get("command")
            .and_then(Value::as_str)
            .and_then(|command| command.split_whitespace().next())
            .unwrap_or_default();
        format!("bash:{first_word}")
    } else {
        tool.to_string()
    }
}

/// The result the model gets when the person says no.
pub const DECLINED: &str =
    "The user declined to run this tool call. Ask them what they would like to do instead.";

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_and_todos_never_ask() {
        for mode in [ApprovalMode::Ask, ApprovalMode::ReadOnly, ApprovalMode::Auto] {
            let approvals = Approvals::new(mode);
            assert_eq!(approvals.check(&ToolName::ReadFile, &json!({"path": "a"})), Verdict::Run);
            assert_eq!(approvals.check(&ToolName::Todo, &json!({"items": []})), Verdict::Run);
        }
    }

    #[test]
    fn modes_decide_for_commands_and_writes() {
        let bash = json!({"command": "ls"});
        assert_eq!(Approvals::new(ApprovalMode::Auto).check(&ToolName::Bash, &bash), Verdict::Run);
        assert_eq!(Approvals::new(ApprovalMode::Ask).check(&ToolName::Bash, &bash), Verdict::Ask);
        assert!(matches!(
            Approvals::new(ApprovalMode::ReadOnly).check(&ToolName::WriteFile, &json!({})),
            Verdict::Refuse(text) if text.contains("read-only")
        ));
    }

    #[test]
    fn always_covers_the_first_word_of_a_command_only() {
        let mut approvals = Approvals::new(ApprovalMode::Ask);
        let bash = |command: &str| json!({ "command": command });
        approvals.allow_always(&ToolName::Bash, &bash("cargo test"));
        assert_eq!(approvals.check(&ToolName::Bash, &bash("cargo build")), Verdict::Run);
        assert_eq!(approvals.check(&ToolName::Bash, &bash("rm -rf x")), Verdict::Ask);
        approvals.allow_always(&ToolName::EditFile, &json!({"path": "a"}));
        assert_eq!(approvals.check(&ToolName::EditFile, &json!({"path": "b"})), Verdict::Run);
        assert_eq!(approvals.check(&ToolName::WriteFile, &json!({"path": "b"})), Verdict::Ask);
    }
}
