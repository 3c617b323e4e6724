//! The demo's script (`assets/demo.json`) and where a conversation stands in it.
//!
//! The scripted model reads the history as a model would: the person's last prompt says which
//! part of the script to play — the plan (the script's prompt with keel's plan-mode note after
//! it), the rest of the work once the person approved the plan, else the work, one step per
//! answer in the conversation — and, in a script that has words for it, every tool result since
//! that prompt says whether the work may go on: a call that was refused or failed ends the
//! script there, the model saying so and marking nothing more done.

use crate::message::{ContentBlock, History, Message, Role};
use serde::Deserialize;
use serde_json::Value;

/// The most lines of a failed call's result the model quotes.
const QUOTED_LINES: usize = 8;
/// The most characters of one quoted line.
const QUOTED_LINE_CHARS: usize = 600;
/// In the failure answer, stands for the tool that failed.
const TOOL: &str = "{tool}";
/// In the failure answer, stands for what keel answered it.
const REASON: &str = "{reason}";

#[derive(Debug, Clone, Deserialize)]
pub(super) struct Script {
    pub prompt: String,
    /// The answer to any other prompt, and once a part of the script is played out.
    pub finished: String,
    /// The answer after a call that was refused or failed: [`TOOL`] and [`REASON`] filled in.
    /// A script without it plays on whatever the calls answered.
    #[serde(default)]
    pub failed: Option<String>,
    /// The work, from the plan on the board to the last words.
    pub steps: Vec<Step>,
    /// Plan mode: read, then leave the plan on the board for the person to approve.
    #[serde(default)]
    pub plan: Vec<Step>,
    /// The first step once the person approved the plan; the work's second step follows it.
    #[serde(default)]
    pub approved: Option<Step>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub(super) struct Step {
    #[serde(default)]
    pub text: String,
    #[serde(default)]
    pub tools: Vec<ScriptedCall>,
}

#[derive(Debug, Clone, Deserialize)]
pub(super) struct ScriptedCall {
    pub name: String,
    pub input: Value,
}

/// What the model answers next.
#[derive(Debug)]
pub(super) enum Next<'a> {
    /// A step of the part being played; `number` counts the answers in the conversation, so
    /// the calls' ids stay unique whichever part plays.
    Step { number: usize, step: &'a Step },
    /// A call since the prompt did not succeed: the answer that says so, filled in.
    Failed(String),
    /// The closing words.
    Finished,
}

/// Which part of the script a prompt starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    Work,
    Plan,
    Approved,
}

impl Script {
    /// What answers `history`: the next step of the part the person's last prompt started,
    /// unless a call since that prompt was refused or failed.
    pub fn next(&self, history: &History) -> Next<'_> {
        let start = history.iter().rposition(is_prompt).unwrap_or(0);
        let since: Vec<&Message> = history.iter().skip(start + 1).collect();
        if let (Some(failed), Some((tool, result))) = (&self.failed, first_failure(&since)) {
            return Next::Failed(failed.replace(TOOL, &tool).replace(REASON, &quoted(&result)));
        }
        let answers = |messages: &[&Message]| {
            messages.iter().filter(|message| message.role == Role::Assistant).count()
        };
        let since_prompt = answers(&since);
        let number = answers(&history.iter().collect::<Vec<_>>());
        let step = match history.get(start).map_or(Part::Work, |prompt| self.part(prompt)) {
            Part::Work => self.steps.get(number),
            Part::Plan => self.plan.get(since_prompt),
            Part::Approved if since_prompt == 0 => self.approved.as_ref(),
            Part::Approved => self.steps.get(since_prompt),
        };
        step.map_or(Next::Finished, |step| Next::Step { number, step })
    }

    /// The part of the script `prompt` starts: the plan, the approved plan's work, else the work.
    fn part(&self, prompt: &Message) -> Part {
        let text = prompt.content.iter().find_map(|block| match block {
            ContentBlock::Text { text } => Some(text.as_str()),
            _ => None,
        });
        let plan_mode = prompt.content.iter().any(|block| {
            matches!(block, ContentBlock::Reminder { text } if crate::prompt::is_plan_note(text))
        });
        match text {
            Some(text)
                if self.approved.is_some() && text.starts_with(crate::prompt::PLAN_APPROVED) =>
            {
                Part::Approved
            }
            Some(text) if plan_mode && !self.plan.is_empty() && text.trim() == self.prompt => {
                Part::Plan
            }
            _ => Part::Work,
        }
    }
}

/// A message the person sent (as opposed to one that carries tool results).
fn is_prompt(message: &Message) -> bool {
    message.role == Role::User && matches!(message.content.first(), Some(ContentBlock::Text { .. }))
}

/// The first call among `messages` whose result is an error: its tool's name and the result.
fn first_failure(messages: &[&Message]) -> Option<(String, String)> {
    messages.iter().flat_map(|message| &message.content).find_map(|block| match block {
        ContentBlock::ToolResult { tool_use_id, content, is_error: true } => {
            let tool = messages
                .iter()
                .flat_map(|message| &message.content)
                .find_map(|block| match block {
                    ContentBlock::ToolUse { id, name, .. } if id == tool_use_id => {
                        Some(name.clone())
                    }
                    _ => None,
                })
                .unwrap_or_else(|| "tool".to_owned());
            Some((tool, content.clone()))
        }
        _ => None,
    })
}

/// The start of a result as a Markdown quote: a few lines, none too long.
fn quoted(result: &str) -> String {
    let mut lines: Vec<String> = result
        .trim()
        .lines()
        .filter(|line| !line.trim().is_empty())
        .take(QUOTED_LINES)
        .map(|line| match line.char_indices().nth(QUOTED_LINE_CHARS) {
            Some((cut, _)) => format!("> {} …", &line[..cut]),
            None => format!("> {line}"),
        })
        .collect();
    let more = result.trim().lines().filter(|line| !line.trim().is_empty()).count();
    if let Some(more) = more.checked_sub(QUOTED_LINES).filter(|more| *more > 0) {
        lines.push(format!("> … ({more} more lines)"));
    }
    lines.join("\n>\n")
}
