//! The demo's model: replays a scripted task from `assets/demo.json` through the real agent loop.
//!
//! The script is a list of steps, each an assistant answer (text and tool calls). The step to play
//! is worked out from the history — the number of answers since the person sent the script's
//! prompt — so the provider holds no state of its own. Any other prompt gets the script's closing
//! words. Text streams a few words at a time so the person can watch it arrive.

use super::error::LlmError;
use super::types::{ChatRequest, Completion, StopReason, StreamEvent};
use crate::message::{ContentBlock, Role, Usage};
use serde::Deserialize;
use serde_json::Value;
use std::time::Duration;
use tokio::sync::mpsc::UnboundedSender;

/// The built-in demo script.
pub const DEMO_SCRIPT: &str = include_str!("../../assets/demo.json");
/// The pause before each answer in the TUI demo: slow enough to follow each step.
pub const HUMAN_PACE: Duration = Duration::from_millis(1200);
/// Words streamed per text chunk.
const WORDS_PER_CHUNK: usize = 3;
/// Of the pause before an answer, the part spent streaming its text (1 / this).
const STREAMING_SHARE: u32 = 3;
/// A rough count of characters per token, for the usage the demo reports.
const CHARS_PER_TOKEN: usize = 4;

#[derive(Debug, Clone, Deserialize)]
struct Script {
    prompt: String,
    finished: String,
    steps: Vec<Step>,
}

#[derive(Debug, Clone, Deserialize)]
struct Step {
    #[serde(default)]
    text: String,
    #[serde(default)]
    tools: Vec<ScriptedCall>,
}

#[derive(Debug, Clone, Deserialize)]
struct ScriptedCall {
    name: String,
    input: Value,
}

/// Where the demo works, for what it says about its folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DemoPlace {
    pub folder: std::path::PathBuf,
    /// The folder is keel's own and is removed when keel exits.
    pub temporary: bool,
}

impl DemoPlace {
    /// One sentence saying where the demo works and how long its files stay.
    pub fn describe(&self) -> String {
        let folder = self.folder.display();
        if self.temporary {
            format!(
                "the demo works in {folder}, a temporary folder removed when keel exits \
                 (`keel --demo --workdir DIR` keeps the files)"
            )
        } else {
            format!("the demo works in {folder}, and its files stay there")
        }
    }

    /// How to try the demo's script, for its closing words.
    fn try_it(&self) -> String {
        let folder = shell_word(&self.folder.display().to_string());
        let when =
            if self.temporary { ", before you quit: keel removes the folder then" } else { "" };
        format!(
            "It ran in {}. Try it: `cd {folder} && ./greet.sh keel`{when}.",
            self.folder.display()
        )
    }
}

