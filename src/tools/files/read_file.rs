//! The `read_file` tool: a text file of the workspace as numbered lines ([`super::read()`]).

use super::{READ_DESCRIPTION, ReadArgs, read_schema};
use crate::tools::tool::{self, Effect, Masking, Tool};
use crate::tools::{ToolCall, ToolContext, ToolError, ToolOutcome, Tools};
use futures_util::FutureExt as _;
use futures_util::future::BoxFuture;
use serde_json::Value;

/// `read_file`.
pub struct ReadFile;

impl Tool for ReadFile {
    fn name(&self) -> &str {
        "read_file"
    }

    fn description(&self) -> &str {
        READ_DESCRIPTION
    }

    fn schema(&self) -> Value {
        read_schema()
    }

    fn check_input(&self, input: &Value) -> Result<(), ToolError> {
        tool::decode::<ReadArgs>(self, input).map(drop)
    }

    fn effect(&self) -> Effect {
        Effect::Reads
    }

    fn summary(&self, input: &Value) -> String {
        tool::field_summary(self, input, "path")
    }

    fn masking(&self) -> Masking {
        Masking::Read
    }

    fn run<'a>(
        &'a self,
        call: &'a ToolCall,
        on: &'a Tools,
        _ctx: &'a ToolContext<'a>,
    ) -> BoxFuture<'a, ToolOutcome> {
        on.file_job(tool::decode::<ReadArgs>(self, &call.input), |workspace, args| {
            super::read(workspace, &args).map(ToolOutcome::ok)
        })
        .boxed()
    }

    fn detail(&self, call: &ToolCall, _on: &Tools) -> String {
        tool::field_detail(self, &call.input, "path")
    }
}
