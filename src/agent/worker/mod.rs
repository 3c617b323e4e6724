//! The agent's worker, the tokio task `agent::spawn` starts: waits for commands and runs user
//! turns one after another.
//!
//! Between turns it answers the person's commands (clear, undo, the demo, board edits, plan
//! mode and its approval); during a turn the turn code (`turn`) listens for them instead. It
//! holds one conversation (`Conversation`), the channels to the front end (`Link`) and the
//! workspace's services (`Services`), which each turn borrows.

use crate::agent::command::Command;
use crate::agent::compaction::{self, Why};
use crate::agent::config::AgentConfig;
use crate::agent::conversation::{Conversation, Link};
use crate::agent::event::AgentEvent;
use crate::agent::services::Services;
use crate::agent::snapshot::Activity;
use crate::agent::state::{ModelLabel, Outbox, State};
use crate::agent::turn::hooks::{HookRunner, for_model};
use crate::agent::turn::{NO_PROVIDER_HELP, Stop, Turn};
use crate::agent::turn::{jobs_watch, nested_repos, watches};
use crate::agent::{approval_switch, board_edits};
use crate::hooks::{Event, HooksCommand, Query};
use crate::llm::{Provider, WireFormat};
use crate::runtime::supervisor::jobs;
use crate::tags::Tag;
use crate::tools::{ToolSet, Tools};
use std::sync::Arc;
use tokio::sync::mpsc::UnboundedReceiver;

mod between_turns;
mod demo;
mod model_switch;

/// How a session starts, as SessionStart hooks are told (and match).
const SOURCE_STARTUP: &str = "startup";
const SOURCE_RESUME: &str = "resume";
const SOURCE_CLEAR: &str = "clear";

