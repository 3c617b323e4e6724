//! The MCP servers' tools as the agent offers them: the model is told of them once their servers
//! are up, and the person of each server that failed, or whose tools keel capped, once.
//!
//! A turn waits for servers still starting (each bounded by its startup timeout), so the first
//! request already lists their tools; between turns the agent follows the servers as they change.

use crate::agent::conversation::overhead;
use crate::agent::event::AgentEvent;
use crate::agent::turn::Turn;
use crate::tools::mcp::{Status, listing};
use tokio::sync::watch;

impl Turn<'_> {
    /// Before a turn: waits for the servers still starting, then takes in what changed.
    pub(in crate::agent) async fn refresh_mcp_tools(&mut self) {
        let hub = self.tools.mcp().clone();
        if hub.is_empty() {
            return;
        }
        let starting: Vec<String> = hub
            .servers()
            .into_iter()
            .filter(|server| server.status == Status::Starting)
            .map(|server| server.name)
            .collect();
        if !starting.is_empty() {
            let text = format!("Waiting for MCP servers to start: {}.", starting.join(", "));
            self.emit(AgentEvent::Notice { text });
            self.state.publish(self.outbox);
        }
        hub.settled().await;
        self.mcp_changed();
    }

    /// A server's status changed: the person hears of a new failure, and the tools the model is
    /// told about follow the servers.
    pub(in crate::agent) fn mcp_changed(&mut self) {
        let servers = self.tools.mcp().servers();
        for server in &servers {
            if let Some(line) = listing::failure_line(server)
                && self.services.tell_mcp_once(&line)
            {
                self.emit(AgentEvent::Error { text: line });
            }
            if let Some(line) = listing::capped_line(server)
                && self.services.tell_mcp_once(&line)
            {
                self.emit(AgentEvent::Notice { text: line });
            }
        }
        self.state.set_mcp(servers);
        let specs = self.toolset.specs();
        if specs != *self.specs {
            self.meter.set_overhead(overhead(self.config, &specs));
            *self.specs = specs;
            self.tell_request_shape();
        }
        self.state.publish(self.outbox);
    }
}

/// Waits for the next change of the servers' status; forever when there are none to follow.
pub(in crate::agent) async fn next_change(changes: &mut Option<watch::Receiver<u64>>) {
    if let Some(receiver) = changes
        && receiver.changed().await.is_ok()
    {
        return;
    }
    *changes = None;
    std::future::pending::<()>().await;
}
