//! The hooks at a turn's two ends. UserPromptSubmit runs over the person's prompt before the
//! model sees it: one that blocks keeps the prompt out of the history (the person is told why,
//! the model nothing), and what the hooks add — with what the SessionStart hooks added — goes
//! in the prompt's message, after the person's text. Stop runs when the model answers without
//! asking for a tool: one that blocks keeps the turn going, its reason the next message the
//! model reads; at most [`MAX_STOP_CONTINUATIONS`] times in a row, so a hook that always
//! blocks cannot keep a turn going for ever.

use crate::agent::event::AgentEvent;
use crate::agent::turn::hooks::{HookRunner, for_model};
use crate::agent::turn::{Stop, Turn};
use crate::hooks::{Event, Query};
use crate::message::{ContentBlock, Message, Role};
use crate::tags::Tag;
use serde_json::{Map, Value, json};

/// How many times in a row Stop hooks may keep one turn going.
pub const MAX_STOP_CONTINUATIONS: u32 = 8;

/// Why a prompt was not sent.
pub(in crate::agent) enum NotSent {
    /// A UserPromptSubmit hook blocked it: what the person is told.
    Blocked(String),
    /// The person interrupted while the hooks ran.
    Stopped(Stop),
}

impl Turn<'_> {
    /// Runs the UserPromptSubmit hooks over `prompt`; the blocks for the model to read after the
    /// prompt (the SessionStart hooks' too), or why it is not sent.
    pub(in crate::agent) async fn prompt_submitted(
        &mut self,
        prompt: &str,
    ) -> Result<Vec<ContentBlock>, NotSent> {
        let fields = Map::from_iter([("prompt".to_owned(), Value::from(prompt))]);
        let fired = HookRunner::new(self.parts())
            .fire(Event::UserPromptSubmit, Query::Nothing, fields, None)
            .await
            .map_err(NotSent::Stopped)?;
        if fired.blocked().is_some() {
            return Err(NotSent::Blocked(
                "The prompt was not sent to the model: a UserPromptSubmit hook blocked it.".into(),
            ));
        }
        let mut notes: Vec<String> = std::mem::take(self.hook_context);
        let context = fired.context().into_iter();
        notes.extend(
            context.map(|text| for_model(Tag::HookContext, Event::UserPromptSubmit, &text)),
        );
        Ok(notes.into_iter().map(|text| ContentBlock::Note { text }).collect())
    }

    /// Runs the Stop hooks (a child agent's: SubagentStop) over a turn about to end with
    /// `last_text`, which they have kept going `continued` times already. `Ok(true)`: a hook
    /// blocked and its reason is now the model's next message, so the turn goes on.
    pub(in crate::agent) async fn stop_hooks(
        &mut self,
        last_text: &str,
        continued: u32,
    ) -> Result<bool, Stop> {
        let fields = Map::from_iter([
            ("stop_hook_active".to_owned(), json!(continued > 0)),
            ("last_assistant_message".to_owned(), json!(last_text)),
        ]);
        let event = if self.config.is_child() { Event::SubagentStop } else { Event::Stop };
        let fired = HookRunner::new(self.parts()).fire(event, Query::Nothing, fields, None).await?;
        let Some(reason) = fired.blocked() else {
            return Ok(false);
        };
        if continued >= MAX_STOP_CONTINUATIONS {
            self.emit(AgentEvent::Notice {
                text: format!(
                    "{} hooks kept this turn going {MAX_STOP_CONTINUATIONS} times in a row; \
                     keel ends it here.",
                    event.name()
                ),
            });
            return Ok(false);
        }
        let text = for_model(Tag::HookFeedback, event, &reason);
        self.state
            .push_message(Message { role: Role::User, content: vec![ContentBlock::Note { text }] });
        Ok(true)
    }
}
