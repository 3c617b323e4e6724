//! Hooks and trust, through the built binary: a workspace's `.keel/config.toml` hooks never run
//! until the person trusts them (`keel -p` never trusts on its own), trust is lost when the
//! hook's command or the file it runs changes — also when the model changes that file mid-run —
//! and the person's own hooks run as their own programs, without the provider keys.

use crate::support::bin::{json_lines, keel, output_within};
use crate::support::files::outside_tmp;
use crate::support::llm::{FakeLlm, text, tool};
use crate::support::processes::{is_dead, read_pids};
use crate::support::tmux::KeelPane;
use serde_json::{Value, json};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

/// Hang guard for what the screen shows.
const WAIT: Duration = Duration::from_secs(20);

/// A person (their home: config and keel's state) and a workspace.
struct Place {
    home: tempfile::TempDir,
    work: tempfile::TempDir,
}

impl Place {
    fn new() -> Self {
        Self { home: outside_tmp(), work: outside_tmp() }
    }

    /// Where the marking hook marks: a workspace's hook runs in the sandbox, which lets it write
    /// only there.
    fn marks(&self) -> PathBuf {
        self.work.path().join("marks.txt")
    }

    /// How many times the marking hook ran.
    fn marked(&self) -> usize {
        std::fs::read_to_string(self.marks()).unwrap_or_default().lines().count()
    }

    /// Writes an executable script at `path` in the workspace.
    fn script(&self, path: &str, body: &str) {
        let file = self.work.path().join(path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, format!("#!/bin/bash\n{body}\n")).unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    /// The workspace's `.keel/config.toml` with one PreToolUse hook running `command`.
    fn workspace_hook(&self, command: &str) {
        let dir = self.work.path().join(".keel");
        std::fs::create_dir_all(&dir).unwrap();
        let config = format!(
            "[[hooks.PreToolUse]]\nmatcher = \"Bash\"\nhooks = [{{ type = \"command\", command = {command:?} }}]\n"
        );
        std::fs::write(dir.join("config.toml"), config).unwrap();
    }

    /// The person's own config.
    fn own_config(&self, text: &str) {
        let dir = self.home.path().join(".config/keel");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("config.toml"), text).unwrap();
    }

    /// `keel -p go --output-format json` against `server`.
    fn print(&self, server: &FakeLlm, env: &[(&str, &str)]) -> Output {
        let mut command = keel(self.home.path());
        command
            .args(["-p", "go", "--output-format", "json", "--workdir"])
            .arg(self.work.path())
            .env("ANTHROPIC_API_KEY", "k")
            .env("ANTHROPIC_BASE_URL", server.anthropic_base())
            .envs(env.iter().copied());
        output_within(&mut command, "keel -p")
    }

