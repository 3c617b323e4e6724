//! The `write_file` tool: a file created or replaced whole, planned first so that the approval
//! box can show the diff and a repeat is known before anything is written.

use super::repeat::{Repeated, content_digest};
use super::{PlannedChange, WRITE_DESCRIPTION, WriteArgs, plan_write, write_schema};
use crate::runtime::Workspace;
use crate::tools::tool::{self, Effect, Masking, Tool};
use crate::tools::{ToolCall, ToolContext, ToolError, ToolOutcome, Tools};
use futures_util::FutureExt as _;
use futures_util::future::BoxFuture;
use serde_json::Value;

/// `write_file`.
pub struct WriteFile;

impl Tool for WriteFile {
    fn name(&self) -> &str {
        "write_file"
    }

    fn description(&self) -> &str {
        WRITE_DESCRIPTION
    }

    fn schema(&self) -> Value {
        write_schema()
    }

    fn check_input(&self, input: &Value) -> Result<(), ToolError> {
        tool::decode::<WriteArgs>(self, input).map(drop)
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
        on.file_job(tool::decode::<WriteArgs>(self, &call.input), |workspace, args| {
            plan_write(workspace, &args)?.apply()
        })
        .boxed()
    }

    fn detail(&self, call: &ToolCall, _on: &Tools) -> String {
        tool::field_detail(self, &call.input, "path")
    }

    fn planned_change(
        &self,
        input: &Value,
        workspace: &Workspace,
    ) -> Option<(PlannedChange, Repeated)> {
        let args = tool::decode::<WriteArgs>(self, input).ok()?;
        let plan = plan_write(workspace, &args).ok()?;
        Some((plan, Repeated::Content(content_digest(args.content.as_bytes()))))
    }

    fn repeat_of(&self, input: &Value) -> Option<Repeated> {
        let content = tool::text_field(input, "content").unwrap_or_default();
        Some(Repeated::Content(content_digest(content.as_bytes())))
    }
}
