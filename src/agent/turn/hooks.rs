//! Where a conversation runs hooks (`crate::hooks`): a [`HookRunner`] over its parts fires them
//! in the sandbox its calls run in, listening to the person meanwhile, and tells what they said:
//! each run as a `hook` event (a line in the conversation when it blocked or failed), a hook's
//! `systemMessage` as a note, a workspace hook that lost its trust as an error; `/hooks`' view
//! brought up to date. What a hook's answer means is decided where its event happens: the
//! call's road (`road::before`, `road::after`), the board (`task_completed`), the turn's start
//! and end (`prompt_hooks`), compaction and the session's start (`agent::worker`).

use crate::agent::event::AgentEvent;
use crate::agent::services::Services;
use crate::agent::turn::handle::{Handle, Parts, Shared};
use crate::agent::turn::{Stop, during_turn};
use crate::hooks::{Event, Fired, Outcome, Query, Verdict, names};
use crate::tags::Tag;
use crate::tools::{self, ToolCall, Tools};
use serde_json::{Map, Value, json};
use std::sync::Arc;

/// The most of a changed input the model is shown in the note that says it changed.
const CHANGED_INPUT_CHARS: usize = 2000;

/// Runs a conversation's hooks in the sandbox its calls run in, and tells what they did.
pub(in crate::agent) struct HookRunner<'t> {
    conv: Handle<'t>,
    shared: Shared<'t>,
}

impl<'t> HookRunner<'t> {
    /// The runner for the conversation `conv`, over the workspace's `shared` services.
    pub fn new((conv, shared): Parts<'t>) -> Self {
        Self { conv, shared }
    }

    /// Runs `event`'s hooks that `query` matches, listening to the person meanwhile: an
    /// interrupt (or the front end leaving) stops waiting, and the hooks are killed. `call`: the
    /// tool call they run for. Tells what they did.
    pub async fn fire(
        mut self,
        event: Event,
        query: Query<'_>,
        fields: Map<String, Value>,
        call: Option<&str>,
    ) -> Result<Fired, Stop> {
        let hooks = Arc::clone(&self.shared.services.hooks);
        if !hooks.has(event) {
            return Ok(Fired::default());
        }
        let mode = self.shared.services.approvals().mode();
        let common = self.conv.state.hook_common(hooks.workspace(), mode);
        let sandbox = self.sandbox().await;
        let fired = hooks.fire(event, query, &common, fields, &sandbox);
        tokio::pin!(fired);
        let fired = loop {
            tokio::select! {
                fired = &mut fired => break fired,
                command = self.conv.inbox.recv() => {
                    let services = self.shared.services;
                    if let Some(stop) =
                        during_turn(self.conv.state, self.conv.outbox, services, command)
                    {
                        return Err(stop);
                    }
                }
            }
        };
        self.tell(&fired, call);
        Ok(fired)
    }

    /// As [`HookRunner::fire`], between turns: the person's commands wait in the inbox until the
    /// hooks are done.
    pub async fn fire_between_turns(
        mut self,
        event: Event,
        query: Query<'_>,
        fields: Map<String, Value>,
    ) -> Fired {
        let hooks = Arc::clone(&self.shared.services.hooks);
        if !hooks.has(event) {
            return Fired::default();
        }
        let mode = self.shared.services.approvals().mode();
        let common = self.conv.state.hook_common(hooks.workspace(), mode);
        let sandbox = self.sandbox().await;
        let fired = hooks.fire(event, query, &common, fields, &sandbox).await;
        self.tell(&fired, None);
        fired
    }

    /// The sandbox hooks that run confined run in: the one this conversation's calls run in now
    /// (read-only in plan mode), once its probe has answered.
    async fn sandbox(&self) -> crate::runtime::Sandbox {
        self.shared.tools.probing_sandbox().settled().await;
        self.shared.tools_for(self.conv.read_only_rules()).sandbox().clone()
    }

    /// Tells what the hooks did, and brings `/hooks`' view up to date.
    fn tell(&mut self, fired: &Fired, call: Option<&str>) {
        for ran in &fired.runs {
            let text = match &ran.reply.verdict {
                Verdict::Fine => String::new(),
                Verdict::Blocked(text) | Verdict::Failed(text) => text.clone(),
            };
            let command = crate::visible::one_line(&ran.command);
            self.conv.emit(AgentEvent::Hook {
                event: ran.event,
                command: command.clone(),
                outcome: Outcome::of(&ran.reply.verdict),
                text,
                tool_use_id: call.map(str::to_owned),
                duration_ms: u64::try_from(ran.took.as_millis()).unwrap_or(u64::MAX),
            });
            if let Some(message) = &ran.reply.message {
                self.conv.emit(AgentEvent::Notice {
                    text: format!("{} hook `{command}`: {message}", ran.event),
                });
            }
        }
        if let Some(lost) = &fired.lost_trust {
            self.conv.emit(AgentEvent::Error { text: lost.clone() });
        }
        self.conv.state.set_hooks(self.shared.services.hooks.view());
        self.conv.state.publish(self.conv.outbox);
    }
}

/// `tools` whose commands cannot change what the trusted workspace hooks run: the files they
/// name read-only, the folders above them pinned (`Hooks::kept`).
pub(in crate::agent) fn keep_hook_files(services: &Services, tools: Tools) -> Tools {
    let kept = services.hooks.kept();
    if kept.is_empty() {
        return tools;
    }
    let mut sandbox = tools.sandbox().clone();
    kept.keep_in(&mut sandbox);
    tools.with_sandbox(sandbox)
}

/// The tool fields of a PreToolUse or PostToolUse input: `tool_name` as Claude Code names the
/// tool (keel's beside it, as `keel_tool_name`), the input with both sets of names, the call's id.
pub(in crate::agent) fn tool_fields(
    call: &ToolCall,
    workspace: &std::path::Path,
) -> Map<String, Value> {
    let mut fields = Map::new();
    fields.insert("tool_name".into(), json!(tools::names::claude_name(&call.name)));
    fields.insert("keel_tool_name".into(), json!(call.name));
    fields
        .insert("tool_input".into(), names::with_claude_fields(&call.name, &call.input, workspace));
    fields.insert("tool_use_id".into(), json!(call.id));
    fields
}

/// What the model reads of a hook's words beside a result or a prompt: in `tag` (one of the
/// hooks' tags), with keel's tags in the words defused (`crate::tags`).
pub(in crate::agent) fn for_model(tag: Tag, event: Event, text: &str) -> String {
    tag.wrap_with(&[("event", event.name())], text)
}

/// The note that tells the model a PreToolUse hook changed its call, and what ran instead.
pub(in crate::agent) fn changed_note(input: &Value) -> String {
    let mut shown = input.to_string();
    if shown.len() > CHANGED_INPUT_CHARS {
        crate::tools::output::truncate_at_char(&mut shown, CHANGED_INPUT_CHARS);
        shown.push_str(" …");
    }
    for_model(
        Tag::HookNote,
        Event::PreToolUse,
        &format!("A hook changed this call's input before it ran; it ran with: {shown}"),
    )
}
