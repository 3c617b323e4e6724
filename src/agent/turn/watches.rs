//! What a conversation asks of the workspace's sandbox and repository watches (`Services`): the
//! sandbox's probe waited for where a command needs its answer, the sandbox a command may start
//! in before it, and the `.git/commondir` a command may have left, looked at after it and as the
//! turn ends. Each tells the conversation ([`Handle`]) what it found.

use crate::agent::approval::Verdict;
use crate::agent::event::AgentEvent;
use crate::agent::services::Services;
use crate::agent::state::State;
use crate::agent::turn::handle::{Handle, Parts, Shared};
use crate::runtime::Sandbox;
use crate::tools::{Effect, Tool, ToolOutcome};
use serde_json::Value;

/// Waits for the sandbox's probe, if it has not answered yet: before a command is checked,
/// since what commands may do depends on it. The status bar (`state`) learns its answer.
pub(in crate::agent) async fn settle_sandbox(services: &Services, state: &mut State) {
    if let Some(label) = services.settle_sandbox().await {
        state.set_sandbox(label);
    }
}

/// The sandbox a command starts in while the sandbox's probe still runs: the one the probe
/// finds where `bwrap` works, for a command that runs without asking and under no read-only
/// rules (plan mode's, a child's: the read-only sandbox is the probed one). `None`: the
/// command waits for the probe's answer.
pub(in crate::agent) fn assumed_sandbox(
    conv: &Handle<'_>,
    shared: Shared<'_>,
    tool: &dyn Tool,
    input: &Value,
) -> Option<Sandbox> {
    if tool.effect() != Effect::RunsCommand
        || shared.services.sandbox_known()
        || conv.read_only_rules().is_some()
    {
        return None;
    }
    let (sandbox, proven) = shared.tools.probing_sandbox().ready_or_assumed();
    let verdict = shared.services.approvals().check(tool, input, conv.toolset);
    (!proven && verdict == Verdict::Run).then(|| sandbox.clone())
}

/// As a turn ends: a `.git/commondir` a background job of its commands wrote since the last one
/// ended is removed, and the person told as of an error (`-p` prints it too). Whether it was
/// removed once before in this session: then it was made again.
pub(in crate::agent) fn look_at_repository_again((mut conv, shared): Parts<'_>) -> bool {
    let (found, again) = shared.services.look_at_repository();
    if let Some(found) = found {
        conv.emit(AgentEvent::Error { text: found });
    }
    again
}

/// After a command: a `.git/commondir` that appeared is removed, and its answer says so, as does
/// an error for the person (`-p` prints it too).
pub(in crate::agent) fn look_at_repository(
    (mut conv, shared): Parts<'_>,
    outcome: &mut ToolOutcome,
) {
    if let (Some(found), _) = shared.services.look_at_repository() {
        for text in [&mut outcome.for_model, &mut outcome.for_display] {
            text.push_str("\n\n");
            text.push_str(&found);
        }
        conv.emit(AgentEvent::Error { text: found });
    }
}
