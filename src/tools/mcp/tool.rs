//! An MCP server's tool, as one impl of keel's [`Tool`]: its facts are what the server listed
//! (its name as the model calls it, description, schema, whether it is marked read-only), and a
//! run is a call to the server through the [`Hub`](super::Hub). A name the model made up under
//! the `mcp__` prefix, or one of a server that is gone, is still such a tool: its run says why
//! it cannot be called, and the history's old calls of it are summarised and masked alike.

use super::RemoteTool;
use crate::tools::names::ToolNames;
use crate::tools::tool::{Declared, Effect, Schema, Tool, ToolRun};
use crate::tools::{ToolCall, ToolContext, ToolError, Tools};
use futures_util::FutureExt as _;
use serde_json::{Value, json};

/// One MCP tool, as listed by its server, or known only by the name the model used.
pub struct McpTool {
    /// `mcp__SERVER__TOOL`.
    exposed: String,
    /// The listing, when a server offers a tool by that name.
    listed: Option<(String, RemoteTool)>,
}

impl McpTool {
    /// The tool `server` lists.
    pub fn listed(server: String, tool: RemoteTool) -> Self {
        Self { exposed: tool.exposed.clone(), listed: Some((server, tool)) }
    }

    /// A tool known only by its name: no server keel runs lists it (now).
    pub fn unlisted(exposed: &str) -> Self {
        Self { exposed: exposed.to_owned(), listed: None }
    }
}

impl Tool for McpTool {
    /// Anything its server does, marked read-only when the server says so (`readOnlyHint`); its
    /// one name stands for the model, for Claude Code's hooks and on the screen.
    fn declared(&self) -> Declared<'_> {
        let (description, schema, marked_read_only) = match &self.listed {
            Some((_, tool)) => {
                (&*tool.description, Schema::Listed(&tool.input_schema), tool.read_only)
            }
            None => ("", Schema::Made(any_object), false),
        };
        let effect = Effect::ReachesOutside { marked_read_only };
        Declared::new(ToolNames::same(&self.exposed), description, schema, effect)
    }

    fn run<'a>(&'a self, call: &'a ToolCall, on: &'a Tools, ctx: &'a ToolContext) -> ToolRun<'a> {
        async move { on.mcp().call(&self.exposed, &call.input, &ctx.cancel).await }.boxed()
    }

    /// The server checks the arguments against its own schema, and answers what is wrong.
    fn check_input(&self, _input: &Value) -> Result<(), ToolError> {
        Ok(())
    }

    /// Its arguments are its own: all of them, as compact JSON.
    fn summary(&self, input: &Value) -> String {
        crate::tools::tool::first_line(&input.to_string())
    }

    /// The server, its own name for the tool, and the arguments as pretty JSON.
    fn detail(&self, call: &ToolCall, _on: &Tools) -> String {
        let arguments = serde_json::to_string_pretty(&call.input).unwrap_or_default();
        match &self.listed {
            Some((server, tool)) => {
                format!("MCP server `{server}`, tool `{}`\n{arguments}", tool.name)
            }
            None => arguments,
        }
    }
}

/// The schema of a tool no server lists: any object.
fn any_object() -> Value {
    json!({"type": "object"})
}
