//! `State`'s part in hooks: the session as a hook's input names it, and what `/hooks` shows.

use super::State;
use crate::agent::config::ApprovalMode;
use crate::hooks::{Common, HooksView};
use std::path::Path;
use std::sync::Arc;

impl State {
    /// The fields every hook's input has, for a conversation in `workspace` approving as `mode`.
    pub fn hook_common(&mut self, workspace: &Path, mode: ApprovalMode) -> Common {
        let (session_id, log) = self.journal.for_hooks();
        let permission_mode = if self.view.plan_mode {
            "plan"
        } else {
            match mode {
                ApprovalMode::Ask => "default",
                ApprovalMode::Auto => "bypassPermissions",
                ApprovalMode::ReadOnly => "readOnly",
            }
        };
        Common {
            session_id,
            transcript_path: log
                .map(|path| path.to_string_lossy().into_owned())
                .unwrap_or_default(),
            cwd: workspace.to_string_lossy().into_owned(),
            permission_mode: permission_mode.to_owned(),
        }
    }

    /// The hooks and their newest runs, as `/hooks` lists them.
    pub fn set_hooks(&mut self, view: HooksView) {
        self.view.hooks = Arc::new(view);
    }
}
