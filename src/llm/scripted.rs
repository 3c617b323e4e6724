//! The demo's model: replays a scripted task from `assets/demo.json` through the real agent loop.
//!
//! The script ([`script`]) holds the work, plan mode's part and the answer to a call that did not
//! succeed; which step to play is worked out from the history — the person's last prompt and what
//! came back since — so the provider holds no state of its own, and follows what really
//! happened: a refused or failed call ends the script with words that say so. Any other prompt
//! gets the script's closing words. Text streams a few words at a time so the person can watch it
//! arrive, and each request is handed over as keel would send it to Anthropic, so the inspector
//! shows what the model read.

mod script;

use super::error::LlmError;
use super::types::{ChatRequest, Completion, SentRequest, StopReason, StreamEvent, WireFormat};
use crate::message::{ContentBlock, Usage};
use script::{Next, Script};
use std::time::{Duration, SystemTime};
use tokio::sync::mpsc::UnboundedSender;

/// The built-in demo script.
pub const DEMO_SCRIPT: &str = include_str!("../../assets/demo.json");
/// The pause before each answer in the TUI demo: slow enough to follow each step.
pub const HUMAN_PACE: Duration = Duration::from_millis(1200);
/// The model the demo's requests name.
const MODEL: &str = "scripted";
/// Words streamed per text chunk.
const WORDS_PER_CHUNK: usize = 3;
/// Of the pause before an answer, the part spent streaming its text (1 / this).
const STREAMING_SHARE: u32 = 3;
/// A rough count of characters per token, for the usage the demo reports.
const CHARS_PER_TOKEN: usize = 4;

