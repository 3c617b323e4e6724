//! The `edit_file` tool: one exact piece of a file replaced, planned first so that the approval
//! box can show the diff and a repeat is known before anything is written.

use super::repeat::{Repeated, edit_digest};
use super::{EDIT_DESCRIPTION, EditArgs, PlannedChange, edit_schema, plan_edit};
use crate::runtime::Workspace;
use crate::tools::tool::{self, Effect, Masking, Tool};
use crate::tools::{ToolCall, ToolContext, ToolError, ToolOutcome, Tools};
use futures_util::FutureExt as _;
use futures_util::future::BoxFuture;
use serde_json::Value;

/// `edit_file`.
pub struct EditFile;

impl Tool for EditFile {
    fn name(&self) -> &str {
        "edit_file"
    }

    fn description(&self) -> &str {
        EDIT_DESCRIPTION
    }

    fn schema(&self) -> Value {
        edit_schema()
    }

    fn check_input(&self, input: &Value) -> Result<(), ToolError> {
        tool::decode::<EditArgs>(self, input).map(drop)
    }

    fn effect(&self) -> Effect {
        Effect::WritesFiles
    }

    fn summary(&self, input: &Value) -> String {
        tool::field_summary(self, input, "path")
    }

    fn masking(&self) -> Masking {
        Masking::Call
    }

    fn run<'a>(
        &'a self,
        call: &'a ToolCall,
        on: &'a Tools,
        _ctx: &'a ToolContext,
    ) -> BoxFuture<'a, ToolOutcome> {
        on.file_job(tool::decode::<EditArgs>(self, &call.input), |workspace, args| {
            plan_edit(workspace, &args)?.apply()
        })
        .boxed()
    }

    fn detail(&self, call: &ToolCall, _on: &Tools) -> String {
        tool::field_detail(self, &call.input, "path")
    }

    /// An edit whose `old_text` and `new_text` are the same changes nothing (the tool reports
    /// "no change" and writes nothing).
    fn changes_nothing(&self, input: &Value) -> bool {
        let old_text = tool::text_field(input, "old_text");
        old_text.is_some() && old_text == tool::text_field(input, "new_text")
    }

    fn planned_change(
        &self,
        input: &Value,
        workspace: &Workspace,
    ) -> Option<(PlannedChange, Repeated)> {
        let args = tool::decode::<EditArgs>(self, input).ok()?;
        let plan = plan_edit(workspace, &args).ok()?;
        Some((plan, Repeated::Edit(edit_digest(&args.old_text, &args.new_text))))
    }

    fn repeat_of(&self, input: &Value) -> Option<Repeated> {
        let text = |key| tool::text_field(input, key).unwrap_or_default();
        Some(Repeated::Edit(edit_digest(text("old_text"), text("new_text"))))
    }
}
