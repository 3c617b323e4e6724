//! Which tool calls may run without asking the person (the `--approval` mode).
//!
//! Each call is decided by what its tool says it does ([`Effect`]): reading and planning never
//! ask. In `ask` mode the person's "always" answers are remembered for the session: for a tool
//! that writes files or reaches outside, every call of that tool; for a command, one simple
//! command. Its kind — program and subcommand (`git log`, see
//! `simple_command`) — only when keel proves the command read-only (`read_only`); any other command, exactly that line: "always" on
//! `git log --oneline -1` must not let `git log --output=~/.bashrc` run unasked. A command line
//! that is not one simple command (it chains, pipes, substitutes, redirects or spans lines) cannot
//! be allowed always: it is asked about every time. Commands that can wreck the machine are
//! refused by the `bash` tool itself, whatever the mode.
//!
//! When the sandbox cannot be set up and the person did not turn it off, no command runs
//! unasked: `auto` refuses them, `ask` asks for each one, with no "always".

pub mod read_only;
pub mod simple_command;

use super::snapshot::Refusal;
use crate::agent::config::ApprovalMode;
use crate::runtime::sandbox::Sandbox;
use crate::tools::{Effect, Tool, ToolSet};
use serde_json::Value;
use simple_command::CommandKind;
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
    /// The mode the session started in: the loosest the person may switch to while it runs.
    loosest: ApprovalMode,
    always: HashSet<Allowed>,
    /// Why commands cannot be sandboxed, when they cannot and the person did not choose that.
    unconfined: Option<String>,
}

/// One kind of call the person allowed for the rest of the session.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Allowed {
    /// Every call of a tool that writes files or reaches outside, by its name.
    Tool(String),
    /// `bash` running one simple, read-only command of this kind.
    Command(CommandKind),
    /// `bash` running exactly this line.
    Line(String),
    /// A board item's check running exactly this command, whatever its shape.
    Check(String),
}

impl Approvals {
    pub fn new(mode: ApprovalMode) -> Self {
        Self { mode, loosest: mode, always: HashSet::new(), unconfined: None }
    }

    /// The approval mode.
    pub fn mode(&self) -> ApprovalMode {
        self.mode
    }

    /// The mode the session started in, the loosest [`Approvals::switch`] takes.
    pub fn loosest(&self) -> ApprovalMode {
        self.loosest
    }

    /// Switches to `mode` from the next check on, for every conversation that shares these
    /// approvals; refused (`Err`, the mode the session started in) when `mode` is looser than
    /// that: what the person, or a workspace's stricter file, chose at the start bounds the
    /// session. The "always" answers stay, and count again whenever the mode is `ask`.
    pub fn switch(&mut self, mode: ApprovalMode) -> Result<(), ApprovalMode> {
        if mode.looseness() > self.loosest.looseness() {
            return Err(self.loosest);
        }
        self.mode = mode;
        Ok(())
    }

    /// Whether a hook's allow may spare the person the question about a call of `tool`: never
    /// for a command the sandbox cannot confine, which is always asked about (or refused).
    pub fn hook_may_allow(&self, tool: &dyn Tool) -> bool {
        !(self.unconfined.is_some() && tool.effect() == Effect::RunsCommand)
    }

    /// These approvals for commands run in `sandbox`: when it cannot confine them (and the person
    /// did not turn it off), none runs unasked.
    pub fn with_sandbox(self, sandbox: &Sandbox) -> Self {
        Self { unconfined: sandbox.problem().map(str::to_owned), ..self }
    }

    /// What to do with a call of `tool` with `input`, offered in `set`.
    pub fn check(&self, tool: &dyn Tool, input: &Value, set: &ToolSet) -> Verdict {
        let effect = tool.effect();
        if !effect.changes_things() {
            return Verdict::Run;
        }
        let name = tool.name();
        if let (Some(why), Effect::RunsCommand) = (&self.unconfined, effect) {
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
            ApprovalMode::ReadOnly if effect.only_reads() => Verdict::Run,
            ApprovalMode::ReadOnly => Verdict::Refuse(
                Refusal::ReadOnly,
                match effect {
                    Effect::ReachesOutside { .. } => format!(
                        "{READ_ONLY}: `{name}` is not allowed, since its MCP server does not \
                     mark it read-only (readOnlyHint). Tell the user what you would do instead."
                    ),
                    _ => format!(
                        "{READ_ONLY}: `{name}` is not allowed. Only {} can run; tell the \
                     user what you would do instead.",
                        in_words(&set.reading())
                    ),
                },
            ),
            ApprovalMode::Ask if tool.changes_nothing(input) => Verdict::Run,
            ApprovalMode::Ask
                if allowed(tool, input).is_some_and(|kind| self.always.contains(&kind)) =>
            {
                Verdict::Run
            }
            ApprovalMode::Ask => Verdict::Ask,
        }
    }

