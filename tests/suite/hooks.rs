//! Hooks in a live agent, against real hook scripts and the loopback model server, and what the
//! model then reads on the wire, over both protocols: a PreToolUse hook's exit 2, its matcher and
//! its JSON decisions here; the other answers in `hooks_answers`, the other events in
//! `hooks_events`. The scripts, the run and the config every `hooks_*` suite uses live here.

use crate::support::agent::{Wire, latest, start, until_result};
use crate::support::llm::{FakeLlm, Step, text, tool};
use keel::agent::{AgentConfig, AgentEvent, AgentHandle, Command, Entry};
use keel::agent::{Sessions, TurnOutcome};
use keel::hooks::config::check;
use keel::hooks::{Event, Hooks, Origin, Outcome};
use serde_json::{Value, json};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

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
    pub(super) fn inputs(&self, name: &str) -> Vec<Value> {
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
pub(super) fn save_stdin(file: &Path) -> String {
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

    pub(super) async fn requests(&self) -> usize {
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
pub(super) fn hook_events(events: &[AgentEvent]) -> Vec<(Event, Outcome, String)> {
    events
        .iter()
        .filter_map(|event| match event {
            AgentEvent::Hook { event, outcome, text, .. } => Some((*event, *outcome, text.clone())),
            _ => None,
        })
        .collect()
}

pub(super) fn result_outcome(events: &[AgentEvent]) -> (TurnOutcome, Option<String>) {
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
