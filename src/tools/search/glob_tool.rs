//! The `glob` tool: a search of the workspace, in-process and read-only ([`super::glob()`]).

use super::{GLOB_DESCRIPTION, GlobArgs, glob_schema};
use crate::tools::tool::{self, Effect, Masking, Tool};
use crate::tools::{ToolCall, ToolContext, ToolError, ToolOutcome, Tools};
use futures_util::FutureExt as _;
use futures_util::future::BoxFuture;
use serde_json::Value;

/// `glob`.
pub struct Glob;

impl Tool for Glob {
    fn name(&self) -> &str {
        "glob"
    }

    fn description(&self) -> &str {
        GLOB_DESCRIPTION
    }

    fn schema(&self) -> Value {
        glob_schema()
    }

    fn check_input(&self, input: &Value) -> Result<(), ToolError> {
        tool::decode::<GlobArgs>(self, input).map(drop)
    }

    fn effect(&self) -> Effect {
        Effect::Reads
    }

    /// The pattern, then the path and the glob filter when given (`NEEDLE src/ *.rs`).
    fn summary(&self, input: &Value) -> String {
        super::summary(input).map_or_else(|| self.name().to_owned(), |line| tool::first_line(&line))
    }

    fn masking(&self) -> Masking {
        Masking::Search
    }

    fn run<'a>(
        &'a self,
        call: &'a ToolCall,
        on: &'a Tools,
        ctx: &'a ToolContext<'a>,
    ) -> BoxFuture<'a, ToolOutcome> {
        let stop = ctx.cancel.clone();
        let args = tool::decode::<GlobArgs>(self, &call.input);
        on.file_job(args, move |workspace, args| Ok(super::glob(workspace, &args, &stop).into()))
            .boxed()
    }
}