    /// What to do with a board item's check `command`: decided as a `bash` call running it
    /// would be, except that in `ask` the person's "always" on a check covers that check's
    /// command exactly, whatever its shape (docs/board.md, "Checks").
    pub fn check_command(&self, command: &str, set: &ToolSet) -> Verdict {
        let input = serde_json::json!({ "command": command });
        let verdict = self.check(&crate::tools::bash::tool::Bash, &input, set);
        let covered =
            self.unconfined.is_none() && self.always.contains(&Allowed::Check(command.to_owned()));
        match verdict {
            Verdict::Ask if covered => Verdict::Run,
            verdict => verdict,
        }
    }

    /// Remembers an "always" answer to a check: its command, for the rest of the session.
    pub fn allow_check_always(&mut self, command: &str) {
        if self.unconfined.is_none() {
            self.always.insert(Allowed::Check(command.to_owned()));
        }
    }

    /// What an "always" answer to a check covers, in words; `None` without a sandbox, where
    /// every command is asked about.
    pub fn check_always_covers(&self) -> Option<String> {
        self.unconfined
            .is_none()
            .then(|| "this check's command, exactly, for the rest of the session".to_owned())
    }

    /// Remembers an "always" answer for this kind of call; a call no "always" can cover (a
    /// command line that is not one simple command) is allowed this once only.
    pub fn allow_always(&mut self, tool: &dyn Tool, input: &Value) {
        if self.unconfined.is_some() && tool.effect() == Effect::RunsCommand {
            return;
        }
        if let Some(kind) = allowed(tool, input) {
            self.always.insert(kind);
        }
    }

    /// What an "always" answer to this call would cover, in words for the approval box; `None`
    /// when it cannot be allowed always.
    pub fn always_covers(&self, tool: &dyn Tool, input: &Value) -> Option<String> {
        if self.unconfined.is_some() && tool.effect() == Effect::RunsCommand {
            return None;
        }
        match allowed(tool, input)? {
            Allowed::Tool(tool) => Some(format!("every {tool} call for the rest of the session")),
            Allowed::Command(kind) => Some(format!(
                "`{kind}` commands that only read, each on its own (no ; && || | $( ) ` \
                 redirections or line breaks), for the rest of the session"
            )),
            Allowed::Line(_) | Allowed::Check(_) => {
                Some("exactly this command line, for the rest of the session".to_owned())
            }
        }
    }
}

/// What an "always" answer to this call covers: the tool, or the kind of simple command.
fn allowed(tool: &dyn Tool, input: &Value) -> Option<Allowed> {
    match tool.effect() {
        Effect::RunsCommand => {
            let command = tool.command(input)?;
            let kind = CommandKind::of(command)?;
            Some(match read_only::check_read_only(command) {
                Ok(()) => Allowed::Command(kind),
                Err(_) => Allowed::Line(command.to_owned()),
            })
        }
        Effect::WritesFiles | Effect::ReachesOutside { .. } => {
            Some(Allowed::Tool(tool.name().to_owned()))
        }
        // Reading, the board, a child (whose own calls are each approved): nothing to cover.
        _ => None,
    }
}

