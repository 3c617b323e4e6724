//! One conversation: what it asks of the model (its settings, its model, the tools it offers),
//! everything it holds (`State`: the history, the board, the reminder's counts, the usage, its
//! session log), the estimate of its next request, and its turn's undo group. Its turns run over
//! it and borrow the workspace's services (`Services`) and the front end's channels (`Link`).

use crate::agent::command::Command;
use crate::agent::compaction::{ContextMeter, WindowSource};
use crate::agent::config::AgentConfig;
use crate::agent::services::Services;
use crate::agent::state::{Outbox, State};
use crate::agent::turn::Turn;
use crate::agent::turn::bounds::Bounds;
use crate::agent::turn::undo::UndoGroup;
use crate::llm::{Provider, ToolSpec};
use crate::tools::ToolSet;
use std::sync::Arc;
use tokio::sync::mpsc::UnboundedReceiver;

/// A conversation with the model.
#[derive(Debug)]
pub(in crate::agent) struct Conversation {
    pub config: AgentConfig,
    /// The model; shared with any conversation that talks to the same one.
    pub provider: Option<Arc<Provider>>,
    /// The tools the model is offered.
    pub toolset: ToolSet,
    /// Their schemas as sent.
    pub specs: Vec<ToolSpec>,
    pub state: State,
    /// The context window and the estimate of the next request.
    pub meter: ContextMeter,
    /// Where the running turn's undo group stands.
    pub undo: UndoGroup,
    /// What the SessionStart hooks added for the model, to go with the next prompt.
    pub hook_context: Vec<String>,
    /// The bounds of its running turn, shared with its children: a child's are its parent's.
    pub bounds: Arc<Bounds>,
}

/// Where a conversation hears the person and tells what happens: the commands in, the snapshots
/// and events out.
#[derive(Debug)]
pub(in crate::agent) struct Link {
    pub inbox: UnboundedReceiver<Command>,
    pub outbox: Outbox,
}

impl Conversation {
    /// A conversation over `toolset`, with `state` and the model `provider`.
    pub fn new(
        config: AgentConfig,
        provider: Option<Arc<Provider>>,
        toolset: ToolSet,
        state: State,
    ) -> Self {
        let specs = toolset.specs();
        let meter = meter(&config, &specs);
        let bounds = Arc::new(Bounds::new(config.max_rounds));
        Self {
            config,
            provider,
            toolset,
            specs,
            state,
            meter,
            undo: UndoGroup::default(),
            hook_context: Vec::new(),
            bounds,
        }
    }

    /// A turn over this conversation, heard and told through `link`, on `services`.
    pub fn turn<'a>(&'a mut self, link: &'a mut Link, services: &'a Services) -> Turn<'a> {
        let Self { config, provider, toolset, specs, state, meter, undo, hook_context, bounds } =
            self;
        Turn {
            config,
            provider: provider.as_ref(),
            toolset,
            specs,
            state,
            meter,
            undo,
            hook_context,
            bounds,
            inbox: &mut link.inbox,
            outbox: &link.outbox,
            services,
            tools: &services.tools,
        }
    }

    /// Offers `toolset` from now on (the demo's workspace, the servers' tools).
    pub fn offer(&mut self, toolset: ToolSet) {
        self.specs = toolset.specs();
        self.meter = meter(&self.config, &self.specs);
        self.toolset = toolset;
    }

    /// A new meter for the settings as they are now (another model's window): the next request
    /// is counted whole.
    pub fn remeter(&mut self) {
        self.meter = meter(&self.config, &self.specs);
        self.meter.history_changed();
    }
}

/// The meter for `config`'s window, counting the system prompt and the tool schemas into every
/// request.
fn meter(config: &AgentConfig, specs: &[ToolSpec]) -> ContextMeter {
    let source = if config.context_window_assumed {
        WindowSource::Assumed
    } else {
        WindowSource::Configured
    };
    ContextMeter::new(config.context_window, source, config.compact_at, config.max_tokens)
        .with_overhead(overhead(config, specs))
}

/// What every request carries besides the history, in bytes: the system prompt and the schemas.
pub(in crate::agent) fn overhead(config: &AgentConfig, specs: &[ToolSpec]) -> usize {
    config.system_prompt.len() + serde_json::to_vec(specs).map_or(0, |bytes| bytes.len())
}
