//! The `read_file` tool: a text file of the workspace as numbered lines ([`super::read()`]).

use super::{READ_DESCRIPTION, ReadArgs, read_schema};
use crate::tools::tool::{self, Declared, Effect, Schema, Tool, ToolRun};
use crate::tools::{ToolCall, ToolContext, ToolOutcome, Tools, names};
use futures_util::FutureExt as _;

/// `read_file`.
pub struct ReadFile;

impl Tool for ReadFile {
    fn declared(&self) -> Declared<'_> {
        let schema = Schema::Made(read_schema);
        Declared::new(names::READ_FILE, READ_DESCRIPTION, schema, Effect::Reads).named_by("path")
    }

    fn run<'a>(&'a self, call: &'a ToolCall, on: &'a Tools, _: &'a ToolContext) -> ToolRun<'a> {
        on.file_job(tool::decode::<ReadArgs>(self, &call.input), |workspace, args| {
            super::read(workspace, &args).map(ToolOutcome::ok)
        })
        .boxed()
    }
}
