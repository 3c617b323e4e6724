//! The read-only rules a child agent may run under, and why: an explorer always (it only
//! reads), a child of a conversation in plan mode (nothing may change until the plan is
//! approved). The child's tool set carries the reason (`ToolSet::for_child`); its calls are
//! judged here at the road's prepare stage, as plan mode's are in `agent::plan_mode`, and its
//! commands run in the read-only sandbox (`turn::handle::tools_for_call`). The approval mode is the
//! session's own, so a child of `--approval read-only` is refused what its parent would be.

use crate::agent::approval::read_only;
use crate::tools::{Effect, Tool};
use serde_json::Value;

/// Why an explorer's change is refused.
pub const EXPLORER: &str =
    "this child agent explores and only reads. Report what should change instead.";
/// Why the change of a child of a conversation in plan mode is refused.
pub const UNDER_PLAN_MODE: &str = "the agent that started this child is in plan mode, so \
nothing may change until the person approves the plan. Report what you would change instead.";

/// Why a call of `tool` may not run under read-only rules (`why`: the rules' reason); `None`
/// when it may. `confined`: its commands run in the read-only sandbox, so any may run and none
/// can write.
pub fn refusal(tool: &dyn Tool, input: &Value, confined: bool, why: &str) -> Option<String> {
    let name = tool.name();
    match tool.effect() {
        Effect::RunsCommand if confined => None,
        Effect::RunsCommand => {
            let command = tool.command(input).unwrap_or_default();
            read_only::check_read_only(command).err().map(|not| {
                format!("Only commands that just read may run, and this one does not: {not}; {why}")
            })
        }
        Effect::ReachesOutside { marked_read_only: false } => Some(format!(
            "`{name}` is not allowed, since its MCP server does not mark it read-only \
             (readOnlyHint): {why}"
        )),
        Effect::Reads | Effect::ReachesOutside { marked_read_only: true } => None,
        // Writes, the board, a child of its own: none is a read-only child's.
        _ => Some(format!("`{name}` is not allowed: {why}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::ToolSet;
    use crate::tools::mcp::Hub;
    use serde_json::json;

    fn refusal_of(name: &str, input: &Value, confined: bool) -> Option<String> {
        let set = ToolSet::new(true, Hub::default());
        refusal(&*set.find(name).unwrap(), input, confined, EXPLORER)
    }

    #[test]
    fn writes_are_refused_with_the_reason_and_commands_judged_by_where_they_run() {
        let write = refusal_of("write_file", &json!({"path": "a", "content": "x"}), true).unwrap();
        assert_eq!(
            write,
            "`write_file` is not allowed: this child agent explores and only reads. Report what \
             should change instead."
        );
        let touch = json!({"command": "touch x"});
        assert_eq!(refusal_of("bash", &touch, true), None, "the read-only sandbox stops it");
        let unconfined = refusal_of("bash", &touch, false).unwrap();
        assert!(unconfined.starts_with("Only commands that just read"), "{unconfined}");
        assert_eq!(refusal_of("bash", &json!({"command": "ls"}), false), None);
        assert_eq!(refusal_of("read_file", &json!({"path": "a"}), false), None);
        assert!(refusal_of("task", &json!({"prompt": "x"}), true).is_some());
        assert!(refusal_of("mcp__fs__write", &json!({}), true).unwrap().contains("readOnlyHint"));
    }
}
