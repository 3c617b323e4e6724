//! Hooks in a live agent, against real hook scripts and the loopback model server: each event's
//! answers — exit 2, JSON decisions, `updatedInput`, context, timeouts, crashes, exit 1 — and what
//! the model then reads on the wire, over both protocols.

use crate::support::agent::{Wire, latest, start, until_result, wait_for};
use crate::support::llm::{FakeLlm, Step, text, tool};
use crate::support::processes::{is_dead, read_pids};
use keel::agent::{AgentConfig, AgentEvent, AgentHandle, ApprovalMode, Command, Decision, Entry};
use keel::agent::{Sessions, TurnOutcome};
use keel::hooks::config::check;
use keel::hooks::{Event, Hooks, Origin, Outcome};
use serde_json::{Value, json};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The wires every protocol test runs over.
pub(super) const WIRES: [Wire; 2] = [Wire::Anthropic, Wire::OpenAi];

/// A folder of hook scripts, outside the workspace.
pub(super) struct Scripts {
    dir: tempfile::TempDir,
}

impl Scripts {
    pub(super) fn new() -> Self {
        Self { dir: tempfile::tempdir().unwrap() }
    }

    /// Writes an executable bash script `name` with `body`; returns its path.
    pub(super) fn script(&self, name: &str, body: &str) -> String {
        let path = self.dir.path().join(name);
        std::fs::write(&path, format!("#!/bin/bash\n{body}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path.to_string_lossy().into_owned()
    }

    pub(super) fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// The JSON the hook that saved its stdin to `name` read, each run on a line.
    fn inputs(&self, name: &str) -> Vec<Value> {
        std::fs::read_to_string(self.path(name))
            .unwrap_or_default()
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect()
    }
}

/// The hooks a config's `[hooks]` text gives, as the person's own, for `work`.
pub(super) fn hooks(work: &Path, config: &str, interactive: bool) -> Arc<Hooks> {
    let settings = keel::config::parse_file(Path::new("config.toml"), config).unwrap();
    let specs = check(&settings.hooks.unwrap(), Origin::Person).unwrap();
    Arc::new(Hooks::new(specs, work, None, interactive))
}

/// One hook for `event`, with `matcher` when given.
pub(super) fn one(
    event: &str,
    matcher: Option<&str>,
    command: &str,
    timeout: Option<f64>,
) -> String {
    let matcher = matcher.map(|m| format!("matcher = {m:?}\n")).unwrap_or_default();
    let timeout = timeout.map(|t| format!(", timeout = {t}")).unwrap_or_default();
    format!(
        "[[hooks.{event}]]\n{matcher}hooks = [{{ type = \"command\", command = {command:?}{timeout} }}]\n"
    )
}

/// A line saving the hook's stdin to `file` (one JSON document a line).
fn save_stdin(file: &Path) -> String {
    format!("(cat; echo) >> '{}'", file.display())
}

pub(super) struct Run {
    pub(super) handle: AgentHandle,
    pub(super) server: FakeLlm,
    pub(super) work: tempfile::TempDir,
}

impl Run {
    pub(super) async fn start_in(
        work: tempfile::TempDir,
        steps: Vec<Step>,
        wire: Wire,
        config: AgentConfig,
    ) -> Self {
        let server = FakeLlm::start(steps, Duration::ZERO).await;
        let handle = start(&server, wire, work.path(), config, Sessions::Off);
        Self { handle, server, work }
    }

    pub(super) async fn turn(&mut self, prompt: &str) -> Vec<AgentEvent> {
        self.handle.commands.send(Command::Submit(prompt.into())).unwrap();
        until_result(&mut self.handle).await
    }

    /// Every request body sent, as one string.
    pub(super) async fn wire(&self) -> String {
        serde_json::to_string(&self.server.bodies().await).unwrap()
    }

    async fn requests(&self) -> usize {
        self.server.bodies().await.len()
    }

    pub(super) fn file(&self, name: &str) -> Option<String> {
        std::fs::read_to_string(self.work.path().join(name)).ok()
    }
}

pub(super) fn config(hooks: Arc<Hooks>) -> AgentConfig {
    AgentConfig {
        hooks,
        nag_threshold: keel::agent::NagThreshold::Fixed(0),
        ..AgentConfig::default()
    }
}

/// The `hook` events of a turn, as (event, outcome, text).
fn hook_events(events: &[AgentEvent]) -> Vec<(Event, Outcome, String)> {
    events
        .iter()
        .filter_map(|event| match event {
            AgentEvent::Hook { event, outcome, text, .. } => Some((*event, *outcome, text.clone())),
            _ => None,
        })
        .collect()
}

fn result_outcome(events: &[AgentEvent]) -> (TurnOutcome, Option<String>) {
    events
        .iter()
        .find_map(|event| match event {
            AgentEvent::Result { outcome, error, .. } => Some((*outcome, error.clone())),
            _ => None,
        })
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_pre_tool_use_hook_that_exits_2_blocks_the_call_and_reads_claude_codes_input() {
    for wire in WIRES {
        let scripts = Scripts::new();
        let seen = scripts.path("seen.jsonl");
        let block = scripts
            .script("block.sh", &format!("{}\necho 'not on main' >&2\nexit 2", save_stdin(&seen)));
        let work = tempfile::tempdir().unwrap();
        let steps = vec![
            tool("bash", json!({"command": "echo hi > made.txt", "timeout_ms": 5000})),
            text("done"),
        ];
        let hooks = hooks(work.path(), &one("PreToolUse", Some("Bash"), &block, None), false);
        let mut run = Run::start_in(work, steps, wire, config(hooks)).await;
        let events = run.turn("go").await;

        assert_eq!(run.file("made.txt"), None, "{wire:?}: the blocked command never ran");
        assert!(
            run.wire().await.contains("Blocked by a PreToolUse hook: not on main"),
            "{wire:?}: the model reads the hook's reason"
        );
        let hooks = hook_events(&events);
        assert_eq!(hooks, [(Event::PreToolUse, Outcome::Blocked, "not on main".to_owned())]);
        let tool_use_id = events.iter().find_map(|event| match event {
            AgentEvent::Hook { tool_use_id, .. } => tool_use_id.clone(),
            _ => None,
        });
        let line = latest(&mut run.handle).transcript.into_iter().find_map(|entry| match entry {
            Entry::Notice { text } if text.contains("blocked") => Some(text),
            _ => None,
        });
        assert_eq!(line, Some(format!("PreToolUse hook `{block}` blocked: not on main")));

        let input = &scripts.inputs("seen.jsonl")[0];
        assert_eq!(input["hook_event_name"], "PreToolUse");
        assert_eq!(input["tool_name"], "Bash", "Claude Code's name for the tool");
        assert_eq!(input["keel_tool_name"], "bash");
        assert_eq!(input["tool_input"]["command"], "echo hi > made.txt");
        assert_eq!(input["tool_input"]["timeout"], 5000, "Claude Code's field name too");
        assert_eq!(input["tool_use_id"].as_str(), tool_use_id.as_deref());
        let cwd = run.work.path().canonicalize().unwrap();
        assert_eq!(input["cwd"], cwd.to_string_lossy().as_ref());
        assert!(!input["session_id"].as_str().unwrap().is_empty());
        assert_eq!(input["permission_mode"], "bypassPermissions");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_matcher_picks_tools_by_keels_name_or_claude_codes_and_file_paths_are_absolute() {
    let scripts = Scripts::new();
    let seen = scripts.path("seen.jsonl");
    let save = save_stdin(&seen);
    let config_text = one("PreToolUse", Some("write_file|Edit"), &save, None);
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("a.txt"), "old\n").unwrap();
    let steps = vec![
        tool("bash", json!({"command": "true"})),
        tool("write_file", json!({"path": "b.txt", "content": "new\n"})),
        tool("edit_file", json!({"path": "a.txt", "old_text": "old", "new_text": "new"})),
        text("done"),
    ];
    let hooks = hooks(work.path(), &config_text, false);
    let mut run = Run::start_in(work, steps, Wire::Anthropic, config(hooks)).await;
    run.turn("go").await;
    let inputs = scripts.inputs("seen.jsonl");
    let names: Vec<&str> =
        inputs.iter().map(|input| input["tool_name"].as_str().unwrap()).collect();
    assert_eq!(names, ["Write", "Edit"], "bash is not matched");
    let root = run.work.path().canonicalize().unwrap();
    assert_eq!(inputs[0]["tool_input"]["file_path"], root.join("b.txt").to_string_lossy().as_ref());
    assert_eq!(inputs[1]["tool_input"]["old_string"], "old");
    assert_eq!(inputs[1]["tool_input"]["path"], "a.txt", "keel's own names stay beside them");
}

#[tokio::test(flavor = "multi_thread")]
async fn json_decisions_deny_with_a_reason_and_add_context_for_the_model() {
    let scripts = Scripts::new();
    let deny = scripts.script(
        "deny.sh",
        r#"cat > /dev/null
echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no writes here"}}'"#,
    );
    let context = scripts.script(
        "context.sh",
        r#"cat > /dev/null
echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","additionalContext":"the build is green"}}'"#,
    );
    let config_text = format!(
        "{}{}",
        one("PreToolUse", Some("Write"), &deny, None),
        one("PreToolUse", Some("Bash"), &context, None)
    );
    let work = tempfile::tempdir().unwrap();
    let steps = vec![
        tool("write_file", json!({"path": "b.txt", "content": "new\n"})),
        tool("bash", json!({"command": "echo ran > ran.txt"})),
        text("done"),
    ];
    let hooks = hooks(work.path(), &config_text, false);
    let mut run = Run::start_in(work, steps, Wire::OpenAi, config(hooks)).await;
    run.turn("go").await;
    assert_eq!(run.file("b.txt"), None);
    assert_eq!(run.file("ran.txt").as_deref(), Some("ran\n"));
    let wire = run.wire().await;
    assert!(wire.contains("Blocked by a PreToolUse hook: no writes here"), "{wire}");
    assert!(
        wire.contains(r#"<hook-context event=\"PreToolUse\">the build is green</hook-context>"#),
        "the context goes with the result: {wire}"
    );
}

/// Runs a turn, answering every approval request `Once`; returns the details the approval box
/// showed, and the turn's events.
async fn answering(run: &mut Run) -> (Vec<String>, Vec<AgentEvent>) {
    run.handle.commands.send(Command::Submit("go".into())).unwrap();
    let mut shown = Vec::new();
    let mut events = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        assert!(Instant::now() < deadline, "the turn never ended");
        tokio::select! {
            Some(snapshot) = run.handle.snapshots.recv() => {
                if let Some(request) = &snapshot.pending_approval
                    && !shown.contains(&request.detail)
                {
                    shown.push(request.detail.clone());
                    let id = request.id.clone();
                    run.handle.commands.send(Command::Approve { id, decision: Decision::Once }).unwrap();
                }
            }
            Some(event) = run.handle.events.recv() => {
                let done = matches!(event, AgentEvent::Result { .. });
                events.push(event);
                if done {
                    return (shown, events);
                }
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_updated_input_is_what_the_approval_box_shows_what_runs_and_what_the_model_reads() {
    let scripts = Scripts::new();
    let rewrite = scripts.script(
        "rewrite.sh",
        r#"cat > /dev/null
echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","updatedInput":{"command":"echo changed > out.txt"}}}'"#,
    );
    let work = tempfile::tempdir().unwrap();
    let steps = vec![tool("bash", json!({"command": "echo original > out.txt"})), text("done")];
    let hooks = hooks(work.path(), &one("PreToolUse", Some("Bash"), &rewrite, None), true);
    let config = AgentConfig { approval: ApprovalMode::Ask, ..config(hooks) };
    let mut run = Run::start_in(work, steps, Wire::Anthropic, config).await;
    let (shown, events) = answering(&mut run).await;

    assert_eq!(shown, ["echo changed > out.txt"], "the person approves what runs");
    assert_eq!(run.file("out.txt").as_deref(), Some("changed\n"));
    assert!(events.iter().any(|event| matches!(event,
        AgentEvent::Notice { text } if text.contains("changed the call; it runs as: bash echo changed > out.txt"))));
    let wire = run.wire().await;
    assert!(
        wire.contains("A hook changed this call's input before it ran; it ran with:"),
        "{wire}"
    );
    assert!(wire.contains(r#"echo changed > out.txt"#));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_claude_code_style_updated_input_comes_back_in_keels_names() {
    let scripts = Scripts::new();
    let work = tempfile::tempdir().unwrap();
    let root = work.path().canonicalize().unwrap();
    // A Claude Code hook: it reads the input and answers with its own field names (jq).
    let redirect = scripts.script(
        "redirect.sh",
        &format!(
            r#"jq -c '{{hookSpecificOutput: {{hookEventName: "PreToolUse", permissionDecision: "allow", updatedInput: (.tool_input | .file_path = "{}/elsewhere.txt")}}}}'"#,
            root.display()
        ),
    );
    let steps = vec![tool("write_file", json!({"path": "b.txt", "content": "x\n"})), text("done")];
    let hooks = hooks(work.path(), &one("PreToolUse", Some("Write"), &redirect, None), true);
    // Ask mode: the hook's allow spares the person the question.
    let config = AgentConfig { approval: ApprovalMode::Ask, ..config(hooks) };
    let mut run = Run::start_in(work, steps, Wire::OpenAi, config).await;
    let (shown, _) = answering(&mut run).await;
    assert!(shown.is_empty(), "allowed by the hook, not asked: {shown:?}");
    assert_eq!(run.file("b.txt"), None);
    assert_eq!(run.file("elsewhere.txt").as_deref(), Some("x\n"));
}

#[tokio::test(flavor = "multi_thread")]
async fn an_ask_makes_keel_ask_even_in_auto_and_with_no_one_to_ask_refuses() {
    let scripts = Scripts::new();
    let ask = scripts.script(
        "ask.sh",
        r#"cat > /dev/null
echo '{"hookSpecificOutput":{"permissionDecision":"ask","permissionDecisionReason":"a deploy"}}'"#,
    );
    for interactive in [true, false] {
        let work = tempfile::tempdir().unwrap();
        let steps = vec![tool("bash", json!({"command": "echo ran > ran.txt"})), text("done")];
        let hooks = hooks(work.path(), &one("PreToolUse", None, &ask, None), interactive);
        let mut run = Run::start_in(work, steps, Wire::Anthropic, config(hooks)).await;
        let (shown, _) = answering(&mut run).await;
        if interactive {
            assert_eq!(shown, ["echo ran > ran.txt"]);
            assert_eq!(run.file("ran.txt").as_deref(), Some("ran\n"));
        } else {
            assert!(shown.is_empty());
            assert_eq!(run.file("ran.txt"), None);
            let wire = run.wire().await;
            assert!(
                wire.contains("asked for the person's approval (a deploy), and no one is here"),
                "{wire}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_hook_that_never_exits_is_killed_at_its_timeout_with_what_it_started_and_blocks() {
    let scripts = Scripts::new();
    let pids = scripts.path("pids");
    let slow = scripts.script(
        "slow.sh",
        &format!("echo $$ >> '{0}'\nsleep 300 &\necho $! >> '{0}'\nwait", pids.display()),
    );
    let work = tempfile::tempdir().unwrap();
    let steps = vec![tool("bash", json!({"command": "echo ran > ran.txt"})), text("done")];
    let hooks = hooks(work.path(), &one("PreToolUse", None, &slow, Some(1.0)), false);
    let mut run = Run::start_in(work, steps, Wire::Anthropic, config(hooks)).await;
    let began = Instant::now();
    let events = run.turn("go").await;
    assert!(began.elapsed() < Duration::from_secs(15), "took {:?}", began.elapsed());
    assert_eq!(run.file("ran.txt"), None);
    let why = format!("the hook `{slow}` timed out after 1 s");
    assert_eq!(hook_events(&events), [(Event::PreToolUse, Outcome::Blocked, why.clone())]);
    assert!(run.wire().await.contains(&format!("Blocked by a PreToolUse hook: {why}")));
    let pids = read_pids(&pids);
    assert_eq!(pids.len(), 2, "the hook and its child wrote their pids");
    for pid in pids {
        assert!(is_dead(pid), "{pid} outlived its hook's timeout");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_crashed_or_missing_hook_blocks_and_one_that_exits_1_lets_the_call_go_on() {
    let scripts = Scripts::new();
    let crash = scripts.script("crash.sh", "kill -9 $$");
    let missing = scripts.path("missing.sh").to_string_lossy().into_owned();
    let fails = scripts.script("fails.sh", "echo 'lint server down' >&2\nexit 1");
    for (command, ran, outcome, said) in [
        (&crash, false, Outcome::Blocked, format!("the hook `{crash}` was killed by signal 9")),
        (
            &missing,
            false,
            Outcome::Blocked,
            format!("the hook `{missing}` could not start (exit 127"),
        ),
        (&fails, true, Outcome::Failed, "exit 1: lint server down".to_owned()),
    ] {
        let work = tempfile::tempdir().unwrap();
        let steps = vec![tool("bash", json!({"command": "echo ran > ran.txt"})), text("done")];
        let hooks = hooks(work.path(), &one("PreToolUse", None, command, None), false);
        let mut run = Run::start_in(work, steps, Wire::OpenAi, config(hooks)).await;
        let events = run.turn("go").await;
        assert_eq!(run.file("ran.txt").is_some(), ran, "{command}");
        let told = hook_events(&events);
        assert_eq!(told.len(), 1, "{told:?}");
        assert_eq!(told[0].1, outcome, "{command}");
        assert!(told[0].2.starts_with(&said), "{command}: {}", told[0].2);
        if outcome == Outcome::Failed {
            let line = latest(&mut run.handle).transcript.into_iter().any(|entry| {
                matches!(entry, Entry::Error { text } if text == format!("PreToolUse hook `{fails}` failed: exit 1: lint server down"))
            });
            assert!(line, "the person sees a hook that failed");
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn post_tool_use_feedback_and_context_go_with_the_result_of_a_call_that_ran() {
    let scripts = Scripts::new();
    let lint =
        scripts.script("lint.sh", "cat > /dev/null\necho 'line 3: unused import' >&2\nexit 2");
    let note = scripts.script(
        "note.sh",
        r#"jq -c '{hookSpecificOutput: {hookEventName: "PostToolUse", additionalContext: ("saw: " + .tool_response.output)}}'"#,
    );
    let config_text = format!(
        "{}{}",
        one("PostToolUse", Some("Write"), &lint, None),
        one("PostToolUse", Some("Bash"), &note, None)
    );
    for wire in WIRES {
        let work = tempfile::tempdir().unwrap();
        let steps = vec![
            tool("write_file", json!({"path": "a.py", "content": "import os\n"})),
            tool("bash", json!({"command": "echo hello"})),
            text("done"),
        ];
        let hooks = hooks(work.path(), &config_text, false);
        let mut run = Run::start_in(work, steps, wire, config(hooks)).await;
        run.turn("go").await;
        assert_eq!(run.file("a.py").as_deref(), Some("import os\n"), "the call ran");
        let wire_text = run.wire().await;
        assert!(
            wire_text.contains(
                r#"<hook-feedback event=\"PostToolUse\">line 3: unused import</hook-feedback>"#
            ),
            "{wire:?}: {wire_text}"
        );
        assert!(
            wire_text.contains(r#"<hook-context event=\"PostToolUse\">saw: Exit code 0"#),
            "{wire:?}: {wire_text}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn user_prompt_submit_adds_context_or_keeps_the_prompt_from_the_model() {
    let scripts = Scripts::new();
    let branch = scripts.script("branch.sh", "cat > /dev/null\necho 'on branch feature-x'");
    let work = tempfile::tempdir().unwrap();
    let hooks_ = hooks(work.path(), &one("UserPromptSubmit", None, &branch, None), false);
    let mut run = Run::start_in(work, vec![text("ok")], Wire::Anthropic, config(hooks_)).await;
    run.turn("what branch?").await;
    let first = &run.server.bodies().await[0];
    let sent = first["messages"][0].to_string();
    assert!(sent.contains("what branch?"), "{sent}");
    assert!(
        sent.contains(
            r#"<hook-context event=\"UserPromptSubmit\">on branch feature-x</hook-context>"#
        ),
        "{sent}"
    );

    let secret = scripts.script(
        "secret.sh",
        "grep -q 'password' && { echo 'the prompt holds a password' >&2; exit 2; }\nexit 0",
    );
    let work = tempfile::tempdir().unwrap();
    let hooks_ = hooks(work.path(), &one("UserPromptSubmit", None, &secret, None), false);
    let mut run = Run::start_in(work, vec![text("ok")], Wire::OpenAi, config(hooks_)).await;
    let events = run.turn("my password is hunter2").await;
    assert_eq!(run.requests().await, 0, "the model never saw it");
    let (outcome, error) = result_outcome(&events);
    assert_eq!(outcome, TurnOutcome::Error);
    assert!(error.unwrap().contains("a UserPromptSubmit hook blocked it"));
    assert!(latest(&mut run.handle).history.is_empty(), "the prompt is not in the history");
    assert_eq!(
        hook_events(&events),
        [(Event::UserPromptSubmit, Outcome::Blocked, "the prompt holds a password".to_owned())]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn session_start_context_goes_with_the_first_prompt() {
    let scripts = Scripts::new();
    let seen = scripts.path("seen.jsonl");
    let start_hook = scripts
        .script("start.sh", &format!("{}\necho 'remember: run make check'", save_stdin(&seen)));
    let work = tempfile::tempdir().unwrap();
    let hooks_ =
        hooks(work.path(), &one("SessionStart", Some("startup"), &start_hook, None), false);
    let mut run = Run::start_in(work, vec![text("ok")], Wire::OpenAi, config(hooks_)).await;
    run.turn("hello").await;
    let sent = run.server.bodies().await[0]["messages"].to_string();
    assert!(sent.contains("remember: run make check"), "{sent}");
    let inputs = scripts.inputs("seen.jsonl");
    assert_eq!(inputs.len(), 1);
    assert_eq!(inputs[0]["source"], "startup");
    assert_eq!(inputs[0]["hook_event_name"], "SessionStart");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stop_hook_keeps_the_turn_going_with_its_reason_on_both_wires() {
    for wire in WIRES {
        let scripts = Scripts::new();
        let seen = scripts.path("seen.jsonl");
        // Blocks the first stop, lets the second go.
        let verify = scripts.script(
            "verify.sh",
            &format!(
                "{}\nif [ ! -e '{1}' ]; then touch '{1}'; echo '{{\"decision\":\"block\",\"reason\":\"run the tests first\"}}'; fi",
                save_stdin(&seen),
                scripts.path("blocked-once").display()
            ),
        );
        let steps =
            vec![text("all done"), tool("bash", json!({"command": "true"})), text("tests pass")];
        let work = tempfile::tempdir().unwrap();
        let hooks_ = hooks(work.path(), &one("Stop", None, &verify, None), false);
        let mut run = Run::start_in(work, steps, wire, config(hooks_)).await;
        let events = run.turn("go").await;
        assert_eq!(run.requests().await, 3, "{wire:?}");
        let last = run.server.bodies().await[1]["messages"].to_string();
        assert!(
            last.contains(r#"<hook-feedback event=\"Stop\">run the tests first</hook-feedback>"#),
            "{wire:?}: {last}"
        );
        let active: Vec<bool> = scripts
            .inputs("seen.jsonl")
            .iter()
            .map(|i| i["stop_hook_active"].as_bool().unwrap())
            .collect();
        assert_eq!(active, [false, true]);
        assert_eq!(scripts.inputs("seen.jsonl")[0]["last_assistant_message"], "all done");
        assert_eq!(result_outcome(&events).0, TurnOutcome::Success);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn stop_hooks_keep_a_turn_going_at_most_eight_times_in_a_row() {
    let scripts = Scripts::new();
    let never = scripts.script("never.sh", "cat > /dev/null\necho 'not yet' >&2\nexit 2");
    let steps: Vec<Step> = (0..12).map(|n| text(&format!("answer {n}"))).collect();
    let work = tempfile::tempdir().unwrap();
    let hooks_ = hooks(work.path(), &one("Stop", None, &never, None), false);
    let mut run = Run::start_in(work, steps, Wire::Anthropic, config(hooks_)).await;
    let events = run.turn("go").await;
    assert_eq!(run.requests().await, 9, "the first answer and eight more");
    assert!(events.iter().any(|event| matches!(event,
        AgentEvent::Notice { text } if text.contains("kept this turn going 8 times in a row"))));
    assert_eq!(result_outcome(&events).0, TurnOutcome::Success);
}

fn item(id: &str, text: &str, status: &str) -> Value {
    json!({"id": id, "text": text, "status": status})
}

#[tokio::test(flavor = "multi_thread")]
async fn a_task_completed_hook_refuses_a_completion_and_the_board_stays_as_it_was() {
    let scripts = Scripts::new();
    let seen = scripts.path("seen.jsonl");
    let check_tests = scripts.script(
        "tests.sh",
        &format!(
            "input=$(cat)\necho \"$input\" >> '{}'\necho \"$input\" | grep -q '\"task_id\":\"2\"' && {{ echo 'tests fail: 3 failures' >&2; exit 2; }}\nexit 0",
            seen.display()
        ),
    );
    let steps = vec![
        tool(
            "todo",
            json!({"items": [item("1", "Write it", "in_progress"), item("2", "Test it", "pending")]}),
        ),
        tool(
            "todo",
            json!({"items": [item("1", "Write it", "completed"), item("2", "Test it", "in_progress")]}),
        ),
        tool(
            "todo",
            json!({"items": [item("1", "Write it", "completed"), item("2", "Test it", "completed")]}),
        ),
        text("done"),
    ];
    for wire in WIRES {
        let work = tempfile::tempdir().unwrap();
        let hooks_ = hooks(work.path(), &one("TaskCompleted", None, &check_tests, None), false);
        let mut run = Run::start_in(work, steps.clone(), wire, config(hooks_)).await;
        run.turn("go").await;
        let wire_text = run.wire().await;
        assert!(
            wire_text.contains("Item 2: cannot be completed: tests fail: 3 failures"),
            "{wire:?}"
        );
        let board = latest(&mut run.handle).board;
        let statuses: Vec<&str> = board.items().iter().map(|item| item.status.as_str()).collect();
        assert_eq!(
            statuses,
            ["completed", "in_progress"],
            "{wire:?}: the refused update changed nothing"
        );
    }
    let inputs = scripts.inputs("seen.jsonl");
    assert_eq!(inputs[0]["task_id"], "1");
    assert_eq!(inputs[0]["task_subject"], "Write it");
    assert_eq!(inputs[0]["item"]["text"], "Write it");
    assert_eq!(inputs[0]["board"][1]["status"], "in_progress");
    assert!(inputs[0]["board_text"].as_str().unwrap().contains("[x] #1: Write it"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_task_completed_hook_that_times_out_refuses_the_completion() {
    let scripts = Scripts::new();
    let slow = scripts.script("slow.sh", "sleep 30");
    let work = tempfile::tempdir().unwrap();
    let steps =
        vec![tool("todo", json!({"items": [item("1", "Ship it", "completed")]})), text("done")];
    let hooks_ = hooks(work.path(), &one("TaskCompleted", None, &slow, Some(0.5)), false);
    let mut run = Run::start_in(work, steps, Wire::OpenAi, config(hooks_)).await;
    run.turn("go").await;
    assert!(run.wire().await.contains(&format!(
        "Item 1: cannot be completed: the hook `{slow}` timed out after 500 ms"
    )));
    assert!(latest(&mut run.handle).board.is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn pre_compact_hooks_run_before_a_compaction_and_are_told_what_started_it() {
    let scripts = Scripts::new();
    let seen = scripts.path("seen.jsonl");
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("notes.txt"), "notes\n".repeat(200)).unwrap();
    let mut steps: Vec<Step> =
        (0..6).map(|_| tool("read_file", json!({"path": "notes.txt"}))).collect();
    steps.push(text("done"));
    let hooks_ =
        hooks(work.path(), &one("PreCompact", Some("manual"), &save_stdin(&seen), None), false);
    let mut run = Run::start_in(work, steps, Wire::Anthropic, config(hooks_)).await;
    run.turn("read it").await;
    run.handle.commands.send(Command::Compact).unwrap();
    wait_for(&mut run.handle, |snapshot| {
        snapshot
            .transcript
            .iter()
            .any(|entry| matches!(entry, Entry::Notice { text } if text.contains("ompact")))
    })
    .await;
    let inputs = scripts.inputs("seen.jsonl");
    assert_eq!(inputs.len(), 1);
    assert_eq!(inputs[0]["trigger"], "manual");
    assert_eq!(inputs[0]["hook_event_name"], "PreCompact");
}

#[tokio::test(flavor = "multi_thread")]
async fn hooks_of_one_event_run_in_parallel() {
    let scripts = Scripts::new();
    let times = scripts.path("times");
    let body = format!(
        "cat > /dev/null\necho \"start $(date +%s%N)\" >> '{0}'\nsleep 1\necho \"end $(date +%s%N)\" >> '{0}'",
        times.display()
    );
    let (a, b) = (scripts.script("a.sh", &body), scripts.script("b.sh", &body));
    let config_text =
        format!("{}{}", one("PreToolUse", None, &a, None), one("PreToolUse", None, &b, None));
    let work = tempfile::tempdir().unwrap();
    let steps = vec![tool("bash", json!({"command": "true"})), text("done")];
    let hooks_ = hooks(work.path(), &config_text, false);
    let mut run = Run::start_in(work, steps, Wire::Anthropic, config(hooks_)).await;
    run.turn("go").await;
    let text = std::fs::read_to_string(&times).unwrap();
    let at = |kind: &str| -> Vec<u128> {
        text.lines().filter_map(|line| line.strip_prefix(kind)?.trim().parse().ok()).collect()
    };
    let (starts, ends) = (at("start"), at("end"));
    assert_eq!((starts.len(), ends.len()), (2, 2), "{text}");
    assert!(starts.iter().max() < ends.iter().min(), "each started before the other ended: {text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_subagent_stop_hook_keeps_a_child_going_and_the_parents_stop_hooks_are_its_own() {
    use crate::support::llm::family::{FamilyLlm, child};
    for wire in WIRES {
        let scripts = Scripts::new();
        let seen = scripts.path("subagent.jsonl");
        let parent_seen = scripts.path("stop.jsonl");
        let verify = scripts.script(
            "verify.sh",
            &format!(
                "{}\nif [ ! -e '{1}' ]; then touch '{1}'; echo 'look in src too' >&2; exit 2; fi",
                save_stdin(&seen),
                scripts.path("blocked-once").display()
            ),
        );
        let watch = scripts.script("watch.sh", &save_stdin(&parent_seen));
        let config_text = format!(
            "{}{}",
            one("SubagentStop", None, &verify, None),
            one("Stop", None, &watch, None)
        );
        let parent =
            vec![tool("task", json!({"prompt": "FINDER: find the needle"})), text("Found.")];
        let finder = child("FINDER", vec![text("not found"), text("found it in src")]);
        let server = FamilyLlm::start(parent, vec![finder]).await;
        let work = tempfile::tempdir().unwrap();
        let hooks_ = hooks(work.path(), &config_text, false);
        let config = AgentConfig { approval: ApprovalMode::Auto, ..config(hooks_) };
        let mut handle = start(&server, wire, work.path(), config, Sessions::Off);
        handle.commands.send(Command::Submit("Find it.".into())).unwrap();
        let events = until_result(&mut handle).await;
        assert_eq!(result_outcome(&events).0, TurnOutcome::Success, "{wire:?}");
        // The child's turn would have ended; its SubagentStop hook kept it going with its reason.
        let requests = server.child("FINDER");
        assert_eq!(requests.len(), 2, "{wire:?}");
        let second = requests[1]["messages"].to_string();
        assert!(
            second.contains(
                r#"<hook-feedback event=\"SubagentStop\">look in src too</hook-feedback>"#
            ),
            "{wire:?}: {second}"
        );
        let child_stops: Vec<Value> = scripts.inputs("subagent.jsonl");
        assert_eq!(child_stops.len(), 2, "{wire:?}");
        assert_eq!(child_stops[0]["hook_event_name"], "SubagentStop");
        assert_eq!(child_stops[1]["last_assistant_message"], "found it in src");
        // The parent's own turn end is a Stop, heard once: the child's ends were not.
        let stops = scripts.inputs("stop.jsonl");
        assert_eq!(stops.len(), 1, "{wire:?}: {stops:?}");
        assert_eq!(stops[0]["last_assistant_message"], "Found.");
        // The parent read the child's last word.
        let parent_last = server.parent().last().unwrap().to_string();
        assert!(parent_last.contains("found it in src"), "{wire:?}: {parent_last}");
    }
}
