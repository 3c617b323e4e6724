//! The repeated-step guard: a `write_file` of the content the file already has, or an
//! `edit_file` already applied, changes nothing and tells the model the step is done — in which
//! round and under which board item (`steps_done`). It is answered before any approval: there is
//! nothing to approve. A call that runs without asking finds it out as it runs (the tool works
//! out its change anyway, and a repeat writes nothing), and is told the same after it.

use crate::agent::approval::Verdict;
use crate::agent::steps_done::{self, Repeated};
use crate::agent::turn::task::Agent;
use crate::tools::{Invocation, ToolCall, ToolName, ToolOutcome, Tools, files};
use serde_json::Value;

impl Agent {
    /// The answer to a write or an edit that would repeat a step already done, before it is
    /// asked for or refused (`verdict`); `None` for any other call, and for one that runs
    /// without asking (its own run says what happens: [`Agent::tell_when_done`]).
    pub(in crate::agent) async fn repeated_step(
        &self,
        call: &ToolCall,
        verdict: &Verdict,
    ) -> Option<ToolOutcome> {
        if matches!(verdict, Verdict::Run) {
            return None;
        }
        let invocation = match Tools::parse(&call.name, &call.input).ok()? {
            invocation @ (Invocation::WriteFile(_) | Invocation::EditFile(_)) => invocation,
            Invocation::Bash(_)
            | Invocation::ReadFile(_)
            | Invocation::Grep(_)
            | Invocation::Glob(_) => return None,
        };
        let workspace = self.tools.workspace().clone();
        // Planning reads the file: off the async threads, as the tools themselves do.
        let planned = tokio::task::spawn_blocking(move || match invocation {
            Invocation::WriteFile(args) => files::plan_write(&workspace, &args).ok().map(|plan| {
                (plan, Repeated::Content(steps_done::content_digest(args.content.as_bytes())))
            }),
            Invocation::EditFile(args) => files::plan_edit(&workspace, &args).ok().map(|plan| {
                (plan, Repeated::Edit(steps_done::edit_digest(&args.old_text, &args.new_text)))
            }),
            Invocation::Bash(_)
            | Invocation::ReadFile(_)
            | Invocation::Grep(_)
            | Invocation::Glob(_) => None,
        })
        .await
        .ok()??;
        let (plan, repeated) = planned;
        plan.repeat?;
        let step = self.state.find_step(&plan.display, repeated);
        Some(ToolOutcome::ok(format!("{} {}", plan.report(), steps_done::when_done(step))))
    }

    /// Tells a call that ran without asking, and found its step already done, when that step
    /// was done: the same answer [`Agent::repeated_step`] gives before asking.
    pub(in crate::agent) fn tell_when_done(&self, call: &ToolCall, outcome: &mut ToolOutcome) {
        let Some(path) = outcome.already_done.take() else { return };
        let text = |key| call.input.get(key).and_then(Value::as_str).unwrap_or_default();
        let repeated = match call.name {
            ToolName::WriteFile => {
                Repeated::Content(steps_done::content_digest(text("content").as_bytes()))
            }
            ToolName::EditFile => {
                Repeated::Edit(steps_done::edit_digest(text("old_text"), text("new_text")))
            }
            _ => return,
        };
        let when = steps_done::when_done(self.state.find_step(&path, repeated));
        *outcome = ToolOutcome::ok(format!("{} {when}", outcome.for_model));
    }

    /// Notes the files a write or an edit changed, for the repeated-step answer.
    pub(in crate::agent) fn note_steps(&mut self, call: &ToolCall, outcome: &ToolOutcome) {
        let edit = match call.name {
            ToolName::WriteFile => None,
            ToolName::EditFile => {
                let text = |key| call.input.get(key).and_then(Value::as_str).unwrap_or_default();
                Some(steps_done::edit_digest(text("old_text"), text("new_text")))
            }
            _ => return,
        };
        for change in &outcome.changes {
            let path = self.tools.workspace().display(&change.path);
            self.state.record_step(path, steps_done::content_digest(&change.after), edit);
        }
    }
}
