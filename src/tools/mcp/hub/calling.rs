//! A call of an MCP tool through the [`Hub`]: answered at once when its server cannot take it,
//! else sent to the server, bounded by `tool_timeout_ms`, the person's interrupt and the line
//! limit; whatever went wrong is an answer that says so, in the person's words.

use super::{Hub, Status, plain};
use crate::tools::ToolOutcome;
use crate::tools::mcp::line_limit;
use crate::tools::mcp::names::Namer;
use crate::tools::mcp::result;
use rmcp::model::CallToolRequestParams;
use rmcp::service::ServiceError;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

impl Hub {
    /// Why a call of `exposed` cannot run now — no server offers it, or its server is not
    /// running — as the call's answer; `None` when its server is ready. Answered before the
    /// person is asked about a call that could not run anyway.
    pub fn cannot_call(&self, exposed: &str) -> Option<ToolOutcome> {
        let Some((server, _)) = self.find(exposed) else {
            return Some(self.no_such_tool(exposed));
        };
        match &server.status {
            Status::Ready => None,
            Status::Failed(why) => Some(unavailable(&server.name, why)),
            Status::Starting | Status::Disabled => {
                Some(unavailable(&server.name, "it is not running"))
            }
        }
    }

    /// Calls the tool the model named `exposed`. Never fails: whatever went wrong is an error
    /// outcome that says so.
    pub async fn call(
        &self,
        exposed: &str,
        input: &Value,
        cancel: &CancellationToken,
    ) -> ToolOutcome {
        let Some(index) = self.slot_of(exposed) else {
            return self.no_such_tool(exposed);
        };
        let slot = &self.inner.servers[index];
        let Some((server, tool)) = self.find(exposed) else {
            return ToolOutcome::error(format!("Unknown tool `{exposed}`."));
        };
        let peer = {
            let live = slot.live();
            match (&live.status, &live.peer) {
                (Status::Ready, Some(peer)) => peer.clone(),
                (Status::Failed(why), _) => return unavailable(&server.name, why),
                _ => return unavailable(&server.name, "it is not running"),
            }
        };
        let arguments = match input {
            Value::Object(map) => Some(map.clone()),
            Value::Null => None,
            _ => {
                return ToolOutcome::error(format!(
                    "`{exposed}` takes a JSON object of arguments."
                ));
            }
        };
        let mut params = CallToolRequestParams::new(tool.name.clone());
        params.arguments = arguments;
        let limit = slot.config.tool_timeout;
        let could_not = |why: &str| {
            ToolOutcome::error(format!(
                "MCP server `{}` could not run `{}`: {why}",
                server.name, tool.name
            ))
        };
        let answer = tokio::select! {
            answer = tokio::time::timeout(limit, peer.call_tool(params)) => answer,
            () = slot.too_long.cancelled() => {
                let why = line_limit::too_long();
                self.fail(index, why.clone());
                return could_not(&format!("{why}."));
            }
            () = cancel.cancelled() => {
                return ToolOutcome::error("interrupted by user");
            }
        };
        match answer {
            Err(_) => ToolOutcome::error(format!(
                "MCP server `{}` did not answer `{}` within {} ms (tool_timeout_ms); the call \
                 was cancelled.",
                server.name,
                tool.name,
                limit.as_millis()
            )),
            Ok(Ok(answer)) => result::outcome(&serde_json::to_value(&answer).unwrap_or_default()),
            Ok(Err(err)) => {
                let why = if slot.too_long.is_cancelled() {
                    let why = line_limit::too_long();
                    self.fail(index, why.clone());
                    format!("{why}.")
                } else if peer.is_transport_closed() {
                    let why = format!("it stopped ({})", plain(&err));
                    self.fail(index, why.clone());
                    why
                } else if matches!(err, ServiceError::TransportClosed) {
                    line_limit::closed_mid_call()
                } else {
                    plain(&err)
                };
                could_not(&why)
            }
        }
    }

    /// The answer for a name no server's tool goes by: why its server has no tools, when the
    /// name is one of a server that failed.
    fn no_such_tool(&self, exposed: &str) -> ToolOutcome {
        let failed = self.servers().into_iter().find_map(|server| match server.status {
            Status::Failed(why)
                if exposed.starts_with(&Namer::default().name(&server.name, "")) =>
            {
                Some((server.name, why))
            }
            _ => None,
        });
        match failed {
            Some((server, why)) => unavailable(&server, &why),
            None => ToolOutcome::error(format!(
                "Unknown tool `{exposed}`: no MCP server keel started offers it."
            )),
        }
    }
}

/// The answer for a tool whose server is not running.
fn unavailable(server: &str, why: &str) -> ToolOutcome {
    ToolOutcome::error(format!(
        "MCP server `{server}` is not available ({why}); its tools cannot run. Carry on without \
         them, or tell the user."
    ))
}
