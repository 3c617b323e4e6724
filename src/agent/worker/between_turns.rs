//! The person's commands between turns other than prompts and the board's: `!command`
//! (`persons_command`), `/model` (`model_switch`), `/diff` (`turn_diff`) and `/sandbox`
//! (`runtime::sandbox::report`). While a turn runs they wait, as `/undo` does
//! (`turn::during_turn`).

use super::Agent;
use crate::agent::command::Command;
use crate::agent::event::AgentEvent;
use crate::agent::turn::Stop;
use crate::runtime::sandbox::report;
use crate::runtime::withheld;

impl Agent {
    /// Does what `command` asks. Returns `Some(Stop::Quit)` when the worker should end.
    pub(in crate::agent) async fn between_turns(&mut self, command: Command) -> Option<Stop> {
        match command {
            Command::Shell(line) => {
                if self.turn().run_persons_command(line).await == Some(Stop::Quit) {
                    return Some(Stop::Quit);
                }
                // Prompts sent while it ran.
                self.drain_queue().await
            }
            Command::SwitchModel(spec) => {
                self.switch_model(&spec);
                None
            }
            Command::ShowDiff => {
                self.turn().show_turn_diff();
                None
            }
            Command::ShowSandbox => {
                let vars: Vec<_> = std::env::vars_os().collect();
                let (sandbox, hidden) =
                    (self.services.tools.sandbox(), self.services.tools.workspace().hidden());
                let text = report::render(sandbox, hidden, withheld::rule(), &vars);
                self.turn().emit(AgentEvent::Notice { text });
                None
            }
            _ => None,
        }
    }
}
