//! The workspace's own repository after commands ([`repository`]): a `.git/commondir` that
//! appeared is removed after every command, as every turn ends and while background jobs run,
//! and the person (and, after a command, the model) told.

use crate::agent::event::AgentEvent;
use crate::agent::turn::task::Agent;
#[cfg(doc)]
use crate::tools::sandbox::repository;

impl Agent {
    /// As a turn ends: a `.git/commondir` a background job of its commands wrote since the
    /// last one ended is removed, and the person told as of an error (`-p` prints it too).
    /// Whether it was removed once before in this session: then it was made again.
    pub(in crate::agent) fn look_at_repository_again(&mut self) -> bool {
        let removed = self.repository.removals();
        if let Some(found) = self.repository.after() {
            self.emit(AgentEvent::Error { text: found });
        }
        removed > 0 && self.repository.removals() > removed
    }

    /// After a command: a `.git/commondir` that appeared is removed, and its answer says so, as
    /// does an error for the person (`-p` prints it too).
    pub(in crate::agent) fn look_at_repository(&mut self, outcome: &mut crate::tools::ToolOutcome) {
        if let Some(found) = self.repository.after() {
            for text in [&mut outcome.for_model, &mut outcome.for_display] {
                text.push_str("\n\n");
                text.push_str(&found);
            }
            self.emit(AgentEvent::Error { text: found });
        }
    }
}
