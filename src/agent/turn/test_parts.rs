//! A conversation and the workspace's services built from defaults, for the unit tests of the
//! turn's parts: a temporary workspace, no model, no hooks unless given, the sandbox off, and
//! the front end's end of the channels kept to send the person's answers and read what was told.

use crate::agent::command::Command;
use crate::agent::config::{AgentConfig, ApprovalMode};
use crate::agent::conversation::{Conversation, Link};
use crate::agent::event::AgentEvent;
use crate::agent::services::Services;
use crate::agent::snapshot::Snapshot;
use crate::agent::state::{ModelLabel, Outbox, State};
use crate::agent::turn::Turn;
use crate::agent::turn::road::OnRoad;
use crate::hooks::{HookSpec, Hooks, Origin};
use crate::llm::WireFormat;
use crate::runtime::Workspace;
use crate::tools::mcp::Hub;
use crate::tools::{ToolCall, ToolSet, Tools};
use serde_json::Value;
use std::path::Path;
use std::sync::Arc;
use tokio::sync::mpsc::{self, UnboundedReceiver, UnboundedSender};

/// A conversation over a temporary workspace, its services, and the front end's ends.
pub(in crate::agent) struct TestParts {
    pub conversation: Conversation,
    pub link: Link,
    pub services: Services,
    /// Where the person's commands (an approval's answer) are sent from.
    pub commands: UnboundedSender<Command>,
    /// What the conversation told the front ends.
    pub events: UnboundedReceiver<AgentEvent>,
    _snapshots: UnboundedReceiver<Snapshot>,
    dir: tempfile::TempDir,
}

impl TestParts {
    /// A conversation approving as `mode` says, with no hooks.
    pub fn new(mode: ApprovalMode) -> Self {
        Self::with_hooks(mode, &[])
    }

    /// A conversation approving as `mode` says, running the person's PreToolUse `hooks`
    /// (commands).
    pub fn with_hooks(mode: ApprovalMode, hooks: &[&str]) -> Self {
        let dir = tempfile::tempdir().expect("a temporary workspace");
        let workspace = Workspace::new(dir.path()).expect("the workspace opens");
        let specs = hooks.iter().map(|command| HookSpec::for_test(command, Origin::Person));
        let hooks = Hooks::new(specs.collect(), dir.path(), None, true);
        let config = AgentConfig { approval: mode, ..AgentConfig::default() };
        let label = ModelLabel { provider: "none", model: "-", wire_format: WireFormat::default() };
        let state = State::new("", config.nag_threshold, config.board, label);
        let toolset = ToolSet::new(config.board, Hub::default());
        let services = Services::new(Tools::new(workspace), mode).with_hooks(Arc::new(hooks));
        let conversation = Conversation::new(config, None, toolset, state);
        let (commands, inbox) = mpsc::unbounded_channel();
        let (snapshots, snapshots_rx) = mpsc::unbounded_channel();
        let (events, events_rx) = mpsc::unbounded_channel();
        let link = Link { inbox, outbox: Outbox { snapshots, events, asks: None } };
        Self {
            conversation,
            link,
            services,
            commands,
            events: events_rx,
            _snapshots: snapshots_rx,
            dir,
        }
    }

    /// The workspace's folder.
    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    /// A turn over the conversation.
    pub fn turn(&mut self) -> Turn<'_> {
        self.conversation.turn(&mut self.link, &self.services)
    }

    /// The call `id` of the tool `name` with `input`, on its road before any stage.
    pub fn on_road(&self, id: &str, name: &str, input: Value) -> OnRoad {
        let call = ToolCall { id: id.into(), name: name.into(), input };
        let tool = self.conversation.toolset.resolve(&call).expect("a tool of the set");
        OnRoad::new(call, tool, None)
    }

    /// What the conversation told the front ends so far.
    pub fn told(&mut self) -> Vec<AgentEvent> {
        std::iter::from_fn(|| self.events.try_recv().ok()).collect()
    }
}
