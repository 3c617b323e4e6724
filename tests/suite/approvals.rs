//! Approvals through the agent's public API: every tool that changes something, in every mode,
//! with every answer the person can give, checked by what really happened in the workspace, what
//! the model was told and how often the person was asked.

use keel::agent::{
    self, Activity, AgentConfig, AgentEvent, ApprovalMode, Command, Decision, Snapshot, TurnOutcome,
};
use keel::llm::Provider;
use keel::llm::scripted::ScriptedProvider;
use keel::message::ContentBlock;
use keel::runtime::Workspace;
use keel::tools::Tools;
use serde_json::{Value, json};
use std::path::Path;
use std::time::Duration;

/// Hang guard for one turn: the scripted model answers at once and the tools are quick.
const HANG_GUARD: Duration = Duration::from_secs(30);

/// The tools that must ask in `ask` mode and may not run in `read-only` mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tool {
    Bash,
    WriteFile,
    EditFile,
}

const TOOLS: [Tool; 3] = [Tool::Bash, Tool::WriteFile, Tool::EditFile];

impl Tool {
    fn name(self) -> &'static str {
        match self {
            Self::Bash => "bash",
            Self::WriteFile => "write_file",
            Self::EditFile => "edit_file",
        }
    }

    /// Two calls of this tool, each leaving its own mark in the workspace. The two `bash` calls
    /// are one line, so "always" for the first covers the second: a command that writes is
    /// allowed always as exactly that line, never by its kind.
    fn calls(self) -> [Value; 2] {
        match self {
            Self::Bash => {
                let both = json!({"command": "touch one.txt two.txt"});
                [both.clone(), both]
            }
            Self::WriteFile => [
                json!({"path": "one.txt", "content": "one\n"}),
                json!({"path": "two.txt", "content": "two\n"}),
            ],
            Self::EditFile => [
                json!({"path": "notes.txt", "old_text": "alpha", "new_text": "one"}),
                json!({"path": "notes.txt", "old_text": "beta", "new_text": "two"}),
            ],
        }
    }

    fn prepare(self, dir: &Path) {
        if self == Self::EditFile {
            std::fs::write(dir.join("notes.txt"), "alpha\nbeta\n").unwrap();
        }
    }

    /// Whether the first and the second call took effect.
    fn effects(self, dir: &Path) -> (bool, bool) {
        let read = |name: &str| std::fs::read_to_string(dir.join(name)).unwrap_or_default();
        match self {
            Self::Bash | Self::WriteFile => {
                (dir.join("one.txt").exists(), dir.join("two.txt").exists())
            }
            Self::EditFile => {
                let notes = read("notes.txt");
                (notes.contains("one"), notes.contains("two"))
            }
        }
    }
}

/// How the person answers each approval request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Answer {
    Decide(Decision),
    /// Esc while keel works: interrupt the turn.
    Cancel,
}

/// What one turn did.
#[derive(Debug)]
struct Played {
    /// The tool named by each approval request, in order.
    asked: Vec<String>,
    outcome: TurnOutcome,
    /// Every tool result in the history: (text, is_error).
    results: Vec<(String, bool)>,
    last: Snapshot,
    /// The workspace, kept for the caller to look at.
    dir: tempfile::TempDir,
}

fn script(steps: Vec<Value>) -> String {
    json!({"prompt": "go", "finished": "finished", "steps": steps}).to_string()
}

/// Runs one turn of `tool`'s two calls in `mode`, answering every request with `answer`.
async fn play(tool: Tool, mode: ApprovalMode, answer: Answer) -> Played {
    let calls = tool.calls().map(|input| (tool.name(), input));
    play_calls(&calls, |dir| tool.prepare(dir), mode, answer).await
}

