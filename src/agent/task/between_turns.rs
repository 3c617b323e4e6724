//! The person's commands between turns other than prompts and the board's: `!command`
//! (`persons_command`), `/model` (`model_switch`) and `/diff` (`turn_diff`). While a turn runs
//! they wait, as `/undo` does (`turn::during_turn`).

use super::Agent;
use crate::agent::Command;
use crate::agent::turn::Stop;

impl Agent {
    /// Does what `command` asks. Returns `Some(Stop::Quit)` when the task should end.
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
            _ => None,
        }
    }
}
