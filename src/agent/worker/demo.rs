//! The built-in demo in the TUI: a scripted model (`llm::scripted`) working in a throwaway
//! folder with the real tools, started by `keel --demo` or `/demo`.
//!
//! Where no sandbox can be set up (and the person did not turn it off), the demo says so before
//! it starts — what to install — and offers to run with the sandbox off inside its own
//! temporary folder: the approval box lists the script's commands, exactly those that would run
//! unconfined. Said no to, the demo plays anyway, keel refuses its commands, and the scripted
//! model says the work stopped there.

use super::Agent;
use crate::agent::command::Decision;
use crate::agent::config::ApprovalMode;
use crate::agent::event::AgentEvent;
use crate::agent::journal::Journal;
use crate::agent::services::Services;
use crate::agent::snapshot::{ApprovalRequest, Asking};
use crate::agent::state::ModelLabel;
use crate::agent::turn::{Stop, approval_prompt, watches};
use crate::llm::scripted::{DemoPlace, HUMAN_PACE, ScriptedProvider};
use crate::llm::{Provider, WireFormat};
use crate::runtime::Workspace;
use crate::runtime::sandbox::Sandbox;
use crate::tools::{ToolSet, Tools};
use std::sync::Arc;

/// The id of the demo's question in the approval box.
const OFFER_ID: &str = "demo-unconfined";
/// The status bar's word for the demo's commands run with the sandbox off.
const OFF_LABEL: &str = "sandbox: off (demo)";

impl Agent {
    /// Replaces the model with the scripted demo in a fresh temporary workspace (`/demo`).
    pub(super) fn switch_to_demo(&mut self) -> Result<(), String> {
        let dir = tempfile::Builder::new()
            .prefix("keel-demo-")
            .tempdir()
            .map_err(|err| format!("could not create the demo workspace: {err}"))?;
        let workspace = Workspace::new(dir.path())
            .map_err(|err| format!("could not open the demo workspace: {err}"))?;
        let place =
            DemoPlace { folder: dir.path().to_path_buf(), temporary: true, headless: false };
        let script = ScriptedProvider::demo(HUMAN_PACE)
            .map_err(|err| format!("the demo script is broken: {err}"))?
            .ran_in(&place);
        let probing = self.services.tools.probing_sandbox().clone();
        let tools = Tools::new(workspace).with_probing_sandbox(probing.clone());
        let toolset = ToolSet::new(self.conversation.config.board, tools.mcp().clone());
        // The demo works in a throwaway folder and is meant to be watched, not steered.
        self.services = Services::new(tools, ApprovalMode::Auto);
        let label = self.services.adopt_sandbox(probing.get());
        self.conversation.offer(toolset);
        self.conversation.provider = Some(Arc::new(Provider::Scripted(script)));
        self.demo_dir = Some(dir);
        let state = &mut self.conversation.state;
        state.set_sandbox(label);
        // The demo's folder is thrown away when keel ends: nothing of it is worth saving.
        state.clear(Journal::default());
        state.set_label(ModelLabel {
            provider: "demo",
            model: "scripted",
            wire_format: WireFormat::Anthropic,
        });
        let mut turn = self.turn();
        turn.tell_request_shape();
        turn.emit(AgentEvent::Notice {
            text: format!("Demo: a scripted model plays a sample task; {}.", place.describe()),
        });
        Ok(())
    }

    /// Plays the demo's prompt; first, where commands cannot be sandboxed, asks whether to run
    /// the demo's own commands with the sandbox off. Esc at that question plays nothing.
    pub(super) async fn play_demo(&mut self) -> Option<Stop> {
        let Some(Provider::Scripted(script)) = self.conversation.provider.as_deref() else {
            return None;
        };
        let (prompt, commands) = (script.prompt().to_owned(), script.commands());
        watches::settle_sandbox(&self.services, &mut self.conversation.state).await;
        if self.services.tools.sandbox().problem().is_some() {
            let folder = self.services.tools.workspace().root().display().to_string();
            let request = ApprovalRequest {
                id: OFFER_ID.to_owned(),
                tool: "demo".to_owned(),
                asking: Asking::DemoUnconfined,
                detail: commands.join("\n"),
                diff: None,
                always: None,
                sandbox: Some(format!(
                    "No sandbox here: install bubblewrap (`apt-get install bubblewrap`) and start \
                     the demo again to watch it confined. y: run these commands with the sandbox \
                     off — unconfined, as you — inside the demo's own temporary folder {folder}. \
                     n: play the demo anyway and watch keel refuse them. Esc: no demo."
                )),
                agent: None,
                check: None,
            };
            match approval_prompt::wait_for_answer(self.turn().parts(), request).await {
                Decision::Once | Decision::Always => self.run_demo_unconfined(),
                Decision::Deny => {}
                Decision::DenyAndStop => {
                    self.turn().emit(AgentEvent::Notice {
                        text: "The demo did not start. Install bubblewrap and type /demo to \
                               watch it sandboxed."
                            .into(),
                    });
                    return None;
                }
            }
        }
        self.conversation.state.queue(prompt);
        self.drain_queue().await
    }

    /// The person said yes: the demo's commands run with the sandbox off, in its folder.
    fn run_demo_unconfined(&mut self) {
        let off = Sandbox::off();
        self.services.tools = self.services.tools.clone().with_sandbox(off.clone());
        self.services.adopt_sandbox(&off);
        let root = self.services.tools.workspace().root().display().to_string();
        self.conversation.state.set_sandbox(Some(OFF_LABEL.into()));
        self.turn().emit(AgentEvent::Notice {
            text: format!("The demo's commands run with the sandbox off, in {root}."),
        });
    }
}
