//! Plan mode's rules (`--plan`, Shift+Tab): the model may read — `read_file`, and `bash` — but not change
//! anything, and it ends its turn with a plan on the board. The person edits that board and
//! approves it; the approved board then drives the work, in plan mode no more.
//!
//! Commands run in the read-only sandbox, so any command may run and none can write (but to a
//! private `/tmp`). Where there is no sandbox (the person turned it off, or it cannot be set
//! up), only commands the guard proves read-only may run (`approval::read_only`).
//!
//! Plan mode only ever tightens what `--approval` allows: a read-only command still asks in
//! `ask` mode, and `read-only` still refuses every command.

use crate::agent::approval::read_only;
use crate::tags::Tag;
use crate::tools::task::Delegation;
use crate::tools::{Effect, Tool, ToolSet};
use serde_json::Value;

/// The note added after each prompt in plan mode, so the model knows what it may do: the tools of
/// `set` that only read, and its commands for those that just read.
pub fn note(set: &ToolSet) -> String {
    let reading = set.with_effect(|effect| effect == Effect::Reads).into_iter().map(str::to_owned);
    let commands = set
        .with_effect(|effect| effect == Effect::RunsCommand)
        .into_iter()
        .map(|name| format!("{name} only for commands that just read, such as ls, cat or git log"));
    let may: Vec<String> = reading.chain(commands).collect();
    let may = match may.as_slice() {
        [] => "nothing".to_owned(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{}, and {last}", rest.join(", ")),
    };
    Tag::PlanMode.wrap(&format!(
        "Plan mode: read what you need ({may}), then put the whole plan on the board with todo \
         and stop. Change nothing: the person approves the plan first."
    ))
}

/// How the model's answer begins when plan mode refuses a call.
pub const REFUSED: &str = "Plan mode: ";

/// Why a call of `tool` may not run in plan mode; `None` when it may. `confined`: its commands
/// run in the read-only sandbox, so that any command may run and none can write.
pub fn refusal(tool: &dyn Tool, input: &Value, confined: bool) -> Option<String> {
    let name = tool.name();
    match tool.effect_of(input) {
        Effect::WritesFiles => Some(format!(
            "{REFUSED}`{name}` is not allowed, since nothing may change until the person \
             approves the plan. Put this change on the board as a step instead."
        )),
        Effect::RunsCommand if confined => None,
        Effect::RunsCommand => {
            let command = tool.command(input).unwrap_or_default();
            read_only::check_read_only(command).err().map(|why| {
                format!(
                    "{REFUSED}only commands that just read may run until the person approves \
                     the plan, and this one does not: {why}. Put it on the board as a step instead."
                )
            })
        }
        Effect::ReachesOutside { marked_read_only: false } => Some(format!(
            "{REFUSED}`{name}` is not allowed, since its MCP server does not mark it read-only \
             (readOnlyHint) and nothing may change until the person approves the plan. Put it on \
             the board as a step instead."
        )),
        // A child of a plan-mode conversation runs under read-only rules; an item is work the
        // plan has yet to be approved for.
        effect if effect.starts_child() => Delegation::decode(input).ok()?.item().map(|item| {
            format!(
                "{REFUSED}item #{item} cannot be handed to a child until the person approves \
                 the plan. Call task without an item to explore what the plan needs."
            )
        }),
        // Reading, the board, and what reaches out marked read-only.
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::mcp::Hub;
    use serde_json::json;

    fn refusal_of(name: &str, input: &Value) -> Option<String> {
        let set = ToolSet::new(true, Hub::default());
        refusal(&*set.find(name).unwrap(), input, false)
    }

    #[test]
    fn the_note_names_what_the_set_reads_with() {
        let set = ToolSet::new(true, Hub::default());
        assert_eq!(
            note(&set),
            "<plan-mode>Plan mode: read what you need (read_file, grep, glob, and bash only for \
             commands that just read, such as ls, cat or git log), then put the whole plan on the \
             board with todo and stop. Change nothing: the person approves the plan \
             first.</plan-mode>"
        );
    }

    #[test]
    fn the_note_is_what_a_model_is_told_to_recognise() {
        assert!(crate::prompt::is_plan_note(&note(&ToolSet::new(true, Hub::default()))));
    }

    #[test]
    fn plan_mode_refuses_changes_and_commands_that_do_not_only_read() {
        for tool in ["write_file", "edit_file"] {
            let why = refusal_of(tool, &json!({"path": "a"})).unwrap();
            assert!(why.contains("nothing may change"));
        }
        let bash = |command: &str| refusal_of("bash", &json!({ "command": command }));
        assert_eq!(bash("git log --oneline | head"), None);
        assert!(bash("echo x > a.txt").unwrap().contains("redirects output to `a.txt`"));
        assert!(bash("cargo build").unwrap().contains("`cargo` is not one"));
        assert_eq!(refusal_of("read_file", &json!({"path": "a"})), None);
        assert_eq!(refusal_of("todo", &json!({"items": []})), None);
        assert_eq!(refusal_of("task", &json!({"prompt": "look"})), None);
        let item = refusal_of("task", &json!({"prompt": "do", "item": "2"})).unwrap();
        assert!(item.contains("item #2 cannot be handed"), "{item}");
        let mcp = refusal_of("mcp__fs__write", &json!({})).unwrap();
        assert!(mcp.contains("readOnlyHint"), "{mcp}");
    }
}