/// `text` as one shell word: as it is when it is plain, else single-quoted.
fn shell_word(text: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "/._-+:@%".contains(c);
    if !text.is_empty() && text.chars().all(plain) {
        text.to_owned()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

/// Stands in the script for where the demo ran.
const PLACE: &str = "{where}";
/// What the script says of where it ran when nobody said.
const UNKNOWN_PLACE: &str = "Try it in the demo's folder: `./greet.sh keel`.";

/// A model that plays a script.
#[derive(Debug, Clone)]
pub struct ScriptedProvider {
    script: Script,
    pace: Duration,
    /// What the script says in place of `{where}`.
    place: String,
}

impl ScriptedProvider {
    /// The built-in demo, pausing `pace` before each answer.
    pub fn demo(pace: Duration) -> Result<Self, serde_json::Error> {
        Self::from_json(DEMO_SCRIPT, pace)
    }

    /// A script in the format of `assets/demo.json`.
    pub fn from_json(text: &str, pace: Duration) -> Result<Self, serde_json::Error> {
        Ok(Self { script: serde_json::from_str(text)?, pace, place: UNKNOWN_PLACE.to_owned() })
    }

    /// The same script saying, where it says `{where}`, that it ran in `place`.
    pub fn ran_in(self, place: &DemoPlace) -> Self {
        Self { place: place.try_it(), ..self }
    }

    /// The prompt the script answers.
    pub fn prompt(&self) -> &str {
        &self.script.prompt
    }

    pub async fn complete(
        &self,
        request: &ChatRequest<'_>,
        events: &UnboundedSender<StreamEvent>,
    ) -> Result<Completion, LlmError> {
        let (text, calls, index) = match self.next_step(request) {
            Some((index, step)) => {
                (step.text.replace(PLACE, &self.place), step.tools.clone(), index)
            }
            None => (self.script.finished.clone(), Vec::new(), self.script.steps.len()),
        };
        tokio::time::sleep(self.pace - self.pace / STREAMING_SHARE).await;
        let words: Vec<&str> = text.split_inclusive(' ').collect();
        let chunks = words.len().div_ceil(WORDS_PER_CHUNK).max(1);
        let chunk_pause = self.pace / STREAMING_SHARE / u32::try_from(chunks).unwrap_or(u32::MAX);
        for chunk in words.chunks(WORDS_PER_CHUNK) {
            let _ = events.send(StreamEvent::TextDelta(chunk.concat()));
            tokio::time::sleep(chunk_pause).await;
        }
        let mut content = Vec::new();
        if !text.is_empty() {
            content.push(ContentBlock::Text { text: text.clone() });
        }
        for (position, call) in calls.into_iter().enumerate() {
            let id = format!("toolu_demo_{index}_{position}");
            content.push(ContentBlock::ToolUse { id, name: call.name, input: call.input });
        }
        let has_tools = content.iter().any(|block| matches!(block, ContentBlock::ToolUse { .. }));
        let sent: usize = request.messages.iter().map(approximate_len).sum();
        Ok(Completion {
            stop_reason: if has_tools { StopReason::ToolUse } else { StopReason::EndTurn },
            usage: Usage {
                input_tokens: to_tokens(sent + request.system.len()),
                output_tokens: to_tokens(text.len()),
                ..Usage::default()
            },
            content,
        })
    }

    /// The step that answers this history: one step per answer so far, whatever the prompt.
    fn next_step(&self, request: &ChatRequest<'_>) -> Option<(usize, &Step)> {
        let answered =
            request.messages.iter().filter(|message| message.role == Role::Assistant).count();
        self.script.steps.get(answered).map(|step| (answered, step))
    }
}

fn approximate_len(message: &crate::message::Message) -> usize {
    message
        .content
        .iter()
        .map(|block| match block {
            ContentBlock::Text { text }
            | ContentBlock::Reminder { text }
            | ContentBlock::Note { text } => text.len(),
            ContentBlock::ToolUse { input, .. } => input.to_string().len(),
            ContentBlock::ToolResult { content, .. } => content.len(),
            ContentBlock::Thinking { thinking: text, .. } | ContentBlock::Reasoning { text } => {
                text.len()
            }
            ContentBlock::RedactedThinking { data } => data.len(),
        })
        .sum()
}

fn to_tokens(chars: usize) -> u64 {
    u64::try_from(chars / CHARS_PER_TOKEN).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::{History, Message};
    use tokio::sync::mpsc;

    #[test]
    fn the_demo_script_parses_and_plans_first() {
        let demo = ScriptedProvider::demo(Duration::ZERO).unwrap();
        assert!(demo.script.steps.len() >= 10);
        assert_eq!(demo.script.steps[0].tools[0].name, "todo");
        assert!(demo.script.steps.last().unwrap().tools.is_empty());
    }

    #[tokio::test]
    async fn plays_the_step_after_the_answers_so_far() {
        let demo = ScriptedProvider::demo(Duration::ZERO).unwrap();
        let (tx, _rx) = mpsc::unbounded_channel();
        let mut history = History::new();
        history.push_back(Message::user_text(demo.prompt()));
        let request = ChatRequest {
            system: "",
            messages: &history,
            tools: &[],
            max_tokens: 1,
            thinking_budget: None,
        };
        let first = demo.complete(&request, &tx).await.unwrap();
        assert!(matches!(&first.content[1], ContentBlock::ToolUse { name, .. } if name == "todo"));

        history.push_back(Message::assistant(first.content));
        let request = ChatRequest {
            system: "",
            messages: &history,
            tools: &[],
            max_tokens: 1,
            thinking_budget: None,
        };
        let second = demo.complete(&request, &tx).await.unwrap();
        assert!(matches!(&second.content[0], ContentBlock::ToolUse { name, .. } if name == "bash"));
    }

    #[tokio::test]
    async fn a_played_out_script_gets_the_closing_words() {
        let demo = ScriptedProvider::demo(Duration::ZERO).unwrap();
        let (tx, _rx) = mpsc::unbounded_channel();
        let mut history = History::new();
        history.push_back(Message::user_text("something else"));
        for _ in 0..demo.script.steps.len() {
            history.push_back(Message::assistant(vec![ContentBlock::Text { text: "x".into() }]));
        }
        let request = ChatRequest {
            system: "",
            messages: &history,
            tools: &[],
            max_tokens: 1,
            thinking_budget: None,
        };
        let answer = demo.complete(&request, &tx).await.unwrap();
        assert!(Message::assistant(answer.content).text().contains("configure a model"));
    }
}
