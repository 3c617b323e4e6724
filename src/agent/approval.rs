//! Which tool calls may run without asking the person (the `--approval` mode).
//!
//! Reading (`read_file`) and planning (`todo`) never ask. In `ask` mode the person's "always"
//! answers are remembered for the session: for a file tool, every call of that tool; for `bash`,
//! one simple command. Its kind — program and subcommand (`git log`, see
//! `tools::simple_command`) — only when the guard proves the command read-only
//! (`tools::guard::check_read_only`); any other command, exactly that line: "always" on
//! `git log --oneline -1` must not let `git log --output=~/.bashrc` run unasked. A command line
//! that is not one simple command (it chains, pipes, substitutes, redirects or spans lines) cannot
//! be allowed always: it is asked about every time. Commands that can wreck the machine are
//! refused by the `bash` tool itself, whatever the mode.
//!
//! When the sandbox cannot be set up and the person did not turn it off, no command runs
//! unasked: `auto` refuses them, `ask` asks for each one, with no "always".

use super::ApprovalMode;
use super::snapshot::Refusal;
use crate::tools::sandbox::Sandbox;
use crate::tools::simple_command::CommandKind;
use crate::tools::{ToolName, guard};
use serde_json::Value;
use std::collections::HashSet;

/// What to do with one tool call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Run,
    Ask,
    /// Refused without asking, for this reason; the text goes to the model.
    Refuse(Refusal, String),
}

/// The mode plus what the person allowed for the rest of the session.
#[derive(Debug, Clone, Default)]
pub struct Approvals {
    mode: ApprovalMode,
    always: HashSet<Allowed>,
    /// Why commands cannot be sandboxed, when they cannot and the person did not choose that.
    unconfined: Option<String>,
}

/// One kind of call the person allowed for the rest of the session.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Allowed {
    /// Every call of a file tool.
    Tool(ToolName),
    /// `bash` running one simple, read-only command of this kind.
    Command(CommandKind),
    /// `bash` running exactly this line.
    Line(String),
}

impl Approvals {
    pub fn new(mode: ApprovalMode) -> Self {
        Self { mode, always: HashSet::new(), unconfined: None }
    }

    /// These approvals for commands run in `sandbox`: when it cannot confine them (and the person
    /// did not turn it off), none runs unasked.
    pub fn with_sandbox(self, sandbox: &Sandbox) -> Self {
        Self { unconfined: sandbox.problem().map(str::to_owned), ..self }
    }

    pub fn check(&self, tool: &ToolName, input: &Value) -> Verdict {
        if !tool.changes_things() {
            return Verdict::Run;
        }
        if let (Some(why), ToolName::Bash) = (&self.unconfined, tool) {
            match self.mode {
                ApprovalMode::Auto => {
                    return Verdict::Refuse(
                        Refusal::NoSandbox,
                        format!("{NO_SANDBOX} {why}. Tell the user; they can run it themselves."),
                    );
                }
                ApprovalMode::Ask => return Verdict::Ask,
                ApprovalMode::ReadOnly => {}
            }
        }
        match self.mode {
            ApprovalMode::Auto => Verdict::Run,
            ApprovalMode::ReadOnly => Verdict::Refuse(
                Refusal::ReadOnly,
                format!(
                    "{READ_ONLY}: `{tool}` is not allowed. Only read_file and todo can run; tell \
                     the user what you would do instead."
                ),
            ),
            ApprovalMode::Ask if changes_nothing(tool, input) => Verdict::Run,
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
            ApprovalMode::ReadOnly => Verdict::Refuse(
                Refusal::ReadOnly,
                format!(
                    "{READ_ONLY}: `{tool}` is not allowed, since its MCP server does not mark it \
                     read-only (readOnlyHint). Tell the user what you would do instead."
                ),
            ),
            _ => self.check(tool, input),
        }
    }

    /// Remembers an "always" answer for this kind of call; a call no "always" can cover (a
    /// command line that is not one simple command) is allowed this once only.
    pub fn allow_always(&mut self, tool: &ToolName, input: &Value) {
        if self.unconfined.is_some() && *tool == ToolName::Bash {
            return;
        }
        if let Some(kind) = allowed(tool, input) {
            self.always.insert(kind);
        }
    }

    /// What an "always" answer to this call would cover, in words for the approval box; `None`
    /// when it cannot be allowed always.
    pub fn always_covers(&self, tool: &ToolName, input: &Value) -> Option<String> {
        if self.unconfined.is_some() && *tool == ToolName::Bash {
            return None;
        }
        match allowed(tool, input)? {
            Allowed::Tool(tool) => Some(format!("every {tool} call for the rest of the session")),
            Allowed::Command(kind) => Some(format!(
                "`{kind}` commands that only read, each on its own (no ; && || | $( ) ` \
                 redirections or line breaks), for the rest of the session"
            )),
            Allowed::Line(_) => {
                Some("exactly this command line, for the rest of the session".to_owned())
            }
        }
    }
}

