//! Claude Code's hook protocol, both ways: the JSON a hook reads on its stdin (the fields every
//! event has, [`Common`], and the event's own), and what its answer means — [`judge`] reads one
//! run's exit and output into a [`Reply`].
//!
//! The rules, as in Claude Code: exit 0 is success, and stdout that is a JSON object is read
//! for `decision: "block"` with `reason`, `hookSpecificOutput` (PreToolUse's
//! `permissionDecision` allow / deny / ask with `permissionDecisionReason` and `updatedInput`;
//! `additionalContext`) and `systemMessage` (shown to the person); for SessionStart and
//! UserPromptSubmit, plain stdout is context for the model. Exit 2 blocks, with stderr as the
//! reason. Any other exit is shown to the person, and what the hook guards goes on. keel adds
//! one rule of its own: where an event fails closed ([`Guard::FailsClosed`]), a hook that cannot
//! start (the shell's exit 126 or 127 included: what it names is not executable, or missing), is
//! killed or times out blocks, saying which hook and why.

use super::events::{Event, Guard};
use super::run::{Ending, Output, seconds};
use crate::tools::output::{CappedBuffer, MODEL_OUTPUT_LIMIT};
use serde::Serialize;
use serde_json::{Map, Value};

/// The shell's exit when the program it was to run is not executable, and when there is none.
const NOT_EXECUTABLE: i32 = 126;
const NOT_FOUND: i32 = 127;

/// The fields every event's input has.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Common {
    pub session_id: String,
    /// The session's log (keel's own JSON lines), or empty when the session is not saved.
    pub transcript_path: String,
    pub cwd: String,
    /// `default` (keel asks), `plan`, `bypassPermissions` (auto) or `readOnly`.
    pub permission_mode: String,
}

/// The JSON a hook of `event` reads: the common fields, `hook_event_name`, then the event's own.
pub fn input(event: Event, common: &Common, fields: Map<String, Value>) -> Vec<u8> {
    let mut object = match serde_json::to_value(common) {
        Ok(Value::Object(map)) => map,
        _ => Map::new(),
    };
    object.insert("hook_event_name".into(), Value::String(event.name().into()));
    object.extend(fields);
    serde_json::to_vec(&Value::Object(object)).unwrap_or_default()
}

/// What a PreToolUse hook decided about the call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Permission {
    /// Run it without asking the person (keel's own rules still hold).
    Allow,
    /// Ask the person, whatever the approval mode says.
    Ask(Option<String>),
}

/// What one run of a hook amounts to.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// It ran and has nothing against what it guards.
    Fine,
    /// It blocks what it guards; the text is its reason (for the model, where the event has
    /// one to tell).
    Blocked(String),
    /// It failed; the text, for the person, says how. What it guards goes on.
    Failed(String),
}

/// One run's answer, read.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    pub verdict: Verdict,
    pub permission: Option<Permission>,
    pub updated_input: Option<Value>,
    /// Text for the model: `additionalContext`, or plain stdout where that is context.
    pub context: Option<String>,
    /// `systemMessage`: for the person.
    pub message: Option<String>,
}

impl Reply {
    /// A reply that is only a verdict.
    pub fn verdict(verdict: Verdict) -> Self {
        Self { verdict, permission: None, updated_input: None, context: None, message: None }
    }
}

/// Reads what the hook `command` of `event` did.
pub fn judge(event: Event, command: &str, output: &Output) -> Reply {
    let failure = match &output.ending {
        Ending::Exited(0) => return success(event, command, &output.stdout),
        Ending::Exited(2) => {
            let said = text(&output.stderr);
            let said = if said.is_empty() {
                format!("the hook `{command}` exited 2 without a reason on stderr")
            } else {
                said
            };
            return Reply::verdict(if event.can_block() {
                Verdict::Blocked(said)
            } else {
                Verdict::Failed(format!("exit 2: {said}"))
            });
        }
        // The shell could not run what the hook names: the hook did not start.
        Ending::Exited(code @ (NOT_EXECUTABLE | NOT_FOUND)) => {
            let said = text(&output.stderr);
            format!("could not start (exit {code}{})", colon(&said))
        }
        Ending::Exited(code) => {
            let said = text(&output.stderr);
            return Reply::verdict(Verdict::Failed(format!("exit {code}{}", colon(&said))));
        }
        Ending::Signalled(signal) => format!("was killed by signal {signal}"),
        Ending::TimedOut(after) => format!("timed out after {}", seconds(*after)),
        Ending::NotStarted(why) => format!("could not start: {why}"),
        Ending::Lost => "was lost: its supervisor ended without a word".to_owned(),
    };
    Reply::verdict(match event.guard() {
        Guard::FailsClosed => Verdict::Blocked(format!("the hook `{command}` {failure}")),
        Guard::Blocks | Guard::Watches => Verdict::Failed(failure),
    })
}

/// `: text`, or nothing when there is no text.
fn colon(said: &str) -> String {
    if said.is_empty() { String::new() } else { format!(": {said}") }
}

