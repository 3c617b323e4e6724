//! Which tool calls may run without asking the person (the `--approval` mode).
//!
//! Reading (`read_file`) and planning (`todo`) never ask. In `ask` mode the person's "always"
//! answers are remembered for the session: for a file tool, every call of that tool; for `bash`,
//! one kind of simple command — its program and subcommand (`cargo test`, `git status`), see
//! `tools::simple_command` — so allowing `cargo test` allows neither `rm` nor
//! `cargo test && rm -rf x`. A command line that is not one simple command (it chains, pipes,
//! substitutes, redirects or spans lines) cannot be allowed always: it is asked about every time.
//! Commands that can wreck the machine are refused by the `bash` tool itself, whatever the mode.

use super::ApprovalMode;
use crate::tools::ToolName;
use crate::tools::simple_command::CommandKind;
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
    always: HashSet<Allowed>,
}

/// One kind of call the person allowed for the rest of the session.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Allowed {
    /// Every call of a file tool.
    Tool(ToolName),
    /// `bash` running one simple command of this kind.
    Command(CommandKind),
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
            ApprovalMode::Ask
                if allowed(tool, input).is_some_and(|kind| self.always.contains(&kind)) =>
            {
                Verdict::Run
            }
            ApprovalMode::Ask => Verdict::Ask,
        }
    }

    /// What to do with a call of an MCP tool, which its server marks read-only or not: the
    /// read-only mode runs only marked tools; otherwise it is decided as any other change.
    pub fn check_mcp(&self, tool: &ToolName, input: &Value, read_only: bool) -> Verdict {
        match self.mode {
            ApprovalMode::ReadOnly if read_only => Verdict::Run,
            ApprovalMode::ReadOnly => Verdict::Refuse(format!(
                "keel is in read-only mode: `{tool}` is not allowed, since its MCP server does \
                 not mark it read-only (readOnlyHint). Tell the user what you would do instead."
            )),
            _ => self.check(tool, input),
        }
    }

    /// Remembers an "always" answer for this kind of call; a call no "always" can cover (a
    /// command line that is not one simple command) is allowed this once only.
    pub fn allow_always(&mut self, tool: &ToolName, input: &Value) {
        if let Some(kind) = allowed(tool, input) {
            self.always.insert(kind);
        }
    }

    /// What an "always" answer to this call would cover, in words for the approval box; `None`
    /// when it cannot be allowed always.
    pub fn always_covers(tool: &ToolName, input: &Value) -> Option<String> {
        match allowed(tool, input)? {
            Allowed::Tool(tool) => Some(format!("every {tool} call for the rest of the session")),
            Allowed::Command(kind) => Some(format!(
                "`{kind}` commands, each on its own (no ; && || | $( ) ` redirections or line \
                 breaks), for the rest of the session"
            )),
        }
    }
}

/// What an "always" answer to this call covers: the file tool, or the kind of simple command.
fn allowed(tool: &ToolName, input: &Value) -> Option<Allowed> {
    match tool {
        ToolName::Bash => {
            let command = input.get("command").and_then(Value::as_str)?;
            CommandKind::of(command).map(Allowed::Command)
        }
        ToolName::WriteFile | ToolName::EditFile => Some(Allowed::Tool(tool.clone())),
        ToolName::Mcp(_) => Some(Allowed::Tool(tool.clone())),
        ToolName::Todo | ToolName::ReadFile | ToolName::Unknown(_) => None,
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
    fn always_covers_one_kind_of_simple_command_only() {
        let mut approvals = Approvals::new(ApprovalMode::Ask);
        let bash = |command: &str| json!({ "command": command });
        approvals.allow_always(&ToolName::Bash, &bash("cargo test"));
        assert_eq!(approvals.check(&ToolName::Bash, &bash("cargo test --release")), Verdict::Run);
        for asked in [
            "cargo build",
            "rm -rf x",
            "cargo test && touch X",
            "cargo test\ntouch X",
            "cargo test $(touch X)",
            "cargo test > out",
        ] {
            assert_eq!(approvals.check(&ToolName::Bash, &bash(asked)), Verdict::Ask, "{asked}");
        }
        approvals.allow_always(&ToolName::Bash, &bash("ls; touch X"));
        assert_eq!(approvals.check(&ToolName::Bash, &bash("ls; touch X")), Verdict::Ask);
        assert!(Approvals::always_covers(&ToolName::Bash, &bash("ls | sh")).is_none());
        let covers = Approvals::always_covers(&ToolName::Bash, &bash("git status -s")).unwrap();
        assert!(covers.starts_with("`git status` commands"), "{covers}");
        approvals.allow_always(&ToolName::EditFile, &json!({"path": "a"}));
        assert_eq!(approvals.check(&ToolName::EditFile, &json!({"path": "b"})), Verdict::Run);
        assert_eq!(approvals.check(&ToolName::WriteFile, &json!({"path": "b"})), Verdict::Ask);
    }
}