/// Runs one turn of `calls` (one per model response, then a closing answer) in a workspace set up
/// by `prepare`, in `mode`, answering every approval request with `answer`.
async fn play_calls(
    calls: &[(&str, Value)],
    prepare: impl FnOnce(&Path),
    mode: ApprovalMode,
    answer: Answer,
) -> Played {
    let dir = tempfile::tempdir().unwrap();
    prepare(dir.path());
    let mut steps: Vec<Value> = calls
        .iter()
        .map(|(name, input)| json!({"text": "", "tools": [{"name": name, "input": input}]}))
        .collect();
    steps.push(json!({"text": "finished", "tools": []}));
    let provider = ScriptedProvider::from_json(&script(steps), Duration::ZERO).unwrap();
    keel::runtime::supervisor::set_program(crate::support::bin::program());
    let tools = Tools::new(Workspace::new(dir.path()).unwrap());
    let config = AgentConfig {
        approval: mode,
        nag_threshold: keel::agent::NagThreshold::Fixed(0),
        ..AgentConfig::default()
    };
    let mut handle = agent::spawn(config, Some(Provider::Scripted(provider)), tools);
    handle.commands.send(Command::Submit("go".into())).unwrap();

    let mut asked: Vec<(String, String)> = Vec::new();
    let mut last = None;
    let drive = async {
        loop {
            tokio::select! {
                snapshot = handle.snapshots.recv() => {
                    let snapshot = snapshot.expect("the agent stopped");
                    let new_request = snapshot
                        .pending_approval
                        .as_ref()
                        .filter(|request| !asked.iter().any(|(id, _)| *id == request.id));
                    if let Some(request) = new_request {
                        asked.push((request.id.clone(), request.tool.clone()));
                        if request.tool != "bash" {
                            assert!(request.diff.is_some(), "a file change is shown as a diff");
                        }
                        let command = match answer {
                            Answer::Decide(decision) => {
                                Command::Approve { id: request.id.clone(), decision }
                            }
                            Answer::Cancel => Command::Cancel,
                        };
                        handle.commands.send(command).unwrap();
                    }
                    last = Some(snapshot);
                }
                event = handle.events.recv() => {
                    if let Some(AgentEvent::Result { outcome, .. }) = event {
                        return outcome;
                    }
                    assert!(event.is_some(), "the agent stopped before the turn ended");
                }
            }
        }
    };
    let outcome = tokio::time::timeout(HANG_GUARD, drive).await.expect("the turn never ended");
    handle.commands.send(Command::Quit).unwrap();
    tokio::time::timeout(HANG_GUARD, &mut handle.task)
        .await
        .expect("the agent did not stop")
        .unwrap();
    while let Ok(snapshot) = handle.snapshots.try_recv() {
        last = Some(snapshot);
    }
    let last = last.expect("no snapshot");
    assert!(last.pending_approval.is_none(), "nothing is left waiting for an answer");
    assert_eq!(last.activity, Activity::Idle);
    let results = last
        .history
        .iter()
        .flat_map(|message| message.content.iter())
        .filter_map(|block| match block {
            ContentBlock::ToolResult { content, is_error, .. } => {
                Some((content.clone(), *is_error))
            }
            _ => None,
        })
        .collect();
    Played { asked: asked.into_iter().map(|(_, tool)| tool).collect(), outcome, results, last, dir }
}

/// What the model is told about each call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Told {
    /// The tool ran and succeeded.
    Ran,
    /// The person said no.
    Declined,
    /// Refused by read-only mode, without asking.
    ReadOnly,
}

struct Case {
    mode: ApprovalMode,
    answer: Answer,
    asked: usize,
    effects: (bool, bool),
    outcome: TurnOutcome,
    /// One entry per call the model made; a turn that stops never makes the second.
    told: &'static [Told],
}

fn cases() -> Vec<Case> {
    use Told::{Declined, Ran, ReadOnly};
    let ask = |answer, asked, effects, outcome, told| Case {
        mode: ApprovalMode::Ask,
        answer,
        asked,
        effects,
        outcome,
        told,
    };
    vec![
        // `y`: this once; the next call asks again.
        ask(Answer::Decide(Decision::Once), 2, (true, true), TurnOutcome::Success, &[Ran, Ran]),
        // `a`: this and the like of it, without asking again.
        ask(Answer::Decide(Decision::Always), 1, (true, true), TurnOutcome::Success, &[Ran, Ran]),
        // `n`: not this one; the model hears so and goes on (and asks for the next).
        ask(
            Answer::Decide(Decision::Deny),
            2,
            (false, false),
            TurnOutcome::Success,
            &[Declined, Declined],
        ),
        // Esc on the modal: no, and stop the turn.
        ask(
            Answer::Decide(Decision::DenyAndStop),
            1,
            (false, false),
            TurnOutcome::Interrupted,
            &[Declined],
        ),
        // Esc as an interrupt while the request is on show: the same.
        ask(Answer::Cancel, 1, (false, false), TurnOutcome::Interrupted, &[Declined]),
        Case {
            mode: ApprovalMode::Auto,
            answer: Answer::Decide(Decision::Deny),
            asked: 0,
            effects: (true, true),
            outcome: TurnOutcome::Success,
            told: &[Ran, Ran],
        },
        Case {
            mode: ApprovalMode::ReadOnly,
            answer: Answer::Decide(Decision::Once),
            asked: 0,
            effects: (false, false),
            outcome: TurnOutcome::Success,
            told: &[ReadOnly, ReadOnly],
        },
    ]
}

