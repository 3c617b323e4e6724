//! The real binary in a real terminal (`support::tmux`): the demo, the first-run screen, signals,
//! approvals, plan mode, held sessions and the composer's keys, driven as a person would.

use crate::support::tmux::{EXITED, KEY_TIMEOUT, KeelPane, board_count, exit_line};
use crate::support::{bin, llm};
use std::thread::sleep;
use std::time::{Duration, Instant};

/// The demo is scripted but runs real tools; on a loaded machine it can take a while.
const DEMO_TIMEOUT: Duration = Duration::from_secs(60);
/// How often the recorded output is read while waiting.
const POLL: Duration = Duration::from_millis(200);

/// The environment that points keel at the scripted server.
fn server_env(server: &llm::FakeLlm) -> String {
    format!("ANTHROPIC_API_KEY=k ANTHROPIC_BASE_URL='{}'", server.anthropic_base())
}

#[test]
fn demo_runs_to_a_full_board_the_inspector_opens_and_quitting_restores_the_terminal() {
    let home = tempfile::tempdir().unwrap();
    let workdir = tempfile::tempdir().unwrap();
    let Some(tmux) = KeelPane::start(
        "demo_runs_to_a_full_board_the_inspector_opens_and_quitting_restores_the_terminal",
        home.path(),
    ) else {
        return;
    };

    tmux.launch("", &format!("--demo --workdir '{}'", workdir.path().display()));

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

    let screen = tmux.quit();
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
    tmux.assert_shell_answers();
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
    let home = tempfile::tempdir().unwrap();
    let workdir = tempfile::tempdir().unwrap();
    let Some(tmux) = KeelPane::start("sigterm_restores_the_terminal", home.path()) else { return };
    // No key: the first-run screen, which must say how to configure one.
    tmux.launch("", &format!("--workdir '{}'", workdir.path().display()));
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
    tmux.assert_shell_answers();
}

#[test]
fn approval_auto_in_the_workspace_file_does_not_stop_the_tui_asking() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let steps = vec![
        llm::tool("bash", serde_json::json!({"command": "touch planted.txt"})),
        llm::text("Understood."),
    ];
    let server = runtime.block_on(llm::FakeLlm::start(steps, Duration::ZERO));
    let home = tempfile::tempdir().unwrap();
    let workdir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(workdir.path().join(".keel")).unwrap();
    std::fs::write(workdir.path().join(".keel/config.toml"), "approval = \"auto\"\n").unwrap();
    let Some(tmux) = KeelPane::start(
        "approval_auto_in_the_workspace_file_does_not_stop_the_tui_asking",
        home.path(),
    ) else {
        return;
    };
    tmux.launch(&server_env(&server), &format!("--workdir '{}'", workdir.path().display()));
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
    // Keys answer the box only once it has been on screen a moment (see `type_ahead`).
    sleep(keel::tui::type_ahead::GRACE_PERIOD);
    tmux.send(&["n"]);
    tmux.wait_for("the model's answer", KEY_TIMEOUT, |screen| screen.contains("Understood."));
    assert!(!workdir.path().join("planted.txt").exists(), "a refused command never ran");

    let screen = tmux.quit();
    assert!(notice, "the TUI said what it ignored");
    assert!(screen.contains("keel: ignored `approval"), "and said it on stderr too:\n{screen}");
}

#[test]
fn the_tui_on_a_session_another_keel_has_open_starts_a_new_one_and_says_so() {
    use std::io::{BufRead, BufReader};
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let steps =
        vec![llm::tool("bash", serde_json::json!({"command": "sleep 630.5"})), llm::text("done")];
    let server = runtime.block_on(llm::FakeLlm::start(steps, Duration::ZERO));
    let home = tempfile::tempdir().unwrap();
    let workdir = tempfile::tempdir().unwrap();
    let Some(tmux) = KeelPane::start(
        "the_tui_on_a_session_another_keel_has_open_starts_a_new_one_and_says_so",
        home.path(),
    ) else {
        return;
    };
    let mut holder = bin::keel(home.path());
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
    let store = bin::sessions(home.path(), workdir.path());
    let held = store.list().unwrap()[0].id.clone();
    let log = store.sessions_dir().join(format!("{held}.jsonl"));
    let log_before = std::fs::read(&log).unwrap();

    tmux.launch(
        &server_env(&server),
        &format!("--continue --workdir '{}'", workdir.path().display()),
    );
    let screen = tmux.wait_for("keel to start", KEY_TIMEOUT, |screen| {
        screen.contains("Welcome to keel") || exit_line(screen).is_some()
    });
    assert!(screen.contains("keel started a new session"), "{screen}");
    // The line wraps in the pane; the pid is what must be there.
    assert!(screen.contains("is open in keel"), "{screen}");
    assert!(screen.contains(&format!("process {},", holder.id())), "{screen}");
    tmux.quit();
    holder.kill().unwrap();
    holder.wait().unwrap();
    assert_eq!(std::fs::read(&log).unwrap(), log_before, "the TUI never wrote the held session");
    // The sandbox covers a missing `.keel` with an empty folder while the holder's command runs;
    // its supervisor removes it once that command is killed.
    let until = Instant::now() + Duration::from_secs(5);
    while workdir.path().join(".keel").exists() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!workdir.path().join(".keel").exists(), "nothing of keel in the workspace");
}