/// The worker's conversation, channels and services.
pub(in crate::agent) struct Agent {
    pub conversation: Conversation,
    pub link: Link,
    pub services: Services,
    /// The demo's temporary workspace, removed when the worker ends.
    pub(super) demo_dir: Option<tempfile::TempDir>,
    /// How many commands' background jobs had ended at the last look for what they left.
    jobs_seen: usize,
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
        let toolset = ToolSet::new(config.board, tools.mcp().clone());
        let services = Services::new(tools, config.approval).with_hooks(config.hooks.clone());
        let conversation = Conversation::new(config, provider.map(Arc::new), toolset, state);
        let mut agent = Self {
            conversation,
            link: Link { inbox, outbox },
            services,
            demo_dir: None,
            jobs_seen: jobs::ended(),
        };
        if let Some(sandbox) = agent.services.tools.probing_sandbox().clone().ready() {
            let label = agent.services.adopt_sandbox(sandbox);
            agent.conversation.state.set_sandbox(label);
        }
        let hooks = agent.services.hooks.view();
        agent.conversation.state.set_hooks(hooks);
        agent.turn().tell_request_shape();
        agent
    }

    /// A turn over the conversation: what the turn code runs on, between turns too.
    pub(in crate::agent) fn turn(&mut self) -> Turn<'_> {
        self.conversation.turn(&mut self.link, &self.services)
    }

    /// Runs until `Quit` or until every front end is gone.
    pub async fn run(mut self) {
        let mut mcp_changes = self.services.tools.mcp().subscribe();
        if !self.services.tools.mcp().is_empty() {
            self.turn().mcp_changed();
        }
        self.conversation.state.publish(&self.link.outbox);
        let source = if self.conversation.state.view().history.is_empty() {
            SOURCE_STARTUP
        } else {
            SOURCE_RESUME
        };
        self.session_start(source).await;
        loop {
            let command = tokio::select! {
                command = self.link.inbox.recv() => command,
                () = crate::agent::turn::next_mcp_change(&mut mcp_changes) => {
                    self.turn().mcp_changed();
                    continue;
                }
                () = jobs_watch::next_look(self.jobs_seen), if jobs_watch::watching(self.jobs_seen) => {
                    self.look_while_jobs_run().await;
                    // The screen draws snapshots: what the look told shows now, idle or not.
                    self.conversation.state.publish(&self.link.outbox);
                    continue;
                }
            };
            let Some(command) = command else {
                break;
            };
            match command {
                Command::Submit(prompt) => {
                    self.conversation.state.queue(prompt);
                    if self.drain_queue().await == Some(Stop::Quit) {
                        break;
                    }
                }
                Command::Continue => {
                    let stop = self.turn().run(None).await;
                    if stop == Some(Stop::Quit) || self.after_turn(stop).await == Some(Stop::Quit) {
                        break;
                    }
                }
                Command::Clear => {
                    self.start_new_conversation();
                    self.turn().emit(AgentEvent::Notice { text: "New conversation.".into() });
                    self.session_start(SOURCE_CLEAR).await;
                }
                Command::Undo => {
                    let report = self.conversation.state.undo(self.services.tools.workspace());
                    self.turn().emit(AgentEvent::Notice { text: report.summary() });
                }
                Command::StartDemo => {
                    if let Err(err) = self.switch_to_demo() {
                        self.turn().emit(AgentEvent::Error { text: err });
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
                Command::EditBoard(edit) => {
                    board_edits::edit(&mut self.conversation.state, &self.link.outbox, &edit);
                }
                Command::PlanMode(on) => {
                    board_edits::plan_mode(&mut self.conversation.state, &self.link.outbox, on);
                }
                Command::Approval(mode) => approval_switch::switch(
                    &self.services,
                    &mut self.conversation.state,
                    &self.link.outbox,
                    mode,
                ),
                Command::ApprovePlan => {
                    let stop = self.approve_plan().await;
                    if stop == Some(Stop::Quit) || self.after_turn(stop).await == Some(Stop::Quit) {
                        break;
                    }
                }
                Command::ListSessions => self.conversation.state.list_sessions(),
                Command::Resume(id) => {
                    if self.resume(&id) {
                        self.session_start(SOURCE_RESUME).await;
                    }
                }
                Command::Hooks(command) => self.hooks_command(command),
                Command::Quit => break,
                command @ (Command::Shell(_)
                | Command::SwitchModel(_)
                | Command::ShowDiff
                | Command::ShowSandbox) => {
                    if self.between_turns(command).await == Some(Stop::Quit) {
                        break;
                    }
                }
                Command::Cancel | Command::Approve { .. } => {}
            }
            // The person's edits that wait for a check: between turns, it runs now; a prompt
            // sent meanwhile was queued, and runs after it as after a turn.
            let stop = board_edits::take_checked_edits(&mut self.turn().parts()).await;
            if stop == Some(Stop::Quit) || self.after_turn(stop).await == Some(Stop::Quit) {
                break;
            }
            self.conversation.state.set_activity(Activity::Idle);
            self.conversation.state.publish(&self.link.outbox);
        }
    }

    /// The person approved the plan: plan mode ends and a turn starts on the approved board.
    async fn approve_plan(&mut self) -> Option<Stop> {
        let mut turn = self.turn();
        if !turn.state.view().plan_ready {
            turn.emit(AgentEvent::Error {
                text:
                    "There is no plan to approve yet: in plan mode, the model's board is the plan."
                        .into(),
            });
            return None;
        }
        if turn.state.view().board.is_empty() {
            turn.emit(AgentEvent::Error {
                text: "The plan is empty: add an item (/todo add TEXT) or ask the model for a \
                       plan before approving it."
                    .into(),
            });
            return None;
        }
        turn.state.set_plan_mode(false);
        turn.emit(AgentEvent::Notice {
            text: "Plan approved: the model works through the board.".into(),
        });
        let prompt = turn.approval_prompt();
        turn.run(Some(prompt)).await
    }

    /// `/compact`: summarises the work so far now, between turns.
    async fn compact_now(&mut self) -> Option<Stop> {
        let mut turn = self.turn();
        if turn.provider.is_none() {
            turn.emit(AgentEvent::Error { text: NO_PROVIDER_HELP.to_owned() });
            return None;
        }
        let done = turn.compact(Why::Asked).await;
        compaction::tell_asked(turn.state, turn.outbox, done)
    }

    /// Runs queued prompts until none are left, or the person interrupts one: then the rest go
    /// back to them.
    pub(super) async fn drain_queue(&mut self) -> Option<Stop> {
        while let Some(prompt) = self.conversation.state.next_queued() {
            match self.turn().run(Some(prompt)).await {
                Some(Stop::Quit) => return Some(Stop::Quit),
                Some(Stop::Interrupted) => {
                    self.conversation.state.hand_back_queue();
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
            self.conversation.state.hand_back_queue();
            return None;
        }
        self.drain_queue().await
    }

    /// Switches to the saved session `id`, when it opens; returns whether it did.
    fn resume(&mut self, id: &str) -> bool {
        let conversation = &mut self.conversation;
        let Some(opened) = conversation.state.open_session(id) else {
            return false;
        };
        if let Some(window) = opened.2.learned_window {
            conversation.meter.learn_window(window);
        }
        conversation.meter.history_changed();
        let workspace = self.services.tools.workspace().clone();
        conversation.state.switch_to(opened, &workspace);
        true
    }

    /// Runs the SessionStart hooks for a session that starts as `source` says; what they add
    /// for the model goes with the next prompt.
    async fn session_start(&mut self, source: &str) {
        let fields = serde_json::Map::from_iter([("source".to_owned(), source.into())]);
        let mut turn = self.turn();
        let fired = HookRunner::new(turn.parts())
            .fire_between_turns(Event::SessionStart, Query::Value(source), fields)
            .await;
        let context = fired
            .context()
            .into_iter()
            .map(|text| for_model(Tag::HookContext, Event::SessionStart, &text));
        turn.hook_context.clear();
        turn.hook_context.extend(context);
    }

    /// `/hooks trust`, `/hooks forget`.
    fn hooks_command(&mut self, command: HooksCommand) {
        let hooks = Arc::clone(&self.services.hooks);
        let said = match command {
            HooksCommand::Trust => hooks.trust_all(),
            HooksCommand::Forget => hooks.forget(),
        };
        let mut turn = self.turn();
        turn.state.set_hooks(hooks.view());
        turn.emit(match said {
            Ok(text) => AgentEvent::Notice { text },
            Err(text) => {
                AgentEvent::Error { text: format!("Could not change the hooks' trust: {text}") }
            }
        });
    }

    /// While a background job a command left lives on, and as each ends: looks for a
    /// `.git/commondir` and for repositories below the top that a job made, as each turn's end
    /// does; the person is told as of an error.
    /// What appears again where keel removed it, while no command runs, only a job can have
    /// made: keel then stops every job, and says so at once.
    async fn look_while_jobs_run(&mut self) {
        self.jobs_seen = jobs::ended();
        let mut turn = self.turn();
        let commondir_again = watches::look_at_repository_again(turn.parts());
        let repository_again = nested_repos::look_for_nested_repositories(turn.parts()).await;
        if !(commondir_again || repository_again) {
            return;
        }
        let stopped = jobs::stop_all(turn.tools.workspace().root());
        if stopped == 0 {
            // The job that made it had ended already.
            return;
        }
        let what = if commondir_again { ".git/commondir" } else { "a repository" };
        turn.emit(AgentEvent::Error {
            text: format!(
                "keel stopped the background jobs commands left running ({stopped}): {what} was \
                 made again after keel removed it, while no command ran, so one of them keeps \
                 making it. Start them again yourself if you trust them."
            ),
        });
    }

    /// Empties the conversation; it is saved from here on to a new session log, if sessions are
    /// being saved.
    fn start_new_conversation(&mut self) {
        let state = &mut self.conversation.state;
        let journal = state.fresh_journal();
        state.clear(journal);
        self.conversation.meter.history_changed();
    }
}
