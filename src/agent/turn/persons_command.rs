//! `!command`: a command the person runs from the prompt, between turns. It runs as the
//! model's commands do — through the `bash` tool, so the guard judges it and the sandbox
//! confines it (plan mode's read-only one in plan mode), with no controlling terminal and no
//! provider keys — and shows as they do, in the conversation and the tool pane (Ctrl+G for
//! its whole output). It is the person's own, so it is not asked about; where no sandbox can
//! be set up it runs only if the person turned the sandbox off. What the model read of it is
//! owed to the model with its next request (`state::model_notes`).

use crate::agent::event::AgentEvent;
use crate::agent::snapshot::{Activity, ToolStatus};
use crate::agent::turn::handle::tools_for_call;
use crate::agent::turn::road::{Live, run_live};
use crate::agent::turn::{Stop, Turn, watches};
use crate::tags::Tag;
use crate::tools::{Effect, ToolCall};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// The start of the ids of the person's commands (`person-1`, …): the model's calls never
/// have it, so the two are never confused in the tool pane.
const ID_PREFIX: &str = "person-";
/// The person's commands run so far in this process, to number the next.
static RUN: AtomicU64 = AtomicU64::new(0);

/// The note that gives the model the command and what it printed (keel's tags in them
/// defused, `crate::tags`).
fn note(command: &str, output: &str) -> String {
    Tag::PersonCommand.wrap(&format!(
        "The person ran a command in the workspace, in the sandbox your commands run in:\n\
         $ {command}\n{output}"
    ))
}

impl Turn<'_> {
    /// Runs the person's `command` to its end (Esc interrupts it) and owes the model its
    /// output. Returns `Some(Stop::Quit)` when the task should end.
    pub(in crate::agent) async fn run_persons_command(&mut self, command: String) -> Option<Stop> {
        let command = command.trim().to_owned();
        if command.is_empty() {
            self.emit(AgentEvent::Error { text: "! needs a command: !ls, !git status.".into() });
            return None;
        }
        watches::settle_sandbox(self.services, self.state).await;
        let tools = tools_for_call(self.parts());
        if let Some(why) = tools.sandbox().problem() {
            let text = format!(
                "The command did not run: keel {why}. Run it in your own shell, or start keel \
                 with --sandbox off."
            );
            self.emit(AgentEvent::Error { text });
            return None;
        }
        let Some(bash) = self
            .toolset
            .with_effect(|effect| effect == Effect::RunsCommand)
            .first()
            .and_then(|name| self.toolset.find(name))
        else {
            self.emit(AgentEvent::Error { text: "No tool here runs commands.".into() });
            return None;
        };
        let id = format!("{ID_PREFIX}{}", RUN.fetch_add(1, Ordering::Relaxed) + 1);
        let input = serde_json::json!({ "command": command });
        let call = ToolCall { id, name: bash.name().to_owned(), input };
        self.parts().0.take_up(&call);
        let started = Instant::now();
        let live = Live { tool: &*bash, call: &call, tools, gate: None, began: started };
        let (mut outcome, stop) = run_live(self.parts(), live, &mut None).await;
        watches::look_at_repository(self.parts(), &mut outcome);
        let status = match (stop, outcome.is_error) {
            (Some(_), _) => ToolStatus::Interrupted,
            (None, true) => ToolStatus::Failed,
            (None, false) => ToolStatus::Succeeded,
        };
        let tools = self.tools;
        self.parts().0.record_result(tools, &call, true, status, &outcome, started);
        self.state.set_activity(Activity::Idle);
        self.state.owe_model(note(&command, &outcome.for_model));
        let ended = match outcome.exit_code {
            Some(code) => format!("exit {code}"),
            None if stop.is_some() => "interrupted".to_owned(),
            None => "no exit code".to_owned(),
        };
        self.emit(AgentEvent::Notice {
            text: format!(
                "You ran `{}` ({ended}); the model reads its output with your next message.",
                crate::visible::one_line(&command)
            ),
        });
        stop.filter(|stop| *stop == Stop::Quit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_model_reads_the_command_and_its_output() {
        assert_eq!(
            note("ls", "Exit code 0\nhello.py\n"),
            "<person-command>The person ran a command in the workspace, in the sandbox your \
             commands run in:\n$ ls\nExit code 0\nhello.py\n</person-command>"
        );
    }
}
