//! `-p`'s lines for child agents (`task`): a line as each starts and ends, and its progress lines
//! under its label — indented, each marked with its id, since explorers run at the same time —
//! and, in JSON, each of its events with the `agent` id added. What a child spent counts in the
//! closing line.

use super::{Spent, print_progress};
use crate::agent::AgentEvent;
use crate::message::Usage;
use crate::visible::one_line;
use std::collections::HashMap;
use std::io::Write;

/// What `-p` keeps of the children while it prints.
#[derive(Debug, Default)]
pub(super) struct Children {
    /// Each child's label, by id.
    labels: HashMap<String, String>,
    /// Their model responses and tokens, added up.
    pub responses: u32,
    pub usage: Usage,
}

impl Children {
    /// Prints a child's event as text (`event` is one of `agent_start`, `agent_end`, or a
    /// child's own, wrapped), or counts it.
    pub fn print(&mut self, err: &mut impl Write, event: &AgentEvent) -> std::io::Result<()> {
        match event {
            AgentEvent::AgentStart { agent, kind, label, item, .. } => {
                let what = match item {
                    Some(item) => format!("item #{}", one_line(item)),
                    None => kind.clone(),
                };
                writeln!(err, "▸ {agent} {what}: {}", one_line(label))?;
                self.labels.insert(agent.clone(), label.clone());
            }
            AgentEvent::AgentEnd { agent, status, rounds, input_tokens, error, .. } => {
                let spent = format!("{rounds} model responses, {input_tokens} tokens in");
                match error {
                    Some(why) => {
                        writeln!(err, "◂ {agent} {} ({spent}): {}", status.as_str(), one_line(why))?
                    }
                    None => writeln!(err, "◂ {agent} {} ({spent})", status.as_str())?,
                }
            }
            AgentEvent::Child { agent, event } => self.print_own(err, agent, event)?,
            _ => {}
        }
        Ok(())
    }

    /// One event of child `agent`'s own conversation: its progress lines, marked with its id.
    fn print_own(
        &mut self,
        err: &mut impl Write,
        agent: &str,
        event: &AgentEvent,
    ) -> std::io::Result<()> {
        match event {
            AgentEvent::Usage { .. } => {
                self.responses += 1;
                self.usage.add(event.usage().unwrap_or_default());
                return Ok(());
            }
            // How it ended is its `agent_end`; what only a screen shows is left out, as for the
            // parent.
            AgentEvent::Result { .. }
            | AgentEvent::Prompt { .. }
            | AgentEvent::Thinking { .. }
            | AgentEvent::InterruptedText { .. }
            | AgentEvent::Notice { .. } => return Ok(()),
            _ => {}
        }
        let mut lines = Vec::new();
        print_progress(&mut lines, &mut Vec::new(), event, &Spent::default())?;
        for line in String::from_utf8_lossy(&lines).lines() {
            writeln!(err, "  {agent}│ {line}")?;
        }
        Ok(())
    }
}

/// A child's event as its JSON line: the event as its own conversation tells it, with the
/// child's `agent` id added; any other event as it is.
pub(super) fn json(event: &AgentEvent) -> serde_json::Result<serde_json::Value> {
    let AgentEvent::Child { agent, event } = event else {
        return serde_json::to_value(event);
    };
    let mut value = json(event)?;
    if let Some(fields) = value.as_object_mut() {
        fields.insert("agent".to_owned(), serde_json::Value::String(agent.clone()));
    }
    Ok(value)
}