/// What an "always" answer to this call covers: the file tool, or the kind of simple command.
fn allowed(tool: &ToolName, input: &Value) -> Option<Allowed> {
    match tool {
        ToolName::Bash => {
            let command = input.get("command").and_then(Value::as_str)?;
            let kind = CommandKind::of(command)?;
            Some(match guard::check_read_only(command) {
                Ok(()) => Allowed::Command(kind),
                Err(_) => Allowed::Line(command.to_owned()),
            })
        }
        ToolName::WriteFile | ToolName::EditFile => Some(Allowed::Tool(tool.clone())),
        ToolName::Mcp(_) => Some(Allowed::Tool(tool.clone())),
        ToolName::Todo | ToolName::ReadFile | ToolName::Unknown(_) => None,
    }
}

/// How the model's answer begins when a command is refused for want of a sandbox.
pub const NO_SANDBOX: &str = "Command not run: keel";
/// How the model's answer begins when read-only mode refuses a call.
pub const READ_ONLY: &str = "keel is in read-only mode";

/// The result the model gets when the person says no.
pub const DECLINED: &str =
    "The user declined to run this tool call. Ask them what they would like to do instead.";

/// An edit whose `old_text` and `new_text` are the same: it changes nothing, so there is nothing
/// to approve (the tool reports "no change" and writes nothing).
fn changes_nothing(tool: &ToolName, input: &Value) -> bool {
    let text = |key| input.get(key).and_then(Value::as_str);
    *tool == ToolName::EditFile
        && text("old_text").is_some()
        && text("old_text") == text("new_text")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_edit_that_changes_nothing_needs_no_approval() {
        let approvals = Approvals::new(ApprovalMode::Ask);
        let same = json!({"path": "a.txt", "old_text": "x = 1", "new_text": "x = 1"});
        assert_eq!(approvals.check(&ToolName::EditFile, &same), Verdict::Run);
        let change = json!({"path": "a.txt", "old_text": "x = 1", "new_text": "x = 2"});
        assert_eq!(approvals.check(&ToolName::EditFile, &change), Verdict::Ask);
        let no_texts = json!({"path": "a.txt"});
        assert_eq!(approvals.check(&ToolName::EditFile, &no_texts), Verdict::Ask);
        let write = json!({"path": "a.txt", "old_text": "x", "new_text": "x", "content": "y"});
        assert_eq!(approvals.check(&ToolName::WriteFile, &write), Verdict::Ask);
    }
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
            Verdict::Refuse(Refusal::ReadOnly, text) if text.contains("read-only")
        ));
    }

    #[test]
    fn without_a_sandbox_no_command_runs_unasked() {
        use crate::tools::sandbox::{Availability, Policy};
        let missing = Sandbox {
            policy: Policy::default(),
            availability: Availability::Missing("cannot sandbox commands: no bwrap".into()),
            read_only: Vec::new(),
        };
        let bash = json!({"command": "ls"});
        let auto = Approvals::new(ApprovalMode::Auto).with_sandbox(&missing);
        assert!(matches!(
            auto.check(&ToolName::Bash, &bash),
            Verdict::Refuse(Refusal::NoSandbox, why) if why.contains("no bwrap")
        ));
        assert_eq!(auto.check(&ToolName::WriteFile, &json!({})), Verdict::Run);
        let mut ask = Approvals::new(ApprovalMode::Ask).with_sandbox(&missing);
        assert_eq!(ask.always_covers(&ToolName::Bash, &bash), None);
        ask.allow_always(&ToolName::Bash, &bash);
        assert_eq!(ask.check(&ToolName::Bash, &bash), Verdict::Ask);
        // The person's own choice: unconfined, and approvals as usual.
        let off = Approvals::new(ApprovalMode::Auto).with_sandbox(&Sandbox::off());
        assert_eq!(off.check(&ToolName::Bash, &bash), Verdict::Run);
    }

    #[test]
    fn always_covers_one_kind_of_simple_command_only() {
        let mut approvals = Approvals::new(ApprovalMode::Ask);
        let bash = |command: &str| json!({ "command": command });
        approvals.allow_always(&ToolName::Bash, &bash("git log --oneline -1"));
        assert_eq!(approvals.check(&ToolName::Bash, &bash("git log -p")), Verdict::Run);
        // A command that may write is allowed exactly, never by its shape.
        assert_eq!(
            approvals.check(&ToolName::Bash, &bash("git log --output=/home/x/.bashrc")),
            Verdict::Ask
        );
        approvals.allow_always(&ToolName::Bash, &bash("cargo test"));
        assert_eq!(approvals.check(&ToolName::Bash, &bash("cargo test")), Verdict::Run);
        for asked in [
            "cargo test --release",
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
        assert!(approvals.always_covers(&ToolName::Bash, &bash("ls | sh")).is_none());
        let covers = approvals.always_covers(&ToolName::Bash, &bash("git status -s")).unwrap();
        assert!(covers.starts_with("`git status` commands that only read"), "{covers}");
        let covers = approvals.always_covers(&ToolName::Bash, &bash("touch x")).unwrap();
        assert!(covers.starts_with("exactly this command line"), "{covers}");
        approvals.allow_always(&ToolName::EditFile, &json!({"path": "a"}));
        assert_eq!(approvals.check(&ToolName::EditFile, &json!({"path": "b"})), Verdict::Run);
        assert_eq!(approvals.check(&ToolName::WriteFile, &json!({"path": "b"})), Verdict::Ask);
    }
}