#[tokio::test]
async fn every_tool_that_changes_things_in_every_mode_with_every_answer() {
    for tool in TOOLS {
        for case in cases() {
            let label = format!("{} in {:?} answering {:?}", tool.name(), case.mode, case.answer);
            let played = play(tool, case.mode, case.answer).await;
            assert_eq!(played.asked.len(), case.asked, "{label}: asked {:?}", played.asked);
            assert!(played.asked.iter().all(|name| name == tool.name()), "{label}");
            let effects = tool.effects(played.dir.path());
            assert_eq!(effects, case.effects, "{label}: what happened in the workspace");
            assert_eq!(played.outcome, case.outcome, "{label}");
            assert_eq!(played.results.len(), case.told.len(), "{label}: {:?}", played.results);
            for ((text, is_error), told) in played.results.iter().zip(case.told) {
                let right = match told {
                    Told::Ran => !is_error,
                    Told::Declined => *is_error && text.contains("declined"),
                    Told::ReadOnly => *is_error && text.contains("read-only"),
                };
                assert!(right, "{label}: expected {told:?}, the model was told {text:?}");
            }
            if case.outcome == TurnOutcome::Interrupted {
                assert_eq!(played.last.history.len(), 3, "{label}: no request after the stop");
            }
        }
    }
}

#[tokio::test]
async fn always_for_a_command_covers_one_simple_command_of_its_kind_only() {
    let calls = [
        ("bash", json!({"command": "ls"})),
        ("bash", json!({"command": "ls -la"})),
        ("bash", json!({"command": "ls && touch chained.txt"})),
        ("bash", json!({"command": "ls\ntouch second-line.txt"})),
        ("bash", json!({"command": "ls $(touch substituted.txt)"})),
        ("bash", json!({"command": "ls > listing.txt"})),
        ("bash", json!({"command": "touch other.txt"})),
    ];
    let always = Answer::Decide(Decision::Always);
    let played = play_calls(&calls, |_| {}, ApprovalMode::Ask, always).await;
    // Only `ls -la` rides on the first answer; every line that does more, and `touch`, is asked.
    assert_eq!(played.asked.len(), calls.len() - 1, "{:?}", played.asked);
    assert!(played.dir.path().join("other.txt").exists());
}

/// "Always" on `sort` covers `sort` commands the guard proves read-only, read as getopt reads
/// them: a prefix of `--output`, a bundled `-o` and `--compress-program` are asked about again.
#[tokio::test]
async fn always_for_sort_does_not_cover_its_options_that_write_however_spelled() {
    let calls = [
        ("bash", json!({"command": "sort data.txt"})),
        ("bash", json!({"command": "sort -r data.txt"})),
        ("bash", json!({"command": "sort --outp=out.txt data.txt"})),
        ("bash", json!({"command": "sort -ruo out.txt data.txt"})),
        ("bash", json!({"command": "sort --comp=sh data.txt"})),
    ];
    let prepare = |dir: &Path| std::fs::write(dir.join("data.txt"), "b\na\n").unwrap();
    let always = Answer::Decide(Decision::Always);
    let played = play_calls(&calls, prepare, ApprovalMode::Ask, always).await;
    assert_eq!(played.asked.len(), 4, "only `sort -r` rides on the first answer");
}

#[tokio::test]
async fn always_for_a_line_that_is_not_one_simple_command_is_once_only() {
    let calls = [
        ("bash", json!({"command": "echo one >> log.txt"})),
        ("bash", json!({"command": "echo one >> log.txt"})),
    ];
    let always = Answer::Decide(Decision::Always);
    let played = play_calls(&calls, |_| {}, ApprovalMode::Ask, always).await;
    assert_eq!(played.asked, ["bash", "bash"], "a redirection is asked about every time");
}

