#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The real binary in a real terminal: `keel --demo` run inside tmux, driven with `send-keys` and
//! read with `capture-pane`.
//!
//! The test runs its own tmux server (a socket in a temporary directory), so it never touches a
//! tmux the person is using, and a clean environment (no API keys, a temporary HOME), so nothing
//! of the machine's configuration leaks in. Without tmux it is skipped, saying so — except in CI
//! (`CI` set), where `.ci/run` installs tmux and a missing one must fail rather than pass.

mod fake_llm;
mod keel_bin;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::thread::sleep;
use std::time::{Duration, Instant};

/// The demo is scripted but runs real tools; on a loaded machine it can take a while.
const DEMO_TIMEOUT: Duration = Duration::from_secs(60);
/// How long a keypress may take to show.
const KEY_TIMEOUT: Duration = Duration::from_secs(10);
const POLL: Duration = Duration::from_millis(200);
/// The shell prompt inside the pane (followed by a space), to tell the shell from keel.
const PROMPT: &str = "e2e-shell$";
/// Printed by the shell when keel exits.
const EXITED: &str = "keel exited with";

/// One private tmux server with one 120×40 session running a plain shell.
struct Tmux {
    socket: PathBuf,
}

impl Tmux {
    fn start(dir: &Path) -> Self {
        let tmux = Self { socket: dir.join("tmux.sock") };
        let shell = format!(
            "env -i PATH=\"$PATH\" TERM=\"$TERM\" HOME='{}' PS1='{PROMPT} ' sh",
            dir.display()
        );
        let output = tmux.run(&["new-session", "-d", "-x", "120", "-y", "40", "-s", "e2e", &shell]);
        assert!(output.status.success(), "tmux new-session failed: {output:?}");
        tmux
    }

    fn run(&self, args: &[&str]) -> Output {
        Command::new("tmux").arg("-S").arg(&self.socket).args(args).output().expect("tmux runs")
    }

    fn send(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "e2e"];
        args.extend_from_slice(keys);
        assert!(self.run(&args).status.success(), "send-keys {keys:?}");
    }

    /// Types `text` literally, then Enter.
    fn type_line(&self, text: &str) {
        assert!(self.run(&["send-keys", "-t", "e2e", "-l", text]).status.success());
        self.send(&["Enter"]);
    }

    fn screen(&self) -> String {
        String::from_utf8_lossy(&self.run(&["capture-pane", "-p", "-t", "e2e"]).stdout).into_owned()
    }

    fn alternate_screen(&self) -> bool {
        let output = self.run(&["display-message", "-p", "-t", "e2e", "#{alternate_on}"]);
        String::from_utf8_lossy(&output.stdout).trim() == "1"
    }

    /// Polls the screen until `done` holds; panics with the last screen after `timeout`.
    fn wait_for(&self, what: &str, timeout: Duration, done: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if done(&screen) {
                return screen;
            }
            if start.elapsed() > timeout {
                panic!("timed out after {timeout:?} waiting for {what}; the pane shows:\n{screen}");
            }
            sleep(POLL);
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.run(&["kill-server"]);
    }
}

fn tmux_installed() -> bool {
    Command::new("tmux").arg("-V").output().is_ok_and(|output| output.status.success())
}

/// Whether `test` can run here: with tmux, yes; without it, a skip that says so, or in CI (where
/// tmux is installed on purpose) a failure.
fn can_run(test: &str) -> bool {
    if tmux_installed() {
        return true;
    }
    let in_ci = std::env::var_os("CI").is_some_and(|value| !value.is_empty());
    assert!(!in_ci, "{test}: tmux is not installed, and CI must run the end-to-end tests");
    eprintln!("SKIPPED {test}: tmux is not installed");
    false
}

/// The shell's line saying keel exited. The command line echoes the marker too; the answer is the
/// line that starts with it.
fn exit_line(screen: &str) -> Option<String> {
    screen.lines().find(|line| line.starts_with(EXITED)).map(str::to_owned)
}

/// The board's `done/total` from the todo pane's title (`Todos 6/6`), if drawn.
fn board_count(screen: &str) -> Option<(u32, u32)> {
    let rest = &screen[screen.find("Todos ")? + "Todos ".len()..];
    let (count, _) = rest.split_once(' ')?;
    let (done, total) = count.split_once('/')?;
    Some((done.parse().ok()?, total.parse().ok()?))
}

