//! The `bash` tool: one shell command in the workspace, in the sandbox ([`super::run`]).

use super::{BashArgs, DESCRIPTION, schema};
use crate::tools::tool::{self, Effect, Masking, Tool};
use crate::tools::{ToolCall, ToolContext, ToolError, ToolOutcome, Tools};
use futures_util::FutureExt as _;
use futures_util::future::BoxFuture;
use serde_json::Value;

/// `bash`.
pub struct Bash;

impl Tool for Bash {
    fn name(&self) -> &str {
        "bash"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn schema(&self) -> Value {
        schema()
    }

    fn check_input(&self, input: &Value) -> Result<(), ToolError> {
        tool::decode::<BashArgs>(self, input).map(drop)
    }

    fn effect(&self) -> Effect {
        Effect::RunsCommand
    }

    fn summary(&self, input: &Value) -> String {
        tool::field_summary(self, input, "command")
    }

    fn masking(&self) -> Masking {
        Masking::Command
    }

    fn run<'a>(
        &'a self,
        call: &'a ToolCall,
        on: &'a Tools,
        ctx: &'a ToolContext<'a>,
    ) -> BoxFuture<'a, ToolOutcome> {
        async move {
            let args = match tool::decode::<BashArgs>(self, &call.input) {
                Ok(args) => args,
                Err(err) => return ToolOutcome::error(err.to_string()),
            };
            let sandbox = on.probing_sandbox().settled().await;
            super::run(on.workspace().root(), &args, sandbox, ctx).await
        }
        .boxed()
    }

    fn detail(&self, call: &ToolCall, _on: &Tools) -> String {
        tool::field_detail(self, &call.input, "command")
    }

    fn command<'a>(&self, input: &'a Value) -> Option<&'a str> {
        tool::text_field(input, "command")
    }
}
