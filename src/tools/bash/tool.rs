//! The `bash` tool: one shell command in the workspace, in the sandbox ([`super::run`]).

use super::{BashArgs, DESCRIPTION, schema};
use crate::tools::tool::{self, Declared, Effect, Schema, Tool, ToolRun};
use crate::tools::{ToolCall, ToolContext, ToolOutcome, Tools, names};
use futures_util::FutureExt as _;
use serde_json::Value;

/// `bash`.
pub struct Bash;

impl Tool for Bash {
    fn declared(&self) -> Declared<'_> {
        Declared::new(names::BASH, DESCRIPTION, Schema::Made(schema), Effect::RunsCommand)
            .named_by("command")
    }

    fn run<'a>(&'a self, call: &'a ToolCall, on: &'a Tools, ctx: &'a ToolContext) -> ToolRun<'a> {
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

    fn command<'a>(&self, input: &'a Value) -> Option<&'a str> {
        tool::text_field(input, "command")
    }
}