/// Where the demo works, for what it says about its folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DemoPlace {
    pub folder: std::path::PathBuf,
    /// The folder is keel's own and is removed when keel exits.
    pub temporary: bool,
    /// Played by `keel -p`, which exits as soon as the demo ends.
    pub headless: bool,
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
        let shown = self.folder.display();
        match (self.temporary, self.headless) {
            (true, true) => format!(
                "It ran in {shown}, which keel removes as it exits: to keep the files and try \
                 them (`./greet.sh keel`), run `keel --demo -p --workdir DIR`."
            ),
            (true, false) => format!(
                "It ran in {shown}. Try it: `cd {folder} && ./greet.sh keel`, before you quit: \
                 keel removes the folder then."
            ),
            (false, _) => format!("It ran in {shown}. Try it: `cd {folder} && ./greet.sh keel`."),
        }
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

    /// The commands the script runs, in order, for the person to see before they run.
    pub fn commands(&self) -> Vec<String> {
        let mut commands: Vec<String> = Vec::new();
        let steps = self.script.plan.iter().chain(&self.script.steps);
        for call in steps.flat_map(|step| &step.tools).filter(|call| call.name == "bash") {
            if let Some(command) = call.input.get("command").and_then(serde_json::Value::as_str)
                && !commands.iter().any(|known| known == command)
            {
                commands.push(command.to_owned());
            }
        }
        commands
    }

    pub async fn complete(
        &self,
        request: &ChatRequest<'_>,
        events: &UnboundedSender<StreamEvent>,
    ) -> Result<Completion, LlmError> {
        // What the inspector shows: the request as keel would send it to a model.
        if let Ok(body) = WireFormat::Anthropic.encode(MODEL, request) {
            let sent = SentRequest {
                body: body.into(),
                at: SystemTime::now(),
                format: WireFormat::Anthropic,
            };
            let _ = events.send(StreamEvent::Sent(sent));
        }
        let (text, calls, number) = match self.script.next(request.messages) {
            Next::Step { number, step } => {
                (step.text.replace(PLACE, &self.place), step.tools.clone(), number)
            }
            Next::Failed(text) => (text, Vec::new(), 0),
            Next::Finished => (self.script.finished.clone(), Vec::new(), 0),
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
            let id = format!("toolu_demo_{number}_{position}");
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

    /// A note of plan mode's after a prompt (`agent::plan_mode` checks that its own is one).
    fn plan_note() -> String {
        crate::tags::Tag::PlanMode.wrap("Plan mode: read what you need, then plan.")
    }
    use crate::message::{History, Message, Role};
    use tokio::sync::mpsc;

    /// The demo's answer to `history`, and the events it streamed.
    async fn answer(history: &History) -> (Completion, Vec<StreamEvent>) {
        let demo = ScriptedProvider::demo(Duration::ZERO).unwrap();
        let (tx, mut rx) = mpsc::unbounded_channel();
        let request = ChatRequest {
            system: "",
            messages: history,
            tools: &[],
            max_tokens: 1,
            thinking_budget: None,
        };
        let completion = demo.complete(&request, &tx).await.unwrap();
        drop(tx);
        let mut events = Vec::new();
        while let Some(event) = rx.recv().await {
            events.push(event);
        }
        (completion, events)
    }

    fn tool_names(completion: &Completion) -> Vec<&str> {
        completion
            .content
            .iter()
            .filter_map(|block| match block {
                ContentBlock::ToolUse { name, .. } => Some(name.as_str()),
                _ => None,
            })
            .collect()
    }

    /// The answers to each call of `completion`, all as `is_error` says.
    fn results(completion: &Completion, is_error: bool) -> Message {
        let content = completion
            .content
            .iter()
            .filter_map(|block| match block {
                ContentBlock::ToolUse { id, .. } => Some(ContentBlock::ToolResult {
                    tool_use_id: id.clone(),
                    content: if is_error {
                        "Command not run: no sandbox.".into()
                    } else {
                        "ok".into()
                    },
                    is_error,
                }),
                _ => None,
            })
            .collect();
        Message { role: Role::User, content }
    }

    #[test]
    fn the_demo_script_parses_and_plans_first() {
        let demo = ScriptedProvider::demo(Duration::ZERO).unwrap();
        assert!(demo.script.steps.len() >= 10);
        assert_eq!(demo.script.steps[0].tools[0].name, "todo");
        assert!(demo.script.steps.last().unwrap().tools.is_empty());
        assert!(demo.script.plan.last().unwrap().tools.is_empty());
        assert!(
            demo.commands().contains(&"bash test_greet.sh".to_owned()),
            "{:?}",
            demo.commands()
        );
    }

    #[tokio::test]
    async fn plays_the_step_after_the_answers_so_far_and_hands_over_the_request() {
        let demo = ScriptedProvider::demo(Duration::ZERO).unwrap();
        let mut history = History::new();
        history.push_back(Message::user_text(demo.prompt()));
        let (first, events) = answer(&history).await;
        assert_eq!(tool_names(&first), ["todo"]);
        let sent = events.iter().find_map(|event| match event {
            StreamEvent::Sent(sent) => Some(String::from_utf8_lossy(&sent.body).into_owned()),
            _ => None,
        });
        assert!(sent.is_some_and(|body| body.contains(demo.prompt())), "the inspector's request");

        history.push_back(Message::assistant(first.content.clone()));
        history.push_back(results(&first, false));
        let (second, _) = answer(&history).await;
        assert_eq!(tool_names(&second), ["bash"]);
    }

    #[tokio::test]
    async fn a_refused_call_ends_the_script_with_words_that_say_so() {
        let demo = ScriptedProvider::demo(Duration::ZERO).unwrap();
        let mut history = History::new();
        history.push_back(Message::user_text(demo.prompt()));
        let (plan, _) = answer(&history).await;
        history.push_back(Message::assistant(plan.content.clone()));
        history.push_back(results(&plan, false));
        let (look, _) = answer(&history).await;
        history.push_back(Message::assistant(look.content.clone()));
        history.push_back(results(&look, true));
        let (failed, _) = answer(&history).await;
        assert!(tool_names(&failed).is_empty(), "nothing more is run or marked done");
        assert_eq!(failed.stop_reason, StopReason::EndTurn);
        let text = Message::assistant(failed.content).text();
        assert!(text.contains("`bash` call did not succeed"), "{text}");
        assert!(text.contains("Command not run: no sandbox."), "{text}");
    }

    #[tokio::test]
    async fn plan_mode_reads_then_leaves_a_plan_and_approval_carries_it_out() {
        let demo = ScriptedProvider::demo(Duration::ZERO).unwrap();
        let mut history = History::new();
        history.push_back(Message {
            role: Role::User,
            content: vec![
                ContentBlock::Text { text: demo.prompt().to_owned() },
                ContentBlock::Reminder { text: plan_note() },
            ],
        });
        let mut played = Vec::new();
        loop {
            let (next, _) = answer(&history).await;
            let names: Vec<String> =
                tool_names(&next).iter().map(|name| (*name).to_owned()).collect();
            history.push_back(Message::assistant(next.content.clone()));
            if names.is_empty() {
                break;
            }
            history.push_back(results(&next, false));
            played.extend(names);
        }
        assert_eq!(played, ["bash", "todo"], "reads, then the plan; nothing written");
        history.push_back(Message::user_text(format!(
            "{}\n\n[ ] #1: x",
            crate::prompt::PLAN_APPROVED
        )));
        let (approved, _) = answer(&history).await;
        assert_eq!(tool_names(&approved), ["todo"]);
        history.push_back(Message::assistant(approved.content.clone()));
        history.push_back(results(&approved, false));
        let (look, _) = answer(&history).await;
        assert_eq!(tool_names(&look), ["bash"], "then the work from its second step");
    }

    #[tokio::test]
    async fn a_played_out_script_gets_the_closing_words() {
        let demo = ScriptedProvider::demo(Duration::ZERO).unwrap();
        let mut history = History::new();
        history.push_back(Message::user_text("something else"));
        for _ in 0..demo.script.steps.len() {
            history.push_back(Message::assistant(vec![ContentBlock::Text { text: "x".into() }]));
        }
        let (answer, _) = answer(&history).await;
        assert!(Message::assistant(answer.content).text().contains("configure a model"));
    }

    #[test]
    fn a_headless_demo_in_a_temporary_folder_does_not_offer_to_try_it_before_quitting() {
        let place =
            |headless| DemoPlace { folder: "/tmp/keel-demo-x".into(), temporary: true, headless };
        assert!(place(false).try_it().contains("before you quit"));
        let printed = place(true).try_it();
        assert!(
            !printed.contains("before you quit") && printed.contains("--workdir DIR"),
            "{printed}"
        );
    }
}
