//! Plan mode (`--plan`, Shift+Tab): the model may read — `read_file`, and `bash` — but not change
//! anything, and it ends its turn with a plan on the board. The person edits that board and
//! approves it; the approved board then drives the work, in plan mode no more.
//!
//! Commands run in the read-only sandbox, so any command may run and none can write (but to a
//! private `/tmp`). Where there is no sandbox (the person turned it off, or it cannot be set
//! up), only commands the guard proves read-only may run (`tools::guard::check_read_only`).
//!
//! Plan mode only ever tightens what `--approval` allows: a read-only command still asks in
//! `ask` mode, and `read-only` still refuses every command.

use crate::agent::board_edits;
use crate::agent::turn::task::Agent;
use crate::tools::sandbox::{Confinement, Sandbox};
use crate::tools::{ToolName, guard};
use serde_json::Value;

/// Added after each prompt in plan mode, so the model knows what it may do.
pub const PLAN_NOTE: &str = "<plan-mode>Plan mode: read what you need (read_file, and bash only \
for commands that just read, such as ls, cat, grep, find or git log), then put the whole plan on \
the board with todo and stop. Change nothing: the person approves the plan first.</plan-mode>";

/// How the model's answer begins when plan mode refuses a call.
pub const REFUSED: &str = "Plan mode: ";

/// The prompt that starts the work once the person approves the plan; the board follows it.
pub const APPROVED: &str =
    "The plan is approved. Carry it out step by step, keeping the board up to date:";

/// Why a call may not run in plan mode, where commands run in `sandbox` (made read-only);
/// `None` when it may.
pub fn refusal(tool: &ToolName, input: &Value, sandbox: &Sandbox) -> Option<String> {
    match tool {
        ToolName::WriteFile | ToolName::EditFile => Some(format!(
            "{REFUSED}`{tool}` is not allowed, since nothing may change until the person \
             approves the plan. Put this change on the board as a step instead."
        )),
        ToolName::Bash if sandbox.confinement() == Confinement::Confined => None,
        ToolName::Bash => {
            let command = input.get("command").and_then(Value::as_str).unwrap_or_default();
            guard::check_read_only(command).err().map(|why| {
                format!(
                    "{REFUSED}only commands that just read may run until the person approves \
                     the plan, and this one does not: {why}. Put it on the board as a step instead."
                )
            })
        }
        // Whether the server marks the tool read-only is the tool round's to check.
        ToolName::ReadFile | ToolName::Todo | ToolName::Mcp(_) | ToolName::Unknown(_) => None,
    }
}

/// Why a call of an MCP tool may not run in plan mode: its server does not mark it read-only.
pub fn mcp_refusal(tool: &ToolName, read_only: bool) -> Option<String> {
    (!read_only).then(|| {
        format!(
            "{REFUSED}`{tool}` is not allowed, since its MCP server does not mark it read-only \
             (readOnlyHint) and nothing may change until the person approves the plan. Put it on \
             the board as a step instead."
        )
    })
}

impl Agent {
    /// At the end of a turn in plan mode the board is the plan: it waits for the person (if
    /// there is one), and printing front ends get it as one more `todo` event.
    pub(in crate::agent) fn end_plan_turn(&mut self) {
        if !self.state.view().plan_mode {
            return;
        }
        let ready = !self.state.view().board.is_empty();
        self.emit(board_edits::todo_event(&self.state));
        self.state.set_plan_ready(ready);
    }

    /// The prompt that hands the approved board to the model.
    pub(in crate::agent) fn approval_prompt(&self) -> String {
        format!("{APPROVED}\n\n{}", self.state.view().board.render())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn plan_mode_refuses_changes_and_commands_that_do_not_only_read() {
        let off = Sandbox::off();
        for tool in [ToolName::WriteFile, ToolName::EditFile] {
            let why = refusal(&tool, &json!({"path": "a"}), &off).unwrap();
            assert!(why.contains("nothing may change"));
        }
        let bash = |command: &str| refusal(&ToolName::Bash, &json!({ "command": command }), &off);
        assert_eq!(bash("git log --oneline | head"), None);
        assert!(bash("echo x > a.txt").unwrap().contains("redirects output to `a.txt`"));
        assert!(bash("cargo build").unwrap().contains("`cargo` is not one"));
        assert_eq!(refusal(&ToolName::ReadFile, &json!({"path": "a"}), &off), None);
        assert_eq!(refusal(&ToolName::Todo, &json!({"items": []}), &off), None);
    }
}
