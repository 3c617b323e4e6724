//! The agent task itself: waits for commands and runs user turns one after another.
//!
//! Between turns it answers the person's commands (clear, undo, the demo, board edits, plan
//! mode and its approval); during a turn the turn loop (`turn`) and the tool round
//! (`tool_round`) listen for them instead.

use super::{jobs_watch, mcp_tools};
use crate::agent::approval::Approvals;
use crate::agent::context::{ContextMeter, WindowSource};
use crate::agent::event::AgentEvent;
use crate::agent::snapshot::Activity;
use crate::agent::state::{ModelLabel, Outbox, State};
use crate::agent::{AgentConfig, Command, board_edits};
use crate::board;
use crate::llm::{Provider, RequestShape, ToolSpec, WireFormat};
use crate::tools::Tools;
use crate::tools::sandbox::Confinement;
use crate::tools::sandbox::repository;
use tokio::sync::mpsc::UnboundedReceiver;

/// How to configure a model: the first-run screen's text, which offers the demo beside it.
macro_rules! configure_help {
    () => {
        "No model is configured. Set ANTHROPIC_API_KEY (or OPENAI_API_KEY with OPENAI_BASE_URL \
         for an OpenAI-compatible server; a local one takes any placeholder key), or put \
         provider, model and api_key in ~/.config/keel/config.toml, then restart keel."
    };
}

/// How to configure a model, on its own.
pub const CONFIGURE_HELP: &str = configure_help!();

/// What the person is told when they send a prompt with no model configured.
pub const NO_PROVIDER_HELP: &str =
    concat!(configure_help!(), " Type /demo to watch the built-in demo meanwhile.");

/// Why a turn stopped before the model finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::agent) enum Stop {
    /// The person interrupted it.
    Interrupted,
    /// The front end is gone or asked to quit: end the task.
    Quit,
}

/// The agent task's state and its channels.
pub(in crate::agent) struct Agent {
    pub config: AgentConfig,
    pub provider: Option<Provider>,
    pub tools: Tools,
    pub specs: Vec<ToolSpec>,
    pub state: State,
    pub outbox: Outbox,
    pub inbox: UnboundedReceiver<Command>,
    pub approvals: Approvals,
    /// The context window and the estimate of the next request.
    pub meter: ContextMeter,
    /// The demo's temporary workspace, removed when the task ends.
    pub(in crate::agent) demo_dir: Option<tempfile::TempDir>,
    /// Where the running turn's undo group stands.
    pub(in crate::agent) turn_undo: TurnUndo,
    /// The turn's closing snapshot, taken early: as the round of its last command ended.
    pub(in crate::agent) closing: Option<super::undo::Snapshotting>,
    /// The MCP server failures the person has been told of.
    pub(in crate::agent) mcp_told: std::collections::HashSet<String>,
    /// The sandbox's probe has answered, and the approvals and the status bar know it.
    sandbox_known: bool,
    /// The workspace's `.git/commondir` as the session found it, looked at again after every
    /// command and turn.
    pub(in crate::agent) repository: repository::Watch,
    /// The `.git` entries below the workspace's top as the session opened, and as the last turn
    /// left them (`turn::nested_repos`).
    pub(in crate::agent) nested: super::nested_repos::NestedWatch,
    /// How many commands' background jobs had ended at the last look for what they left.
    pub(in crate::agent) jobs_seen: usize,
}

/// Where the running turn's undo group stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::agent) enum TurnUndo {
    /// No tool that can change the workspace has run in this turn (or no turn is running).
    Idle,
    /// The group has begun; only file tools, whose records undo them, have run.
    Files,
    /// A command ran with a snapshot before it: the turn owes one after it.
    Commands,
    /// A command ran with no snapshot before it (none could be taken).
    Blind,
}

impl Agent {
    pub fn new(
        config: AgentConfig,
        provider: Option<Provider>,
        tools: Tools,
        outbox: Outbox,
        inbox: UnboundedReceiver<Command>,
    ) -> Self {
        let label = match &provider {
            Some(provider) => ModelLabel {
                provider: provider.name(),
                model: provider.model(),
                wire_format: provider.wire_format(),
            },
            None => ModelLabel { provider: "none", model: "-", wire_format: WireFormat::default() },
        };
        let mut state =
            State::new(&config.system_prompt, config.nag_threshold, config.board, label);
        state.set_plan_mode(config.plan && config.board);
        let approvals = Approvals::new(config.approval);
        let probing = tools.probing_sandbox().clone();
        let repository = repository::Watch::before(tools.workspace().root());
        let nested = super::nested_repos::NestedWatch::opening(tools.workspace().root());
        let specs = tool_specs(&tools, config.board);
        let meter = meter(&config, &specs);
        let mut agent = Self {
            config,
            provider,
            tools,
            specs,
            state,
            outbox,
            inbox,
            approvals,
            meter,
            demo_dir: None,
            turn_undo: TurnUndo::Idle,
            closing: None,
            mcp_told: std::collections::HashSet::new(),
            sandbox_known: false,
            repository,
            nested,
            jobs_seen: crate::tools::supervisor::jobs::ended(),
        };
        if let Some(sandbox) = probing.ready() {
            agent.adopt_sandbox(sandbox);
        }
        agent.tell_request_shape();
        agent
    }