#[test]
fn demo_runs_to_a_full_board_the_inspector_opens_and_quitting_restores_the_terminal() {
    if !can_run("demo_runs_to_a_full_board_the_inspector_opens_and_quitting_restores_the_terminal")
    {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let workdir = tempfile::tempdir().unwrap();
    let tmux = Tmux::start(home.path());
    tmux.wait_for("the shell prompt", KEY_TIMEOUT, |screen| screen.contains(PROMPT));

    tmux.type_line(&format!(
        "'{}' --demo --workdir '{}'; echo \"{EXITED} $?\"",
        env!("CARGO_BIN_EXE_keel"),
        workdir.path().display()
    ));

    let screen = tmux.wait_for("the demo's board to fill", DEMO_TIMEOUT, |screen| {
        let full = board_count(screen).is_some_and(|(done, total)| total > 0 && done == total);
        full || exit_line(screen).is_some()
    });
    assert!(exit_line(&screen).is_none(), "keel exited before the demo's board filled:\n{screen}");
    assert!(tmux.alternate_screen(), "keel draws on the alternate screen:\n{screen}");

    tmux.send(&["C-t"]);
    tmux.wait_for("the history inspector", KEY_TIMEOUT, |screen| screen.contains("\"role\""));
    tmux.send(&["Escape"]);
    tmux.wait_for("the inspector to close", KEY_TIMEOUT, |screen| {
        !screen.contains("\"role\"") && board_count(screen).is_some()
    });
    // Ctrl+C interrupts a turn that still runs; twice on an idle prompt it quits.
    tmux.wait_for("the demo's last answer", DEMO_TIMEOUT, |screen| screen.contains("│ idle │"));

    tmux.send(&["C-c"]);
    tmux.send(&["C-c"]);
    let screen = tmux.wait_for("keel to exit", KEY_TIMEOUT, |screen| exit_line(screen).is_some());
    assert_eq!(
        exit_line(&screen).as_deref().map(str::trim_end),
        Some(format!("{EXITED} 0").as_str()),
        "keel exits cleanly:\n{screen}"
    );
    assert!(!tmux.alternate_screen(), "the alternate screen is left");
    assert!(
        board_count(&screen).is_none(),
        "nothing of keel's screen is left on the shell's:\n{screen}"
    );

    // The terminal is back in cooked mode: the shell echoes and runs what is typed.
    tmux.type_line("echo still-$((40 + 2))");
    tmux.wait_for("the shell to answer", KEY_TIMEOUT, |screen| screen.contains("still-42"));
}

/// The pid of the process whose command line mentions `needle` (a unique temporary path).
fn pid_of(needle: &str) -> Option<i32> {
    std::fs::read_dir("/proc").ok()?.flatten().find_map(|entry| {
        let pid: i32 = entry.file_name().to_str()?.parse().ok()?;
        let cmdline = std::fs::read(entry.path().join("cmdline")).ok()?;
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        (cmdline.contains(needle) && cmdline.contains("--workdir")).then_some(pid)
    })
}

#[test]
fn sigterm_restores_the_terminal() {
    if !can_run("sigterm_restores_the_terminal") {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let workdir = tempfile::tempdir().unwrap();
    let tmux = Tmux::start(home.path());
    tmux.wait_for("the shell prompt", KEY_TIMEOUT, |screen| screen.contains(PROMPT));
    // No key: the first-run screen, which must say how to configure one.
    tmux.type_line(&format!(
        "'{}' --workdir '{}'; echo \"{EXITED} $?\"",
        env!("CARGO_BIN_EXE_keel"),
        workdir.path().display()
    ));
    let screen = tmux.wait_for("the first-run screen", KEY_TIMEOUT, |screen| {
        screen.contains("ANTHROPIC_API_KEY") || exit_line(screen).is_some()
    });
    assert!(screen.contains("/demo"), "the first run offers the demo:\n{screen}");
    assert!(tmux.alternate_screen());

    let pid = pid_of(&workdir.path().display().to_string()).expect("keel is running");
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGTERM)
        .unwrap();
    let screen = tmux.wait_for("keel to exit", KEY_TIMEOUT, |screen| exit_line(screen).is_some());
    assert!(!tmux.alternate_screen(), "the alternate screen is left:\n{screen}");
    let exited = exit_line(&screen).unwrap();
    assert_eq!(exited.trim_end(), format!("{EXITED} 143"), "128 + SIGTERM, as a shell counts it");
    tmux.type_line("echo still-$((40 + 2))");
    tmux.wait_for("the shell to answer", KEY_TIMEOUT, |screen| screen.contains("still-42"));
}

#[test]
fn approval_auto_in_the_workspace_file_does_not_stop_the_tui_asking() {
    if !can_run("approval_auto_in_the_workspace_file_does_not_stop_the_tui_asking") {
        return;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let steps = vec![
        fake_llm::tool("bash", serde_json::json!({"command": "touch planted.txt"})),
        fake_llm::text("Understood."),
    ];
    let server = runtime.block_on(fake_llm::FakeLlm::start(steps, Duration::ZERO));
    let home = tempfile::tempdir().unwrap();
    let workdir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(workdir.path().join(".keel")).unwrap();
    std::fs::write(workdir.path().join(".keel/config.toml"), "approval = \"auto\"\n").unwrap();
    let tmux = Tmux::start(home.path());
    tmux.wait_for("the shell prompt", KEY_TIMEOUT, |screen| screen.contains(PROMPT));
    tmux.type_line(&format!(
        "ANTHROPIC_API_KEY=k ANTHROPIC_BASE_URL='{}' '{}' --workdir '{}'; echo \"{EXITED} $?\"",
        server.anthropic_base(),
        env!("CARGO_BIN_EXE_keel"),
        workdir.path().display()
    ));
    let screen = tmux.wait_for("keel to start", KEY_TIMEOUT, |screen| {
        screen.contains("Welcome to keel") || exit_line(screen).is_some()
    });
    let notice = screen.contains("ignored `approval = \"auto\"`");

    tmux.type_line("Plant a file.");
    let screen = tmux.wait_for("the approval request", KEY_TIMEOUT, |screen| {
        screen.contains("Approval needed") || screen.contains("Understood.")
    });
    assert!(screen.contains("Approval needed"), "keel asks before the command:\n{screen}");
    assert!(screen.contains("touch planted.txt"), "{screen}");
    assert!(!workdir.path().join("planted.txt").exists());
    tmux.send(&["n"]);
    tmux.wait_for("the model's answer", KEY_TIMEOUT, |screen| screen.contains("Understood."));
    assert!(!workdir.path().join("planted.txt").exists(), "a refused command never ran");

    tmux.send(&["C-c"]);
    tmux.send(&["C-c"]);
    let screen = tmux.wait_for("keel to exit", KEY_TIMEOUT, |screen| exit_line(screen).is_some());
    assert!(notice, "the TUI said what it ignored");
    assert!(screen.contains("keel: ignored `approval"), "and said it on stderr too:\n{screen}");
}

#[test]
fn the_tui_on_a_session_another_keel_has_open_starts_a_new_one_and_says_so() {
    use std::io::{BufRead, BufReader};
    if !can_run("the_tui_on_a_session_another_keel_has_open_starts_a_new_one_and_says_so") {
        return;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let steps = vec![
        fake_llm::tool("bash", serde_json::json!({"command": "sleep 630.5"})),
        fake_llm::text("done"),
    ];
    let server = runtime.block_on(fake_llm::FakeLlm::start(steps, Duration::ZERO));
    let home = tempfile::tempdir().unwrap();
    let workdir = tempfile::tempdir().unwrap();
    let mut holder = keel_bin::keel(home.path());
    holder
        .args(["-p", "go", "--output-format", "json", "--workdir"])
        .arg(workdir.path())
        .env("ANTHROPIC_API_KEY", "k")
        .env("ANTHROPIC_BASE_URL", server.anthropic_base())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null());
    let mut holder = holder.spawn().unwrap();
    let mut lines = BufReader::new(holder.stdout.take().unwrap()).lines();
    while !lines.next().expect("keel -p ended early").unwrap().contains("\"tool_start\"") {}
    let store = keel_bin::sessions(home.path(), workdir.path());
    let held = store.list().unwrap()[0].id.clone();
    let log = store.sessions_dir().join(format!("{held}.jsonl"));
    let log_before = std::fs::read(&log).unwrap();

    let tmux = Tmux::start(home.path());
    tmux.wait_for("the shell prompt", KEY_TIMEOUT, |screen| screen.contains(PROMPT));
    tmux.type_line(&format!(
        "ANTHROPIC_API_KEY=k ANTHROPIC_BASE_URL='{}' '{}' --continue --workdir '{}'; echo \"{EXITED} $?\"",
        server.anthropic_base(),
        env!("CARGO_BIN_EXE_keel"),
        workdir.path().display()
    ));
    let screen = tmux.wait_for("keel to start", KEY_TIMEOUT, |screen| {
        screen.contains("Welcome to keel") || exit_line(screen).is_some()
    });
    assert!(screen.contains("keel started a new session"), "{screen}");
    // The line wraps in the pane; the pid is what must be there.
    assert!(screen.contains("is open in keel"), "{screen}");
    assert!(screen.contains(&format!("process {},", holder.id())), "{screen}");
    tmux.send(&["C-c"]);
    tmux.send(&["C-c"]);
    tmux.wait_for("keel to exit", KEY_TIMEOUT, |screen| exit_line(screen).is_some());
    holder.kill().unwrap();
    holder.wait().unwrap();
    assert_eq!(std::fs::read(&log).unwrap(), log_before, "the TUI never wrote the held session");
    assert!(!workdir.path().join(".keel").exists(), "nothing of keel in the workspace");
}

#[test]
fn plan_mode_is_switched_edited_and_approved_with_keys() {
    if !can_run("plan_mode_is_switched_edited_and_approved_with_keys") {
        return;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let plan = serde_json::json!({"items": [
        {"id": "1", "text": "Write ok.txt", "status": "pending"},
        {"id": "2", "text": "Check it", "status": "pending", "blocked_by": ["1"]},
    ]});
    let steps = vec![
        fake_llm::tool("todo", plan),
        fake_llm::text("Here is the plan."),
        fake_llm::tool("write_file", serde_json::json!({"path": "ok.txt", "content": "ok\n"})),
        fake_llm::text("Carried out."),
    ];
    let server = runtime.block_on(fake_llm::FakeLlm::start(steps, Duration::ZERO));
    let home = tempfile::tempdir().unwrap();
    let workdir = tempfile::tempdir().unwrap();
    let tmux = Tmux::start(home.path());
    tmux.wait_for("the shell prompt", KEY_TIMEOUT, |screen| screen.contains(PROMPT));
    tmux.type_line(&format!(
        "ANTHROPIC_API_KEY=k ANTHROPIC_BASE_URL='{}' '{}' --approval auto --workdir '{}'; echo \"{EXITED} $?\"",
        server.anthropic_base(),
        env!("CARGO_BIN_EXE_keel"),
        workdir.path().display()
    ));
    tmux.wait_for("keel to start", KEY_TIMEOUT, |screen| screen.contains("Welcome to keel"));

    tmux.send(&["BTab"]);
    tmux.wait_for("plan mode", KEY_TIMEOUT, |screen| screen.contains("PLAN"));
    tmux.type_line("Plan the work.");
    tmux.wait_for("the plan, focused for approval", KEY_TIMEOUT, |screen| {
        screen.contains("Enter approves the plan")
    });
    // Add an item in the composer; the board takes the keyboard back.
    tmux.send(&["a"]);
    tmux.wait_for("the add command in the composer", KEY_TIMEOUT, |screen| {
        screen.contains("/todo add")
    });
    tmux.type_line("Tell the person");
    tmux.wait_for("the item added", KEY_TIMEOUT, |screen| screen.contains("#3 Tell the person"));
    assert!(!workdir.path().join("ok.txt").exists(), "nothing runs before the approval");
    tmux.wait_for("the board focused again", KEY_TIMEOUT, |screen| {
        screen.contains("Enter approves the plan")
    });
    tmux.send(&["Enter"]);
    let screen =
        tmux.wait_for("the work to be done", KEY_TIMEOUT, |screen| screen.contains("Carried out."));
    assert!(!screen.contains("PLAN"), "approval ends plan mode:\n{screen}");
    assert_eq!(std::fs::read_to_string(workdir.path().join("ok.txt")).unwrap(), "ok\n");
    let bodies = runtime.block_on(server.bodies());
    let approval = bodies[2]["messages"].as_array().unwrap().last().unwrap().to_string();
    assert!(approval.contains("The plan is approved"), "{approval}");
    assert!(approval.contains("added #3: Tell the person"), "the model hears the edit: {approval}");

    tmux.send(&["C-c"]);
    tmux.send(&["C-c"]);
    tmux.wait_for("keel to exit", KEY_TIMEOUT, |screen| exit_line(screen).is_some());
}

#[test]
fn newlines_kill_line_and_a_big_bracketed_paste_work_in_tmux() {
    if !can_run("newlines_kill_line_and_a_big_bracketed_paste_work_in_tmux") {
        return;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime
        .block_on(fake_llm::FakeLlm::start(vec![fake_llm::text("Got the paste.")], Duration::ZERO));
    let home = tempfile::tempdir().unwrap();
    let workdir = tempfile::tempdir().unwrap();
    let tmux = Tmux::start(home.path());
    tmux.wait_for("the shell prompt", KEY_TIMEOUT, |screen| screen.contains(PROMPT));
    // tmux sends modified keys to a program that asks for them; what keel writes is recorded.
    assert!(tmux.run(&["set", "-s", "extended-keys", "on"]).status.success());
    let output = home.path().join("pane-output");
    let record = format!("cat > '{}'", output.display());
    assert!(tmux.run(&["pipe-pane", "-t", "e2e", &record]).status.success());
    tmux.type_line(&format!(
        "ANTHROPIC_API_KEY=k ANTHROPIC_BASE_URL='{}' '{}' --workdir '{}'; echo \"{EXITED} $?\"",
        server.anthropic_base(),
        env!("CARGO_BIN_EXE_keel"),
        workdir.path().display()
    ));
    tmux.wait_for("keel to start", KEY_TIMEOUT, |screen| screen.contains("Welcome to keel"));

    // Alt+Enter and Ctrl+J, which tmux passes on as they are, each start a new line.
    let literal =
        |text: &str| assert!(tmux.run(&["send-keys", "-t", "e2e", "-l", text]).status.success());
    literal("alpha");
    tmux.send(&["M-Enter"]);
    literal("beta");
    tmux.send(&["C-j"]);
    literal("gamma");
    // Shift+Enter as tmux sends it with `extended-keys-format csi-u` (CSI 13;2u).
    let csi_u = ["send-keys", "-t", "e2e", "-H", "1b", "5b", "31", "33", "3b", "32", "75"];
    assert!(tmux.run(&csi_u).status.success());
    literal("gamma");
    // Shift+Enter as tmux sends it by default (`extended-keys-format xterm`): CSI 27;2;13~.
    let xterm = ["send-keys", "-t", "e2e", "-H", "1b", "5b", "32", "37", "3b", "32", "3b", "31"];
    assert!(tmux.run(&[&xterm[..], &["33", "7e"]].concat()).status.success());
    literal("delta");
    let lines = |screen: &str, words: &[&str]| {
        words.iter().all(|word| screen.lines().any(|line| line.trim_matches(['│', ' ']) == *word))
    };
    tmux.wait_for("five lines in the composer", KEY_TIMEOUT, |s| {
        lines(s, &["alpha", "beta", "gamma", "delta"]) && s.matches("gamma").count() == 2
    });
    // Ctrl+U kills to the line's start, as in readline.
    tmux.send(&["C-u"]);
    tmux.wait_for("the last line killed", KEY_TIMEOUT, |s| {
        lines(s, &["alpha", "beta", "gamma"]) && !s.contains("delta")
    });
    tmux.send(&["C-c"]);
    tmux.wait_for("the composer cleared", KEY_TIMEOUT, |s| !s.contains("alpha"));

    // A 2,000-line bracketed paste becomes a token that Backspace removes whole.
    let paste: String = (1..=2_000).map(|n| format!("line {n} of a big paste\n")).collect();
    let file = home.path().join("paste.txt");
    std::fs::write(&file, &paste).unwrap();
    let bracketed = || {
        assert!(tmux.run(&["load-buffer", &file.display().to_string()]).status.success());
        assert!(tmux.run(&["paste-buffer", "-p", "-t", "e2e"]).status.success());
    };
    bracketed();
    tmux.wait_for("the paste's token", KEY_TIMEOUT, |s| s.contains("[paste #1: 2,000 lines"));
    tmux.send(&["BSpace"]);
    let screen = tmux.wait_for("the token gone", KEY_TIMEOUT, |s| !s.contains("[paste #1"));
    assert!(!screen.contains("2,000 lines"), "no broken token left:\n{screen}");

    // Sent, it reaches the model whole, and stays folded in the conversation.
    bracketed();
    tmux.wait_for("the second token", KEY_TIMEOUT, |s| s.contains("[paste #2: 2,000 lines"));
    tmux.send(&["Enter"]);
    let screen = tmux.wait_for("the answer", KEY_TIMEOUT, |s| s.contains("Got the paste."));
    assert!(screen.contains("… 1,994 more lines"), "folded in the conversation:\n{screen}");
    let sent = runtime.block_on(server.bodies())[0]["messages"][0].to_string();
    assert!(sent.contains("line 1 of a big paste") && sent.contains("line 2000 of a big paste"));

    tmux.send(&["C-c"]);
    tmux.send(&["C-c"]);
    tmux.wait_for("keel to exit", KEY_TIMEOUT, |screen| exit_line(screen).is_some());
    // keel asked for modifyOtherKeys at start and gave the terminal's own setting back on exit.
    let read = || String::from_utf8_lossy(&std::fs::read(&output).unwrap_or_default()).into_owned();
    let start = Instant::now();
    while !read().contains("\x1b[>4m") && start.elapsed() < KEY_TIMEOUT {
        sleep(POLL);
    }
    let written = read();
    let asked = written.find("\x1b[>4;1m").expect("modifyOtherKeys asked for");
    let reset = written.rfind("\x1b[>4m").expect("modifyOtherKeys reset");
    assert!(asked < reset, "asked for after it was reset");
}