#[test]
fn plan_mode_is_switched_edited_and_approved_with_keys() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let plan = serde_json::json!({"items": [
        {"id": "1", "text": "Write ok.txt", "status": "pending"},
        {"id": "2", "text": "Check it", "status": "pending", "blocked_by": ["1"]},
    ]});
    let steps = vec![
        llm::tool("todo", plan),
        llm::text("Here is the plan."),
        llm::tool("write_file", serde_json::json!({"path": "ok.txt", "content": "ok\n"})),
        llm::text("Carried out."),
    ];
    let server = runtime.block_on(llm::FakeLlm::start(steps, Duration::ZERO));
    let home = tempfile::tempdir().unwrap();
    let workdir = tempfile::tempdir().unwrap();
    let Some(tmux) =
        KeelPane::start("plan_mode_is_switched_edited_and_approved_with_keys", home.path())
    else {
        return;
    };
    tmux.launch(
        &server_env(&server),
        &format!("--approval auto --workdir '{}'", workdir.path().display()),
    );
    tmux.wait_for("keel to start", KEY_TIMEOUT, |screen| screen.contains("Welcome to keel"));

    tmux.send(&["BTab"]);
    tmux.wait_for("plan mode", KEY_TIMEOUT, |screen| screen.contains("PLAN"));
    tmux.type_line("Plan the work.");
    // The plan never takes the keyboard: the prompt says how to approve or edit it.
    tmux.wait_for("the plan, with the prompt's hint", KEY_TIMEOUT, |screen| {
        screen.contains("plan ready: /approve runs it")
    });
    tmux.type_line("/todos");
    tmux.wait_for("the board focused", KEY_TIMEOUT, |screen| {
        screen.contains("Enter approves the plan")
    });
    // Add an item in the composer.
    tmux.send(&["a"]);
    tmux.wait_for("the add command in the composer", KEY_TIMEOUT, |screen| {
        screen.contains("/todo add")
    });
    tmux.type_line("Tell the person");
    tmux.wait_for("the item added", KEY_TIMEOUT, |screen| screen.contains("#3 Tell the person"));
    assert!(!workdir.path().join("ok.txt").exists(), "nothing runs before the approval");
    tmux.type_line("/todos");
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

    tmux.quit();
}

#[test]
fn newlines_kill_line_and_a_big_bracketed_paste_work_in_tmux() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server =
        runtime.block_on(llm::FakeLlm::start(vec![llm::text("Got the paste.")], Duration::ZERO));
    let home = tempfile::tempdir().unwrap();
    let workdir = tempfile::tempdir().unwrap();
    let Some(tmux) =
        KeelPane::start("newlines_kill_line_and_a_big_bracketed_paste_work_in_tmux", home.path())
    else {
        return;
    };
    // tmux sends modified keys to a program that asks for them; what keel writes is recorded.
    assert!(tmux.run(&["set", "-s", "extended-keys", "on"]).status.success());
    let output = home.path().join("pane-output");
    let record = format!("cat > '{}'", output.display());
    assert!(tmux.run(&["pipe-pane", "-t", "e2e", &record]).status.success());
    tmux.launch(&server_env(&server), &format!("--workdir '{}'", workdir.path().display()));
    tmux.wait_for("keel to start", KEY_TIMEOUT, |screen| screen.contains("Welcome to keel"));

    // Alt+Enter and Ctrl+J, which tmux passes on as they are, each start a new line.
    tmux.type_text("alpha");
    tmux.send(&["M-Enter"]);
    tmux.type_text("beta");
    tmux.send(&["C-j"]);
    tmux.type_text("gamma");
    // Shift+Enter as tmux sends it with `extended-keys-format csi-u` (CSI 13;2u).
    let csi_u = ["send-keys", "-t", "e2e", "-H", "1b", "5b", "31", "33", "3b", "32", "75"];
    assert!(tmux.run(&csi_u).status.success());
    tmux.type_text("gamma");
    // Shift+Enter as tmux sends it by default (`extended-keys-format xterm`): CSI 27;2;13~.
    let xterm = ["send-keys", "-t", "e2e", "-H", "1b", "5b", "32", "37", "3b", "32", "3b", "31"];
    assert!(tmux.run(&[&xterm[..], &["33", "7e"]].concat()).status.success());
    tmux.type_text("delta");
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

    tmux.quit();
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