/// Names in words: `read_file and todo`, `a, b and c`.
fn in_words(names: &[&str]) -> String {
    match names {
        [] => "nothing".to_owned(),
        [one] => (*one).to_owned(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// How the model's answer begins when a command is refused for want of a sandbox.
pub const NO_SANDBOX: &str = "Command not run: keel";
/// How the model's answer begins when read-only mode refuses a call.
pub const READ_ONLY: &str = "keel is in read-only mode";

/// The result the model gets when the person says no.
pub const DECLINED: &str =
    "The user declined to run this tool call. Ask them what they would like to do instead.";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::mcp::Hub;
    use std::sync::Arc;

    fn tool(name: &str) -> Arc<dyn Tool> {
        ToolSet::new(true, Hub::default()).find(name).unwrap()
    }

    fn check(approvals: &Approvals, name: &str, input: &Value) -> Verdict {
        approvals.check(&*tool(name), input, &ToolSet::new(true, Hub::default()))
    }

    #[test]
    fn an_edit_that_changes_nothing_needs_no_approval() {
        let approvals = Approvals::new(ApprovalMode::Ask);
        let same = json!({"path": "a.txt", "old_text": "x = 1", "new_text": "x = 1"});
        assert_eq!(check(&approvals, "edit_file", &same), Verdict::Run);
        let change = json!({"path": "a.txt", "old_text": "x = 1", "new_text": "x = 2"});
        assert_eq!(check(&approvals, "edit_file", &change), Verdict::Ask);
        let no_texts = json!({"path": "a.txt"});
        assert_eq!(check(&approvals, "edit_file", &no_texts), Verdict::Ask);
        let write = json!({"path": "a.txt", "old_text": "x", "new_text": "x", "content": "y"});
        assert_eq!(check(&approvals, "write_file", &write), Verdict::Ask);
    }
    use serde_json::json;

    #[test]
    fn reads_and_todos_never_ask() {
        for mode in [ApprovalMode::Ask, ApprovalMode::ReadOnly, ApprovalMode::Auto] {
            let approvals = Approvals::new(mode);
            assert_eq!(check(&approvals, "read_file", &json!({"path": "a"})), Verdict::Run);
            assert_eq!(check(&approvals, "todo", &json!({"items": []})), Verdict::Run);
        }
    }

    #[test]
    fn modes_decide_for_commands_and_writes() {
        let bash = json!({"command": "ls"});
        assert_eq!(check(&Approvals::new(ApprovalMode::Auto), "bash", &bash), Verdict::Run);
        assert_eq!(check(&Approvals::new(ApprovalMode::Ask), "bash", &bash), Verdict::Ask);
        assert!(matches!(
            check(&Approvals::new(ApprovalMode::ReadOnly), "write_file", &json!({})),
            Verdict::Refuse(Refusal::ReadOnly, text) if text.contains("read-only")
        ));
    }

    #[test]
    fn without_a_sandbox_no_command_runs_unasked() {
        use crate::runtime::sandbox::{Availability, Policy};
        let missing = Sandbox {
            policy: Policy::default(),
            availability: Availability::Missing("cannot sandbox commands: no bwrap".into()),
            ..Sandbox::off()
        };
        let bash = json!({"command": "ls"});
        let auto = Approvals::new(ApprovalMode::Auto).with_sandbox(&missing);
        assert!(matches!(
            check(&auto, "bash", &bash),
            Verdict::Refuse(Refusal::NoSandbox, why) if why.contains("no bwrap")
        ));
        assert_eq!(check(&auto, "write_file", &json!({})), Verdict::Run);
        let mut ask = Approvals::new(ApprovalMode::Ask).with_sandbox(&missing);
        assert_eq!(ask.always_covers(&*tool("bash"), &bash), None);
        ask.allow_always(&*tool("bash"), &bash);
        assert_eq!(check(&ask, "bash", &bash), Verdict::Ask);
        // The person's own choice: unconfined, and approvals as usual.
        let off = Approvals::new(ApprovalMode::Auto).with_sandbox(&Sandbox::off());
        assert_eq!(check(&off, "bash", &bash), Verdict::Run);
    }

    #[test]
    fn always_covers_one_kind_of_simple_command_only() {
        let mut approvals = Approvals::new(ApprovalMode::Ask);
        let bash = |command: &str| json!({ "command": command });
        approvals.allow_always(&*tool("bash"), &bash("git log --oneline -1"));
        assert_eq!(check(&approvals, "bash", &bash("git log -p")), Verdict::Run);
        // A command that may write is allowed exactly, never by its shape.
        assert_eq!(
            check(&approvals, "bash", &bash("git log --output=/home/x/.bashrc")),
            Verdict::Ask
        );
        approvals.allow_always(&*tool("bash"), &bash("cargo test"));
        assert_eq!(check(&approvals, "bash", &bash("cargo test")), Verdict::Run);
        for asked in [
            "cargo test --release",
            "cargo build",
            "rm -rf x",
            "cargo test && touch X",
            "cargo test\ntouch X",
            "cargo test $(touch X)",
            "cargo test > out",
        ] {
            assert_eq!(check(&approvals, "bash", &bash(asked)), Verdict::Ask, "{asked}");
        }
        approvals.allow_always(&*tool("bash"), &bash("ls; touch X"));
        assert_eq!(check(&approvals, "bash", &bash("ls; touch X")), Verdict::Ask);
        assert!(approvals.always_covers(&*tool("bash"), &bash("ls | sh")).is_none());
        let covers = approvals.always_covers(&*tool("bash"), &bash("git status -s")).unwrap();
        assert!(covers.starts_with("`git status` commands that only read"), "{covers}");
        let covers = approvals.always_covers(&*tool("bash"), &bash("touch x")).unwrap();
        assert!(covers.starts_with("exactly this command line"), "{covers}");
        approvals.allow_always(&*tool("edit_file"), &json!({"path": "a"}));
        assert_eq!(check(&approvals, "edit_file", &json!({"path": "b"})), Verdict::Run);
        assert_eq!(check(&approvals, "write_file", &json!({"path": "b"})), Verdict::Ask);
    }
}