    /// `keel hooks SUBCOMMAND` in the workspace.
    fn hooks(&self, subcommand: &str) -> Output {
        let mut command = keel(self.home.path());
        command.args(["hooks", subcommand, "--workdir"]).arg(self.work.path());
        output_within(&mut command, "keel hooks")
    }
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// A model that runs one command, then answers.
async fn one_command(command: &str) -> FakeLlm {
    FakeLlm::start(vec![tool("bash", json!({ "command": command })), text("done")], Duration::ZERO)
        .await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_workspace_hook_runs_only_once_trusted_and_stops_when_its_file_or_command_changes() {
    let place = Place::new();
    let mark = format!("echo ran >> '{}'", place.marks().display());
    place.script("hooks/mark.sh", &mark);
    place.workspace_hook("./hooks/mark.sh");
    let server = one_command("true").await;

    // Never trusted: -p does not run it, and says how to trust it.
    let output = place.print(&server, &[]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(place.marked(), 0, "an untrusted workspace hook ran");
    let said = stderr(&output);
    assert!(
        said.contains(
            "hooks you have not trusted, so they do not run: PreToolUse `./hooks/mark.sh`"
        ),
        "{said}"
    );
    assert!(said.contains("keel hooks trust"), "{said}");
    let listed = place.hooks("list");
    assert!(
        stdout(&listed).contains(
            "./hooks/mark.sh (timeout 60 s) — the workspace's .keel/config.toml, NOT TRUSTED"
        ),
        "{}",
        stdout(&listed)
    );

    // Trusted: it runs, and -p's JSON tells of it.
    let trusted = place.hooks("trust");
    assert!(trusted.status.success(), "{}", stderr(&trusted));
    assert!(stdout(&trusted).contains("Trusted, as they are now: PreToolUse `./hooks/mark.sh`"));
    let output = place.print(&server, &[]);
    assert_eq!(place.marked(), 1);
    let hook_events: Vec<Value> =
        json_lines(&output).into_iter().filter(|event| event["type"] == "hook").collect();
    assert_eq!(hook_events.len(), 1, "{}", stdout(&output));
    assert_eq!(hook_events[0]["event"], "PreToolUse");
    assert_eq!(hook_events[0]["command"], "./hooks/mark.sh");
    assert_eq!(hook_events[0]["outcome"], "ok");
    assert!(hook_events[0]["tool_use_id"].is_string());

    // The file it runs changes: trust is lost, and keel says so.
    place.script("hooks/mark.sh", &format!("{mark}\n# changed"));
    let output = place.print(&server, &[]);
    assert_eq!(place.marked(), 1, "a changed hook ran on an old trust");
    assert!(
        stderr(&output).contains("PreToolUse `./hooks/mark.sh` (changed since you trusted it)"),
        "{}",
        stderr(&output)
    );
    place.hooks("trust");
    place.print(&server, &[]);
    assert_eq!(place.marked(), 2);

    // The command changes: a hook never trusted.
    place.workspace_hook("./hooks/mark.sh again");
    let output = place.print(&server, &[]);
    assert_eq!(place.marked(), 2, "a changed command ran on an old trust");
    assert!(stderr(&output).contains("have not trusted"));

    // Forgotten: it stops.
    place.hooks("trust");
    let forgot = place.hooks("forget");
    assert!(stdout(&forgot).contains("Forgot the trust in"), "{}", stdout(&forgot));
    place.print(&server, &[]);
    assert_eq!(place.marked(), 2);
    let store = place.home.path().join(".local/state/keel/hooks/trusted.json");
    assert!(store.exists(), "trust is kept in keel's state folder");
    assert!(!place.work.path().join(".keel/trusted.json").exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_trusted_hooks_script_the_model_rewrites_stops_and_the_next_call_is_blocked() {
    // Commands cannot write it (it is read-only in their sandbox); keel's own file tools can.
    let place = Place::new();
    let mark = format!("echo ran >> '{}'", place.marks().display());
    place.script("hooks/guard.sh", &mark);
    place.workspace_hook("./hooks/guard.sh");
    assert!(place.hooks("trust").status.success());
    let steps = vec![
        tool("bash", json!({"command": "true"})),
        tool("write_file", json!({"path": "hooks/guard.sh", "content": "#!/bin/bash\nexit 0\n"})),
        tool("bash", json!({"command": "echo second > second.txt"})),
        text("done"),
    ];
    let server = FakeLlm::start(steps, Duration::ZERO).await;
    let output = place.print(&server, &[]);
    assert_eq!(place.marked(), 1, "it ran once, trusted");
    assert!(!place.work.path().join("second.txt").exists(), "the next call ran unguarded");
    let events = json_lines(&output);
    let told = events.iter().any(|event| {
        event["type"] == "error"
            && event["text"].as_str().is_some_and(|text| {
                text.contains(
                "PreToolUse `./hooks/guard.sh` changed since you trusted it, so it no longer runs",
            )
            })
    });
    assert!(told, "the person is told: {}", stdout(&output));
    let ends: Vec<Value> =
        json_lines(&output).into_iter().filter(|event| event["type"] == "tool_end").collect();
    let blocked = ends[2]["output"].as_str().unwrap();
    assert!(
        blocked.starts_with(
            "Blocked by a PreToolUse hook: the hook `./hooks/guard.sh` changed since you trusted it"
        ),
        "{blocked}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_persons_own_hook_runs_as_their_program_without_the_provider_keys() {
    let place = Place::new();
    let seen = place.home.path().join("env.txt");
    let input = place.home.path().join("input.json");
    place.own_config(&format!(
        "[[hooks.PreToolUse]]\nhooks = [{{ type = \"command\", command = \"cat > '{}'; env > '{}'\" }}]\n",
        input.display(),
        seen.display()
    ));
    let server = one_command("true").await;
    let output = place.print(&server, &[("MY_TOKEN", "mine")]);
    assert!(output.status.success(), "{}", stderr(&output));
    let env = std::fs::read_to_string(&seen).unwrap();
    assert!(env.contains("MY_TOKEN=mine"), "the person's own tokens are there");
    assert!(!env.contains("ANTHROPIC_API_KEY"), "the provider key is not: {env}");
    let root = place.work.path().canonicalize().unwrap();
    assert!(env.contains(&format!("CLAUDE_PROJECT_DIR={}", root.display())), "{env}");
    assert!(env.contains(&format!("KEEL_PROJECT_DIR={}", root.display())), "{env}");
    let input: Value = serde_json::from_str(&std::fs::read_to_string(&input).unwrap()).unwrap();
    assert_eq!(input["tool_input"]["command"], "true", "stdin held the JSON, then ended");
    let transcript = input["transcript_path"].as_str().unwrap();
    assert!(Path::new(transcript).exists(), "the session's log: {transcript}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_hooks_config_keel_cannot_read_stops_keel_naming_the_file() {
    let place = Place::new();
    std::fs::create_dir_all(place.work.path().join(".keel")).unwrap();
    std::fs::write(
        place.work.path().join(".keel/config.toml"),
        "[[hooks.Notification]]\nhooks = [{ type = \"command\", command = \"x\" }]\n",
    )
    .unwrap();
    let server = one_command("true").await;
    let output = place.print(&server, &[]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains(
            "the workspace's .keel/config.toml: hooks.Notification: keel fires no such event"
        ),
        "{}",
        stderr(&output)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_running_hook_and_what_it_started_die_with_keel_even_when_keel_is_killed() {
    let place = Place::new();
    let pids = place.home.path().join("pids");
    place.own_config(&format!(
        "[[hooks.PreToolUse]]\nhooks = [{{ type = \"command\", command = \"echo $$ >> '{0}'; sleep 300 & echo $! >> '{0}'; wait\" }}]\n",
        pids.display()
    ));
    let server = one_command("true").await;
    let mut command = keel(place.home.path());
    command
        .args(["-p", "go", "--workdir"])
        .arg(place.work.path())
        .env("ANTHROPIC_API_KEY", "k")
        .env("ANTHROPIC_BASE_URL", server.anthropic_base())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let mut child = command.spawn().unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while read_pids(&pids).len() < 2 {
        assert!(std::time::Instant::now() < deadline, "the hook never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let started = read_pids(&pids);
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !started.iter().all(|pid| is_dead(*pid)) {
        assert!(std::time::Instant::now() < deadline, "the hook outlived keel: {started:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn in_keels_screen_an_untrusted_hook_is_named_and_slash_hooks_trust_makes_it_run() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let place = Place::new();
    place.script("hooks/mark.sh", &format!("echo ran >> '{}'", place.marks().display()));
    place.workspace_hook("./hooks/mark.sh");
    let steps = vec![tool("bash", json!({"command": "true"})), text("Ran it.")];
    let server = runtime.block_on(FakeLlm::start(steps, Duration::ZERO));
    let test = "in_keels_screen_an_untrusted_hook_is_named_and_slash_hooks_trust_makes_it_run";
    let Some(tmux) = KeelPane::start(test, place.home.path()) else { return };
    tmux.launch(
        &format!("ANTHROPIC_API_KEY=k ANTHROPIC_BASE_URL='{}'", server.anthropic_base()),
        &format!("--approval auto --workdir '{}'", place.work.path().display()),
    );
    tmux.wait_for("the untrusted hook named", WAIT, |screen| screen.contains("have not trusted"));
    tmux.type_line("/hooks trust");
    tmux.wait_for("the trust", WAIT, |screen| screen.contains("Trusted, as they are now"));
    tmux.type_line("run it");
    tmux.wait_for("the answer", WAIT, |screen| screen.contains("Ran it."));
    assert_eq!(place.marked(), 1, "the trusted hook ran");
    tmux.type_line("/hooks");
    tmux.wait_for("the listing", WAIT, |screen| {
        screen.contains("trusted, runs") && screen.contains("— ok in")
    });
    tmux.quit();
}