#[tokio::test]
async fn always_for_one_file_tool_does_not_cover_the_other() {
    let calls = [
        ("write_file", json!({"path": "notes.txt", "content": "alpha\n"})),
        ("write_file", json!({"path": "more.txt", "content": "beta\n"})),
        ("edit_file", json!({"path": "notes.txt", "old_text": "alpha", "new_text": "one"})),
    ];
    let always = Answer::Decide(Decision::Always);
    let played = play_calls(&calls, |_| {}, ApprovalMode::Ask, always).await;
    assert_eq!(played.asked, ["write_file", "edit_file"]);
    let notes = std::fs::read_to_string(played.dir.path().join("notes.txt")).unwrap();
    assert_eq!(notes, "one\n");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_repeated_step_is_never_asked_for_and_told_the_same_in_every_mode() {
    let calls = [
        ("write_file", json!({"path": "a.txt", "content": "same\n"})),
        ("edit_file", json!({"path": "a.txt", "old_text": "gone", "new_text": "same"})),
    ];
    let prepare = |dir: &Path| std::fs::write(dir.join("a.txt"), "same\n").unwrap();
    let mut told = Vec::new();
    // Asked before any approval in `ask` mode; found out as the call runs in `auto` mode.
    for mode in [ApprovalMode::Ask, ApprovalMode::Auto] {
        let answer = Answer::Decide(Decision::Deny);
        let played = play_calls(&calls, prepare, mode, answer).await;
        assert!(played.asked.is_empty(), "{mode:?}: nothing to approve: {:?}", played.asked);
        let [(write, false), (edit, false)] = played.results.as_slice() else {
            panic!("{mode:?}: {:?}", played.results);
        };
        assert!(write.starts_with("No change: a.txt already has exactly this content."), "{write}");
        assert!(edit.starts_with("No change: this edit is already in a.txt"), "{edit}");
        assert!(write.ends_with("Go on with the next one."), "{mode:?}: {write}");
        assert!(edit.ends_with("Go on with the next one."), "{mode:?}: {edit}");
        told.push(played.results);
    }
    assert_eq!(told[0], told[1], "the same words either way");
}

#[tokio::test]
async fn a_tool_time_leaves_out_the_wait_for_approval() {
    /// How long the person takes to answer: far longer than writing a small file.
    const THINKING_IT_OVER: Duration = Duration::from_millis(500);
    let dir = tempfile::tempdir().unwrap();
    let steps = vec![
        json!({"text": "", "tools": [{"name": "write_file", "input": {"path": "a.txt", "content": "a\n"}}]}),
        json!({"text": "finished", "tools": []}),
    ];
    let provider = ScriptedProvider::from_json(&script(steps), Duration::ZERO).unwrap();
    let tools = Tools::new(Workspace::new(dir.path()).unwrap());
    let config = AgentConfig { approval: ApprovalMode::Ask, ..AgentConfig::default() };
    let mut handle = agent::spawn(config, Some(Provider::Scripted(provider)), tools);
    handle.commands.send(Command::Submit("go".into())).unwrap();
    let drive = async {
        let mut answered_at = None;
        let mut last = None;
        loop {
            tokio::select! {
                Some(snapshot) = handle.snapshots.recv() => {
                    if let (Some(request), None) = (&snapshot.pending_approval, answered_at) {
                        tokio::time::sleep(THINKING_IT_OVER).await;
                        answered_at = Some(std::time::Instant::now());
                        let id = request.id.clone();
                        handle.commands.send(Command::Approve { id, decision: Decision::Once }).unwrap();
                    }
                    last = Some(snapshot);
                }
                Some(event) = handle.events.recv() => {
                    if matches!(event, AgentEvent::Result { .. }) {
                        let seen = std::time::Instant::now();
                        return (answered_at.expect("never asked"), seen, last);
                    }
                }
            }
        }
    };
    let (answered_at, ended_seen, seen_last) =
        tokio::time::timeout(HANG_GUARD, drive).await.expect("the turn never ended");
    handle.commands.send(Command::Quit).unwrap();
    tokio::time::timeout(HANG_GUARD, &mut handle.task).await.expect("no stop").unwrap();
    let last: Snapshot = std::iter::from_fn(|| handle.snapshots.try_recv().ok())
        .last()
        .or(seen_last)
        .expect("no snapshot");
    let run = last.tools.iter().find(|run| run.name == "write_file").expect("the call ran");
    let took = run.duration.expect("it finished");
    // The call ran between the answer and the end of the turn, so its time fits in between;
    // counted from before the question it would take in the whole wait as well.
    assert!(
        took <= ended_seen - answered_at,
        "write_file took {took:?}, more than the {:?} from the answer to the end",
        ended_seen - answered_at
    );
}
