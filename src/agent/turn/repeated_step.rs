//! The repeated-step guard: a `write_file` of the content the file already has, or an
//! `edit_file` already applied, changes nothing and tells the model the step is done — in which
//! round and under which board item (`steps_done`). It is answered before any approval: there is
//! nothing to approve. A call that runs without asking finds it out as it runs (the tool works
//! out its change anyway, and a repeat writes nothing), and is told the same after it.

use crate::agent::approval::Verdict;
use crate::agent::state::State;
use crate::agent::steps_done::{self, Repeated};
use crate::agent::turn::road::CallContext;
use crate::tools::{Tool, ToolCall, ToolOutcome, Tools};

/// The answer to a write or an edit that would repeat a step already done, before it is asked
/// for or refused (`verdict`); `None` for any other call, and for one that runs without asking
/// (its own run says what happens: [`tell_when_done`]).
pub(in crate::agent) async fn repeated_step(
    cx: &CallContext<'_>,
    verdict: &Verdict,
) -> Option<ToolOutcome> {
    let on = &*cx.on;
    if matches!(verdict, Verdict::Run) || !on.effect.records_its_changes() {
        return None;
    }
    let (tool, input) = (on.tool.clone(), on.call.input.clone());
    let workspace = cx.shared.tools.workspace().clone();
    // Planning reads the file: off the async threads, as the tools themselves do.
    let planned = tokio::task::spawn_blocking(move || tool.planned_change(&input, &workspace))
        .await
        .ok()??;
    let (plan, repeated) = planned;
    plan.repeat?;
    let step = cx.conv.state.find_step(&plan.display, repeated);
    Some(ToolOutcome::ok(format!("{} {}", plan.report(), steps_done::when_done(step))))
}

/// Tells a call that ran without asking, and found its step already done, when that step was
/// done (the steps `state` noted): the same answer [`repeated_step`] gives before asking.
pub(in crate::agent) fn tell_when_done(
    state: &State,
    tool: &dyn Tool,
    call: &ToolCall,
    outcome: &mut ToolOutcome,
) {
    let Some(path) = outcome.already_done.take() else { return };
    let Some(repeated) = tool.repeat_of(&call.input) else { return };
    let when = steps_done::when_done(state.find_step(&path, repeated));
    *outcome = ToolOutcome::ok(format!("{} {when}", outcome.for_model));
}

/// Notes in `state` the files a write or an edit on `tools` changed, for the repeated-step
/// answer.
pub(in crate::agent) fn note_steps(
    state: &mut State,
    tools: &Tools,
    tool: &dyn Tool,
    call: &ToolCall,
    outcome: &ToolOutcome,
) {
    let edit = match tool.repeat_of(&call.input) {
        Some(Repeated::Edit(digest)) => Some(digest),
        Some(Repeated::Content(_)) => None,
        None => return,
    };
    for change in &outcome.changes {
        let path = tools.workspace().display(&change.path);
        state.record_step(path, steps_done::content_digest(&change.after), edit);
    }
}