    /// Waits for the sandbox's probe, if it has not answered yet: before the first command (or,
    /// in plan mode, any tool call) is checked, since what commands may do depends on it.
    pub(in crate::agent) async fn settle_sandbox(&mut self) {
        if !self.sandbox_known {
            let probing = self.tools.probing_sandbox().clone();
            self.adopt_sandbox(probing.settled().await);
        }
    }

    /// The sandbox a command starts in while the sandbox's probe still runs: the one the probe
    /// finds where `bwrap` works, for a command that runs without asking (outside plan mode).
    /// `None`: the command waits for the probe's answer.
    pub(in crate::agent) fn assumed_sandbox(
        &self,
        call: &crate::tools::ToolCall,
    ) -> Option<crate::tools::Sandbox> {
        if call.name != crate::tools::ToolName::Bash
            || self.sandbox_known
            || self.state.view().plan_mode
        {
            return None;
        }
        let (sandbox, proven) = self.tools.probing_sandbox().ready_or_assumed();
        let verdict = self.approvals.check(&call.name, &call.input);
        let runs = matches!(verdict, crate::agent::approval::Verdict::Run);
        (!proven && runs).then(|| sandbox.clone())
    }

    /// Takes the sandbox's probe's answer: into the status bar and the approval rules.
    pub(in crate::agent) fn adopt_sandbox(&mut self, sandbox: &crate::tools::Sandbox) {
        self.state.set_sandbox(sandbox_label(sandbox));
        self.approvals = std::mem::take(&mut self.approvals).with_sandbox(sandbox);
        self.sandbox_known = true;
    }

    /// Runs until `Quit` or until every front end is gone.
    pub async fn run(mut self) {
        let mut mcp_changes = self.tools.mcp().subscribe();
        if !self.tools.mcp().is_empty() {
            self.mcp_changed();
        }
        self.state.publish(&self.outbox);
        loop {
            let command = tokio::select! {
                command = self.inbox.recv() => command,
                () = mcp_tools::next_change(&mut mcp_changes) => {
                    self.mcp_changed();
                    continue;
                }
                () = jobs_watch::next_look(self.jobs_seen), if jobs_watch::watching(self.jobs_seen) => {
                    self.look_while_jobs_run().await;
                    continue;
                }
            };
            let Some(command) = command else {
                break;
            };
            match command {
                Command::Submit(prompt) => {
                    self.state.queue(prompt);
                    if self.drain_queue().await == Some(Stop::Quit) {
                        break;
                    }
                }
                Command::Continue => {
                    let stop = self.prompt_turn(None).await;
                    if stop == Some(Stop::Quit) || self.after_turn(stop).await == Some(Stop::Quit) {
                        break;
                    }
                }
                Command::Clear => {
                    self.start_new_conversation();
                    self.emit(AgentEvent::Notice { text: "New conversation.".into() });
                }
                Command::Undo => {
                    let report = self.state.undo(self.tools.workspace());
                    self.emit(AgentEvent::Notice { text: report.summary() });
                }
                Command::StartDemo => {
                    if let Err(err) = self.switch_to_demo() {
                        self.emit(AgentEvent::Error { text: err });
                    } else if self.play_demo().await == Some(Stop::Quit) {
                        break;
                    }
                }
                Command::PlayDemo => {
                    if self.play_demo().await == Some(Stop::Quit) {
                        break;
                    }
                }
                Command::Compact => {
                    if self.compact_now().await == Some(Stop::Quit) {
                        break;
                    }
                }
                Command::EditBoard(edit) => board_edits::edit(&mut self.state, &self.outbox, &edit),
                Command::PlanMode(on) => board_edits::plan_mode(&mut self.state, &self.outbox, on),
                Command::ApprovePlan => {
                    let stop = self.approve_plan().await;
                    if stop == Some(Stop::Quit) || self.after_turn(stop).await == Some(Stop::Quit) {
                        break;
                    }
                }
                Command::ListSessions => self.state.list_sessions(),
                Command::Resume(id) => {
                    if let Some(opened) = self.state.open_session(&id) {
                        if let Some(window) = opened.2.learned_window {
                            self.meter.learn_window(window);
                        }
                        self.meter.history_changed();
                        let workspace = self.tools.workspace().clone();
                        self.state.switch_to(opened, &workspace);
                    }
                }
                Command::Quit => break,
                Command::Cancel | Command::Approve { .. } => {}
            }
            self.state.set_activity(Activity::Idle);
            self.state.publish(&self.outbox);
        }
    }