/// Exit 0: the JSON answer, or plain text.
fn success(event: Event, command: &str, stdout: &CappedBuffer) -> Reply {
    let mut reply = Reply::verdict(Verdict::Fine);
    let Some(answer) = json_answer(stdout) else {
        let said = text(stdout);
        if event.stdout_is_context() && !said.is_empty() {
            reply.context = Some(said);
        }
        return reply;
    };
    let string = |value: Option<&Value>| value.and_then(Value::as_str).map(capped);
    let specific = answer.get("hookSpecificOutput").and_then(Value::as_object);
    let specific_field = |name: &str| specific.and_then(|map| map.get(name));
    let reason = string(answer.get("reason"))
        .or_else(|| string(specific_field("permissionDecisionReason")))
        .filter(|reason| !reason.trim().is_empty());
    let blocked = || {
        Verdict::Blocked(
            reason.clone().unwrap_or_else(|| format!("blocked by the hook `{command}`")),
        )
    };
    match answer.get("decision").and_then(Value::as_str) {
        Some("block") if event.can_block() => reply.verdict = blocked(),
        Some("approve") if event == Event::PreToolUse => reply.permission = Some(Permission::Allow),
        _ => {}
    }
    if event == Event::PreToolUse {
        match string(specific_field("permissionDecision")).as_deref() {
            Some("deny") => reply.verdict = blocked(),
            Some("allow") => reply.permission = Some(Permission::Allow),
            Some("ask") => reply.permission = Some(Permission::Ask(reason.clone())),
            _ => {}
        }
        reply.updated_input = specific_field("updatedInput").filter(|v| v.is_object()).cloned();
    }
    reply.context = string(specific_field("additionalContext")).filter(|c| !c.trim().is_empty());
    reply.message = string(answer.get("systemMessage")).filter(|m| !m.trim().is_empty());
    reply
}

/// Stdout as a JSON object, when it is one, whole.
fn json_answer(stdout: &CappedBuffer) -> Option<Map<String, Value>> {
    let rendered = stdout.render(super::run::STDOUT_LIMIT);
    if stdout.total() != rendered.len() as u64 || !rendered.trim_start().starts_with('{') {
        return None;
    }
    match serde_json::from_str(rendered.trim()) {
        Ok(Value::Object(map)) => Some(map),
        _ => None,
    }
}

/// A hook's words as the model or the person reads them: at most what the model reads of a
/// command's output.
fn capped(text: &str) -> String {
    let mut text = text.trim().to_owned();
    if text.len() > MODEL_OUTPUT_LIMIT {
        crate::tools::output::truncate_at_char(&mut text, MODEL_OUTPUT_LIMIT);
        text.push_str(" … (cut)");
    }
    text
}

/// A stream as text for the model or the person: trimmed, and at most what the model reads of a
/// command's output, its start and end kept.
pub fn text(stream: &CappedBuffer) -> String {
    stream.render(MODEL_OUTPUT_LIMIT).trim().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn output(ending: Ending, stdout: &str, stderr: &str) -> Output {
        let mut out = CappedBuffer::new(super::super::run::STDOUT_LIMIT);
        out.push(stdout.as_bytes());
        let mut err = CappedBuffer::new(super::super::run::STDERR_LIMIT);
        err.push(stderr.as_bytes());
        Output { ending, stdout: out, stderr: err, took: Duration::ZERO }
    }

    #[test]
    fn exit_two_blocks_with_stderr_where_the_event_can_block() {
        let two = output(Ending::Exited(2), "ignored", "not on main\n");
        assert_eq!(
            judge(Event::PreToolUse, "c", &two).verdict,
            Verdict::Blocked("not on main".into())
        );
        assert_eq!(judge(Event::Stop, "c", &two).verdict, Verdict::Blocked("not on main".into()));
        assert_eq!(
            judge(Event::SessionStart, "c", &two).verdict,
            Verdict::Failed("exit 2: not on main".into())
        );
        let one = output(Ending::Exited(1), "", "oops");
        assert_eq!(
            judge(Event::PreToolUse, "c", &one).verdict,
            Verdict::Failed("exit 1: oops".into())
        );
    }

    #[test]
    fn guarded_events_fail_closed_and_say_which_hook_and_why() {
        let late = output(Ending::TimedOut(Duration::from_secs(2)), "", "");
        assert_eq!(
            judge(Event::PreToolUse, "./slow.sh", &late).verdict,
            Verdict::Blocked("the hook `./slow.sh` timed out after 2 s".into())
        );
        let killed = output(Ending::Signalled(9), "", "");
        assert!(
            matches!(judge(Event::TaskCompleted, "x", &killed).verdict, Verdict::Blocked(why) if why.contains("signal 9"))
        );
        assert_eq!(
            judge(Event::PostToolUse, "x", &late).verdict,
            Verdict::Failed("timed out after 2 s".into())
        );
    }

    #[test]
    fn json_decisions_are_read() {
        let deny = r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no rm"}}"#;
        let reply = judge(Event::PreToolUse, "c", &output(Ending::Exited(0), deny, ""));
        assert_eq!(reply.verdict, Verdict::Blocked("no rm".into()));
        let allow = r#"{"hookSpecificOutput":{"permissionDecision":"allow","updatedInput":{"command":"ls -a"},"additionalContext":"fyi"}}"#;
        let reply = judge(Event::PreToolUse, "c", &output(Ending::Exited(0), allow, ""));
        assert_eq!(reply.permission, Some(Permission::Allow));
        assert_eq!(reply.updated_input, Some(serde_json::json!({"command": "ls -a"})));
        assert_eq!(reply.context.as_deref(), Some("fyi"));
        let block = r#"{"decision":"block","reason":"tests fail","systemMessage":"hi"}"#;
        let reply = judge(Event::Stop, "c", &output(Ending::Exited(0), block, ""));
        assert_eq!(reply.verdict, Verdict::Blocked("tests fail".into()));
        assert_eq!(reply.message.as_deref(), Some("hi"));
        // Plain text is context only where Claude Code makes it so.
        let plain = output(Ending::Exited(0), "branch: main\n", "");
        assert_eq!(
            judge(Event::UserPromptSubmit, "c", &plain).context.as_deref(),
            Some("branch: main")
        );
        assert_eq!(judge(Event::PostToolUse, "c", &plain).context, None);
    }
}