    /// The person approved the plan: plan mode ends and a turn starts on the approved board.
    async fn approve_plan(&mut self) -> Option<Stop> {
        if !self.state.view().plan_ready {
            self.emit(AgentEvent::Error {
                text:
                    "There is no plan to approve yet: in plan mode, the model's board is the plan."
                        .into(),
            });
            return None;
        }
        if self.state.view().board.is_empty() {
            self.emit(AgentEvent::Error {
                text: "The plan is empty: add an item (/todo add TEXT) or ask the model for a \
                       plan before approving it."
                    .into(),
            });
            return None;
        }
        self.state.set_plan_mode(false);
        self.emit(AgentEvent::Notice {
            text: "Plan approved: the model works through the board.".into(),
        });
        let prompt = self.approval_prompt();
        self.prompt_turn(Some(prompt)).await
    }

    /// Runs queued prompts until none are left, or the person interrupts one: then the rest go
    /// back to them.
    pub(in crate::agent) async fn drain_queue(&mut self) -> Option<Stop> {
        while let Some(prompt) = self.state.next_queued() {
            match self.prompt_turn(Some(prompt)).await {
                Some(Stop::Quit) => return Some(Stop::Quit),
                Some(Stop::Interrupted) => {
                    self.state.hand_back_queue();
                    return None;
                }
                None => {}
            }
        }
        None
    }

    /// After a turn that was not a queued prompt's: hands the queue back if the person
    /// interrupted it, else runs what was queued meanwhile.
    async fn after_turn(&mut self, stop: Option<Stop>) -> Option<Stop> {
        if stop == Some(Stop::Interrupted) {
            self.state.hand_back_queue();
            return None;
        }
        self.drain_queue().await
    }

    /// Runs a turn as one undo group (`turn::undo`). A turn that carries on one cut short (no
    /// prompt) is undone on its own: what the person changed in between is not its to undo.
    async fn prompt_turn(&mut self, prompt: Option<String>) -> Option<Stop> {
        self.state.clock_turn(true);
        let stop = self.run_turn(prompt).await;
        self.state.clock_turn(false);
        self.end_undo_group().await;
        stop
    }

    /// As a turn ends: a `.git/commondir` a background job of its commands wrote since the
    /// last one ended is removed, and the person told as of an error (`-p` prints it too).
    pub(in crate::agent) fn look_at_repository_again(&mut self) {
        if let Some(found) = self.repository.after() {
            self.emit(AgentEvent::Error { text: found });
        }
    }

    /// After a command: a `.git/commondir` that appeared is removed, and its answer says so, as
    /// does an error for the person (`-p` prints it too).
    pub(in crate::agent) fn look_at_repository(&mut self, outcome: &mut crate::tools::ToolOutcome) {
        if let Some(found) = self.repository.after() {
            for text in [&mut outcome.for_model, &mut outcome.for_display] {
                text.push_str("\n\n");
                text.push_str(&found);
            }
            self.emit(AgentEvent::Error { text: found });
        }
    }

    /// The tools changed (another workspace, the demo's): what each request carries follows.
    pub(in crate::agent) fn tools_changed(&mut self) {
        self.specs = tool_specs(&self.tools, self.config.board);
        self.meter = meter(&self.config, &self.specs);
        self.tell_request_shape();
    }

    /// Tells front ends what each request carries besides the history, so the inspector shows
    /// the body as sent.
    pub(super) fn tell_request_shape(&mut self) {
        let model = self.provider.as_ref().map_or("", Provider::model);
        self.state.set_request(RequestShape {
            model: model.into(),
            tools: self.specs.clone().into(),
            max_tokens: self.config.max_tokens,
            thinking_budget: self.config.thinking_budget,
        });
    }

    /// Empties the conversation; it is saved from here on to a new session log, if sessions are
    /// being saved.
    fn start_new_conversation(&mut self) {
        let journal = self.state.fresh_journal();
        self.state.clear(journal);
        self.meter.history_changed();
    }

    /// Tells of something that happened (`State::emit`), and sends it to the front ends at once.
    pub(in crate::agent) fn emit(&mut self, event: AgentEvent) {
        self.state.emit(event);
        self.state.flush(&self.outbox);
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
pub(super) fn overhead(config: &AgentConfig, specs: &[ToolSpec]) -> usize {
    config.system_prompt.len() + serde_json::to_vec(specs).map_or(0, |bytes| bytes.len())
}

/// The tools the model is told about: the board first (unless it is off), then the workspace
/// tools.
pub(super) fn tool_specs(tools: &Tools, board: bool) -> Vec<ToolSpec> {
    let mut specs = Vec::new();
    if board {
        specs.push(ToolSpec {
            name: board::TOOL_NAME.to_owned(),
            description: board::TOOL_DESCRIPTION.to_owned(),
            input_schema: board::input_schema(),
        });
    }
    specs.extend(tools.specs());
    specs
}

/// The sandbox as the status bar names it; nothing when the person turned it off.
fn sandbox_label(sandbox: &crate::tools::Sandbox) -> Option<std::sync::Arc<str>> {
    (sandbox.confinement() != Confinement::Off).then(|| sandbox.label().into())
}
