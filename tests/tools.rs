#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The workspace tools against a real temporary workspace and real `bash` processes.

use keel::tools::output::{DISPLAY_OUTPUT_LIMIT, MODEL_OUTPUT_LIMIT};
use keel::tools::preview::preview;
use keel::tools::{ToolContext, ToolError, ToolOutcome, Tools, Workspace, guard};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tempfile::TempDir;
use tokio_util::sync::CancellationToken;

/// Generous bound for "returned promptly" on a loaded two-core machine.
const PROMPT: Duration = Duration::from_secs(15);

fn workspace() -> (TempDir, Tools) {
    keel::tools::supervisor::set_program(env!("CARGO_BIN_EXE_keel"));
    let dir = tempfile::tempdir().unwrap();
    let tools = Tools::new(Workspace::new(dir.path()).unwrap());
    (dir, tools)
}

fn ctx() -> ToolContext {
    ToolContext { cancel: CancellationToken::new(), live_output: None }
}

async fn run(tools: &Tools, name: &str, input: Value) -> ToolOutcome {
    tools.run(name, &input, &ctx()).await
}

/// Whether the process is dead: gone from `/proc`, or a zombie waiting to be reaped.
fn is_dead(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state == "Z" || state == "X"),
    }
}

/// Waits up to `within` for every pid to be dead.
async fn all_dead(pids: &[i32], within: Duration) -> bool {
    let until = Instant::now() + within;
    loop {
        if pids.iter().all(|pid| is_dead(*pid)) {
            return true;
        }
        if Instant::now() > until {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn read_pids(path: &Path) -> Vec<i32> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .split_whitespace()
        .map(|pid| pid.parse().unwrap())
        .collect()
}

/// A command that leaves three long sleepers (one in a nested shell) and records their pids.
const SLEEPERS: &str = "sleep 1000 & echo $! >> pids; \
     bash -c 'sleep 1000 & echo $! >> pids; wait' & echo $! >> pids; \
     sleep 1000";

/// Waits until the command has written `count` pids.
async fn wait_for_pids(path: &Path, count: usize) -> Vec<i32> {
    let until = Instant::now() + PROMPT;
    loop {
        let pids = read_pids(path);
        if pids.len() >= count || Instant::now() > until {
            return pids;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

mod paths {
    use super::*;

    fn root(tools: &Tools) -> PathBuf {
        tools.workspace().root().to_path_buf()
    }

    #[test]
    fn relative_and_nested_new_paths_resolve_inside() {
        let (_dir, tools) = workspace();
        let ws = tools.workspace();
        assert_eq!(ws.resolve("a/b/c.txt").unwrap(), root(&tools).join("a/b/c.txt"));
        assert_eq!(ws.resolve("./x/../y.txt").unwrap(), root(&tools).join("y.txt"));
        assert_eq!(ws.resolve(".").unwrap(), root(&tools));
    }

    #[test]
    fn absolute_path_inside_is_accepted() {
        let (_dir, tools) = workspace();
        let inside = root(&tools).join("src/main.rs");
        assert_eq!(tools.workspace().resolve(inside.to_str().unwrap()).unwrap(), inside);
    }

    #[test]
    fn dotdot_escape_is_refused_naming_path_and_workspace() {
        let (_dir, tools) = workspace();
        let err = tools.workspace().resolve("../outside.txt").unwrap_err();
        assert!(matches!(err, ToolError::OutsideWorkspace { .. }), "{err:?}");
        let message = err.to_string();
        assert!(message.contains("../outside.txt"), "{message}");
        assert!(message.contains(&root(&tools).display().to_string()), "{message}");
        assert!(tools.workspace().resolve("a/../../x").is_err());
    }

    #[test]
    fn absolute_path_outside_is_refused() {
        let (_dir, tools) = workspace();
        let other = tempfile::tempdir().unwrap();
        let outside = other.path().join("f.txt");
        let err = tools.workspace().resolve(outside.to_str().unwrap()).unwrap_err();
        assert!(matches!(err, ToolError::OutsideWorkspace { .. }), "{err:?}");
        assert!(tools.workspace().resolve("/etc/passwd").is_err());
    }

    #[test]
    fn symlinks_pointing_out_are_refused_even_for_new_files() {
        let (dir, tools) = workspace();
        let other = tempfile::tempdir().unwrap();
        std::fs::write(other.path().join("secret.txt"), "secret").unwrap();
        std::os::unix::fs::symlink(other.path(), dir.path().join("out")).unwrap();
        std::os::unix::fs::symlink(other.path().join("secret.txt"), dir.path().join("secret-link"))
            .unwrap();
        for path in ["out/secret.txt", "out/new/file.txt", "secret-link"] {
            let err = tools.workspace().resolve(path).unwrap_err();
            assert!(matches!(err, ToolError::SymlinkEscape { .. }), "{path}: {err:?}");
            assert!(err.to_string().contains(path), "{err}");
        }
    }

    #[test]
    fn dangling_symlink_is_refused() {
        let (dir, tools) = workspace();
        std::os::unix::fs::symlink("/nonexistent/keel/target", dir.path().join("dangling"))
            .unwrap();
        assert!(tools.workspace().resolve("dangling").is_err());
    }

    #[test]
    fn symlink_inside_the_workspace_is_followed() {
        let (dir, tools) = workspace();
        std::fs::create_dir(dir.path().join("real")).unwrap();
        std::os::unix::fs::symlink(dir.path().join("real"), dir.path().join("alias")).unwrap();
        assert_eq!(
            tools.workspace().resolve("alias/new.txt").unwrap(),
            root(&tools).join("real/new.txt")
        );
    }

    #[tokio::test]
    async fn file_tools_refuse_paths_outside() {
        let (_dir, tools) = workspace();
        let outcome = run(&tools, "write_file", json!({"path": "../x.txt", "content": "x"})).await;
        assert!(outcome.is_error);
        assert!(outcome.for_model.contains("outside the workspace"), "{}", outcome.for_model);
        assert!(outcome.changes.is_empty());
        let outcome = run(&tools, "read_file", json!({"path": "/etc/hostname"})).await;
        assert!(outcome.is_error);
    }
}

mod bash {
    use super::*;

    #[tokio::test]
    async fn reports_exit_code_stdout_and_stderr() {
        let (_dir, tools) = workspace();
        let outcome =
            run(&tools, "bash", json!({"command": "echo to-out; echo to-err >&2; exit 3"})).await;
        assert_eq!(outcome.exit_code, Some(3));
        assert!(outcome.is_error);
        assert!(outcome.for_model.starts_with("Exit code 3"), "{}", outcome.for_model);
        assert!(outcome.for_model.contains("--- stdout ---\nto-out\n"));
        assert!(outcome.for_model.contains("--- stderr ---\nto-err\n"));

        let outcome = run(&tools, "bash", json!({"command": "true"})).await;
        assert_eq!(outcome.exit_code, Some(0));
        assert!(!outcome.is_error);
        assert!(outcome.for_model.contains("(no output)"));
    }

    #[tokio::test]
    async fn runs_in_the_workspace_root() {
        let (_dir, tools) = workspace();
        let outcome = run(&tools, "bash", json!({"command": "pwd -P"})).await;
        let root = tools.workspace().root().display().to_string();
        assert!(outcome.for_model.contains(&root), "{}", outcome.for_model);
    }

    #[tokio::test]
    async fn timeout_kills_the_whole_process_tree_promptly() {
        let (dir, tools) = workspace();
        let started = Instant::now();
        let outcome = run(&tools, "bash", json!({"command": SLEEPERS, "timeout_ms": 1500})).await;
        assert!(started.elapsed() < PROMPT, "took {:?}", started.elapsed());
        assert!(outcome.is_error);
        assert!(outcome.for_model.contains("timed out after 1.5 s"), "{}", outcome.for_model);
        let pids = read_pids(&dir.path().join("pids"));
        assert_eq!(pids.len(), 3, "the command did not start its children in time");
        assert!(all_dead(&pids, PROMPT).await, "survivors among {pids:?}");
    }

    #[tokio::test]
    async fn cancellation_kills_the_tree_and_says_so() {
        let (dir, tools) = workspace();
        let context = ctx();
        let cancel = context.cancel.clone();
        let pid_file = dir.path().join("pids");
        let canceller = tokio::spawn(async move {
            wait_for_pids(&pid_file, 3).await;
            cancel.cancel();
        });
        let started = Instant::now();
        let outcome = tools.run("bash", &json!({"command": SLEEPERS}), &context).await;
        canceller.await.unwrap();
        assert!(started.elapsed() < PROMPT);
        assert!(outcome.is_error);
        assert!(outcome.for_model.contains("interrupted by user"), "{}", outcome.for_model);
        let pids = read_pids(&dir.path().join("pids"));
        assert!(all_dead(&pids, PROMPT).await, "survivors among {pids:?}");
    }

    #[tokio::test]
    async fn dropping_the_call_kills_the_tree() {
        let (dir, tools) = workspace();
        let context = ctx();
        let pid_file = dir.path().join("pids");
        let input = json!({"command": SLEEPERS});
        let call = tools.run("bash", &input, &context);
        tokio::select! {
            _ = call => panic!("the sleepers finished"),
            _ = wait_for_pids(&pid_file, 3) => {}
        }
        let pids = read_pids(&pid_file);
        assert_eq!(pids.len(), 3);
        assert!(all_dead(&pids, PROMPT).await, "survivors among {pids:?}");
    }

    /// Children that leave the process group and the session: a plain `setsid`, and a `setsid`
    /// shell whose parent has already exited (an orphan, adopted by the supervisor).
    const ESCAPERS: &str = "setsid sleep 1000 > /dev/null 2>&1 & echo $! >> pids; \
         (setsid bash -c 'echo $$ >> pids; sleep 1000 & echo $! >> pids; wait' \
           > /dev/null 2>&1 &); \
         sleep 1000";

    #[tokio::test]
    async fn timeout_kills_children_that_left_the_session_and_says_so_truly() {
        let (dir, tools) = workspace();
        let outcome = run(&tools, "bash", json!({"command": ESCAPERS, "timeout_ms": 1500})).await;
        assert!(outcome.is_error);
        assert!(
            outcome.for_model.contains("timed out after 1.5 s; it was killed with every process"),
            "{}",
            outcome.for_model
        );
        let pids = read_pids(&dir.path().join("pids"));
        assert_eq!(pids.len(), 3, "the command did not start its children in time");
        assert!(all_dead(&pids, PROMPT).await, "survivors among {pids:?}");
    }

    #[tokio::test]
    async fn interrupt_kills_children_that_left_the_session() {
        let (dir, tools) = workspace();
        let context = ctx();
        let cancel = context.cancel.clone();
        let pid_file = dir.path().join("pids");
        let canceller = tokio::spawn(async move {
            wait_for_pids(&pid_file, 3).await;
            cancel.cancel();
        });
        let outcome = tools.run("bash", &json!({"command": ESCAPERS}), &context).await;
        canceller.await.unwrap();
        assert!(outcome.for_model.contains("killed with every process"), "{}", outcome.for_model);
        let pids = read_pids(&dir.path().join("pids"));
        assert_eq!(pids.len(), 3);
        assert!(all_dead(&pids, PROMPT).await, "survivors among {pids:?}");
    }

    #[tokio::test]
    async fn dropping_the_call_kills_children_that_left_the_session() {
        let (dir, tools) = workspace();
        let context = ctx();
        let pid_file = dir.path().join("pids");
        let input = json!({"command": ESCAPERS});
        let call = tools.run("bash", &input, &context);
        tokio::select! {
            _ = call => panic!("the sleepers finished"),
            _ = wait_for_pids(&pid_file, 3) => {}
        }
        let pids = read_pids(&pid_file);
        assert_eq!(pids.len(), 3);
        assert!(all_dead(&pids, PROMPT).await, "survivors among {pids:?}");
    }

    #[tokio::test]
    async fn commands_have_no_terminal_and_a_session_of_their_own() {
        let (_dir, tools) = workspace();
        // Fields 6 and 7 of the shell's stat line: its session and its controlling terminal.
        let outcome =
            run(&tools, "bash", json!({"command": "cut -d' ' -f6,7 /proc/$$/stat"})).await;
        assert_eq!(outcome.exit_code, Some(0), "{}", outcome.for_model);
        let line = outcome.for_model.split("--- stdout ---\n").nth(1).unwrap().trim().to_owned();
        let (session, tty) = line.split_once(' ').unwrap();
        assert_eq!(tty, "0", "the command has a controlling terminal");
        let ours = nix::unistd::getsid(None).unwrap().as_raw();
        assert_ne!(session.parse::<i32>().unwrap(), ours, "the command shares keel's session");

        let outcome = run(
            &tools,
            "bash",
            json!({"command": "printf '\\e]0;pwned\\a' > /dev/tty && echo reached"}),
        )
        .await;
        assert!(outcome.is_error, "{}", outcome.for_model);
        assert!(!outcome.for_model.contains("reached"), "{}", outcome.for_model);
        assert!(outcome.for_model.contains("/dev/tty"), "{}", outcome.for_model);
    }

    #[tokio::test]
    async fn commands_start_with_no_signal_blocked() {
        let (_dir, tools) = workspace();
        let outcome =
            run(&tools, "bash", json!({"command": "grep SigBlk /proc/self/status"})).await;
        assert!(outcome.for_model.contains("SigBlk:\t0000000000000000"), "{}", outcome.for_model);
    }

    #[tokio::test]
    async fn commands_reading_stdin_get_end_of_file() {
        let (_dir, tools) = workspace();
        let started = Instant::now();
        let outcome = run(
            &tools,
            "bash",
            json!({"command": "cat; read line; echo \"read=$?\"", "timeout_ms": 60000}),
        )
        .await;
        assert!(started.elapsed() < PROMPT);
        assert_eq!(outcome.exit_code, Some(0), "{}", outcome.for_model);
        assert!(outcome.for_model.contains("read=1"), "{}", outcome.for_model);
    }

    #[tokio::test]
    async fn children_holding_the_pipes_do_not_hang_the_tool() {
        let (dir, tools) = workspace();
        let started = Instant::now();
        let outcome =
            run(&tools, "bash", json!({"command": "sleep 1000 & echo $! > pids; echo started"}))
                .await;
        assert!(started.elapsed() < PROMPT, "took {:?}", started.elapsed());
        assert_eq!(outcome.exit_code, Some(0));
        assert!(outcome.for_model.contains("started"));
        assert!(outcome.for_model.contains("background processes"), "{}", outcome.for_model);
        let pids = read_pids(&dir.path().join("pids"));
        assert!(all_dead(&pids, PROMPT).await);
    }

    #[tokio::test]
    async fn background_jobs_with_their_own_output_keep_running() {
        let (dir, tools) = workspace();
        let outcome =
            run(&tools, "bash", json!({"command": "sleep 60 > /dev/null 2>&1 & echo $! > pids"}))
                .await;
        assert_eq!(outcome.exit_code, Some(0), "{}", outcome.for_model);
        let pids = read_pids(&dir.path().join("pids"));
        assert_eq!(pids.len(), 1);
        // Long enough for a supervisor that wrongly took the call's end as keel's death to act.
        tokio::time::sleep(Duration::from_millis(500)).await;
        let alive = !is_dead(pids[0]);
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pids[0]),
            nix::sys::signal::Signal::SIGKILL,
        );
        assert!(alive, "a detached background job was killed: {}", outcome.for_model);
    }

    /// The peak resident memory of this process, in bytes.
    fn peak_memory() -> u64 {
        let status = std::fs::read_to_string("/proc/self/status").unwrap();
        let line = status.lines().find(|line| line.starts_with("VmHWM:")).unwrap();
        let kib: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
        kib * 1024
    }

    #[tokio::test]
    async fn huge_output_is_capped_and_memory_stays_flat() {
        const PRODUCED: u64 = 200_000_000;
        const MEMORY_ALLOWANCE: u64 = 100 * 1024 * 1024;
        let (_dir, tools) = workspace();
        let before = peak_memory();
        let outcome =
            run(&tools, "bash", json!({"command": format!("yes | head -c {PRODUCED}")})).await;
        let after = peak_memory();
        assert_eq!(outcome.exit_code, Some(0));
        assert!(outcome.for_model.len() <= MODEL_OUTPUT_LIMIT, "{}", outcome.for_model.len());
        assert!(outcome.for_display.len() <= DISPLAY_OUTPUT_LIMIT);
        assert!(outcome.for_display.len() > MODEL_OUTPUT_LIMIT);
        let omitted: u64 = outcome
            .for_model
            .split("… ")
            .nth(1)
            .and_then(|rest| rest.split(' ').next())
            .unwrap()
            .parse()
            .unwrap();
        assert!(omitted >= PRODUCED - MODEL_OUTPUT_LIMIT as u64, "{omitted}");
        assert!(omitted < PRODUCED);
        assert!(outcome.for_model.trim_end().ends_with('y'));
        assert!(after < before + MEMORY_ALLOWANCE, "peak memory grew from {before} to {after}");
    }

    #[tokio::test]
    async fn non_utf8_output_is_shown_lossily() {
        let (_dir, tools) = workspace();
        let outcome = run(&tools, "bash", json!({"command": r"printf 'ok\377\376end\n'"})).await;
        assert_eq!(outcome.exit_code, Some(0));
        assert!(outcome.for_model.contains("ok\u{FFFD}\u{FFFD}end"), "{}", outcome.for_model);
    }

    #[tokio::test]
    async fn live_output_arrives_while_the_command_runs() {
        let (_dir, tools) = workspace();
        let (sender, mut receiver) = tokio::sync::mpsc::unbounded_channel();
        let context = ToolContext { cancel: CancellationToken::new(), live_output: Some(sender) };
        let task = tokio::spawn(async move {
            tools
                .run("bash", &json!({"command": "echo first; sleep 2; echo second"}), &context)
                .await
        });
        let first = tokio::time::timeout(PROMPT, receiver.recv()).await.unwrap().unwrap();
        assert!(first.contains("first"), "{first}");
        assert!(!task.is_finished(), "the chunk came only at the end");
        let outcome = task.await.unwrap();
        let mut rest = String::new();
        while let Ok(chunk) = receiver.try_recv() {
            rest.push_str(&chunk);
        }
        assert!(rest.contains("second"), "{rest}");
        assert!(outcome.for_display.contains("first\nsecond"));
    }

    #[tokio::test]
    async fn an_already_interrupted_call_starts_nothing() {
        let (dir, tools) = workspace();
        let context = ctx();
        context.cancel.cancel();
        let outcome = tools.run("bash", &json!({"command": "touch marker"}), &context).await;
        assert!(outcome.is_error);
        assert!(outcome.for_model.contains("interrupted"));
        assert!(!dir.path().join("marker").exists());
    }

    #[tokio::test]
    async fn refused_commands_never_run() {
        let (dir, tools) = workspace();
        let outcome = run(&tools, "bash", json!({"command": "touch marker && sudo ls"})).await;
        assert!(outcome.is_error);
        assert!(outcome.for_model.contains("Refused"), "{}", outcome.for_model);
        assert!(outcome.for_model.contains("sudo"));
        assert!(!dir.path().join("marker").exists());
    }
}

mod files {
    use super::*;

    #[tokio::test]
    async fn read_numbers_lines() {
        let (dir, tools) = workspace();
        std::fs::write(dir.path().join("a.txt"), "alpha\nbeta\r\ngamma").unwrap();
        let outcome = run(&tools, "read_file", json!({"path": "a.txt"})).await;
        assert!(!outcome.is_error, "{}", outcome.for_model);
        assert_eq!(outcome.for_model, "     1\talpha\n     2\tbeta\n     3\tgamma\n");
    }

    #[tokio::test]
    async fn read_honours_offset_and_limit_and_says_more_remains() {
        let (dir, tools) = workspace();
        let text: String = (1..=10).map(|n| format!("line {n}\n")).collect();
        std::fs::write(dir.path().join("ten.txt"), text).unwrap();
        let outcome =
            run(&tools, "read_file", json!({"path": "ten.txt", "offset": 3, "limit": 2})).await;
        assert!(
            outcome.for_model.starts_with("     3\tline 3\n     4\tline 4\n"),
            "{}",
            outcome.for_model
        );
        assert!(!outcome.for_model.contains("line 5"));
        assert!(outcome.for_model.contains("offset 5"), "{}", outcome.for_model);

        let outcome = run(&tools, "read_file", json!({"path": "ten.txt", "offset": 9})).await;
        assert_eq!(outcome.for_model, "     9\tline 9\n    10\tline 10\n");

        let outcome = run(&tools, "read_file", json!({"path": "ten.txt", "offset": 11})).await;
        assert!(outcome.is_error);
        assert!(outcome.for_model.contains("10 lines"), "{}", outcome.for_model);
    }

    #[tokio::test]
    async fn read_refuses_binary_missing_and_folders() {
        let (dir, tools) = workspace();
        std::fs::write(dir.path().join("blob.bin"), b"PK\x03\x04\x00\x00data").unwrap();
        let outcome = run(&tools, "read_file", json!({"path": "blob.bin"})).await;
        assert!(outcome.is_error);
        assert!(outcome.for_model.contains("binary"), "{}", outcome.for_model);

        let outcome = run(&tools, "read_file", json!({"path": "nope.txt"})).await;
        assert!(outcome.is_error);
        assert!(outcome.for_model.contains("does not exist"), "{}", outcome.for_model);

        std::fs::create_dir(dir.path().join("folder")).unwrap();
        let outcome = run(&tools, "read_file", json!({"path": "folder"})).await;
        assert!(outcome.is_error);
        assert!(outcome.for_model.contains("directory"));
    }

    #[tokio::test]
    async fn read_of_a_huge_file_stops_early_and_cuts_long_lines() {
        let (dir, tools) = workspace();
        let path = dir.path().join("big.log");
        let mut text = String::from("short\n");
        text.push_str(&"x".repeat(1_000_000));
        text.push('\n');
        std::fs::write(&path, text).unwrap();
        // Make it a gigabyte (sparse): only the start may be read.
        let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        file.set_len(1 << 30).unwrap();
        let started = Instant::now();
        let outcome = run(&tools, "read_file", json!({"path": "big.log", "limit": 2})).await;
        assert!(started.elapsed() < PROMPT);
        assert!(!outcome.is_error, "{}", outcome.for_model);
        assert!(outcome.for_model.len() < 10_000, "{}", outcome.for_model.len());
        assert!(outcome.for_model.contains("line cut: 1000000 bytes"));
        assert!(outcome.for_model.contains("continue with offset 3"));
    }

    #[tokio::test]
    async fn write_creates_parents_and_records_the_change() {
        let (dir, tools) = workspace();
        let outcome =
            run(&tools, "write_file", json!({"path": "deep/er/new.txt", "content": "hello\n"}))
                .await;
        assert!(!outcome.is_error, "{}", outcome.for_model);
        assert!(outcome.for_model.contains("6 bytes"), "{}", outcome.for_model);
        let path = dir.path().join("deep/er/new.txt");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "hello\n");
        assert_eq!(outcome.changes.len(), 1);
        assert_eq!(outcome.changes[0].before, None);
        assert_eq!(outcome.changes[0].after, b"hello\n");
        assert_eq!(outcome.changes[0].path, path.canonicalize().unwrap());

        let outcome =
            run(&tools, "write_file", json!({"path": "deep/er/new.txt", "content": "bye\n"})).await;
        assert_eq!(outcome.changes[0].before.as_deref(), Some(&b"hello\n"[..]));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "bye\n");

        let outcome =
            run(&tools, "write_file", json!({"path": "deep/er/new.txt", "content": "bye\n"})).await;
        assert!(!outcome.is_error);
        assert!(outcome.changes.is_empty(), "an unchanged file needs no undo");
    }

    #[tokio::test]
    async fn edit_replaces_exactly_one_occurrence() {
        let (dir, tools) = workspace();
        let path = dir.path().join("code.rs");
        std::fs::write(&path, "fn a() {}\nfn b() {}\n").unwrap();
        let outcome = run(
            &tools,
            "edit_file",
            json!({"path": "code.rs", "old_text": "fn b() {}", "new_text": "fn c() {}"}),
        )
        .await;
        assert!(!outcome.is_error, "{}", outcome.for_model);
        assert!(outcome.for_model.contains("line 2"), "{}", outcome.for_model);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "fn a() {}\nfn c() {}\n");
        assert_eq!(outcome.changes[0].before.as_deref(), Some(&b"fn a() {}\nfn b() {}\n"[..]));
        assert_eq!(outcome.changes[0].after, b"fn a() {}\nfn c() {}\n");
    }

    #[tokio::test]
    async fn edit_fails_on_zero_or_many_matches_and_leaves_the_file() {
        let (dir, tools) = workspace();
        let path = dir.path().join("code.rs");
        std::fs::write(&path, "x = 1\nx = 1\nx = 1\n").unwrap();
        let outcome = run(
            &tools,
            "edit_file",
            json!({"path": "code.rs", "old_text": "y = 2", "new_text": "z"}),
        )
        .await;
        assert!(outcome.is_error);
        assert!(outcome.for_model.contains("not found"), "{}", outcome.for_model);

        let outcome = run(
            &tools,
            "edit_file",
            json!({"path": "code.rs", "old_text": "x = 1", "new_text": "z"}),
        )
        .await;
        assert!(outcome.is_error);
        assert!(outcome.for_model.contains("occurs 3 times"), "{}", outcome.for_model);
        assert!(outcome.changes.is_empty());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "x = 1\nx = 1\nx = 1\n");

        let outcome = run(
            &tools,
            "edit_file",
            json!({"path": "missing.rs", "old_text": "a", "new_text": "b"}),
        )
        .await;
        assert!(outcome.is_error);
        assert!(outcome.for_model.contains("does not exist"));
    }
}

mod registry {
    use super::*;

    #[test]
    fn specs_name_the_four_tools_with_object_schemas() {
        let (_dir, tools) = workspace();
        let specs = tools.specs();
        let names: Vec<&str> = specs.iter().map(|spec| spec.name.as_str()).collect();
        assert_eq!(names, ["bash", "read_file", "write_file", "edit_file"]);
        for spec in &specs {
            assert_eq!(spec.input_schema["type"], "object");
            assert!(spec.description.len() > 40, "{}", spec.name);
            for required in spec.input_schema["required"].as_array().unwrap() {
                let name = required.as_str().unwrap();
                assert!(spec.input_schema["properties"].get(name).is_some());
            }
        }
    }

    #[tokio::test]
    async fn unknown_tool_lists_the_available_ones() {
        let (_dir, tools) = workspace();
        let outcome = run(&tools, "delete_everything", json!({})).await;
        assert!(outcome.is_error);
        assert!(outcome.for_model.contains("delete_everything"));
        assert!(
            outcome.for_model.contains("bash, read_file, write_file, edit_file"),
            "{}",
            outcome.for_model
        );
    }

    #[tokio::test]
    async fn wrong_arguments_say_which_and_what_was_expected() {
        let (_dir, tools) = workspace();
        let cases = [
            (
                "bash",
                json!({"command": 5}),
                "argument `command` must be a string, got the number 5",
            ),
            ("bash", json!({}), "missing required argument `command` (a string)"),
            ("bash", json!({"command": null}), "missing required argument `command`"),
            (
                "bash",
                json!({"command": "ls", "timeout_ms": "10"}),
                "argument `timeout_ms` must be a whole number ≥ 0, got the string \"10\"",
            ),
            (
                "bash",
                json!({"command": "ls", "timeout_ms": -1}),
                "`timeout_ms` must be a whole number",
            ),
            (
                "read_file",
                json!({"path": "a", "offset": 0}),
                "argument `offset` must be a whole number ≥ 1, got the number 0",
            ),
            (
                "read_file",
                json!({"path": "a", "limit": 1.5}),
                "argument `limit` must be a whole number ≥ 1",
            ),
            ("read_file", json!(["a.txt"]), "takes a JSON object of arguments, got an array"),
            ("write_file", json!("a.txt"), "got the string \"a.txt\""),
            ("write_file", json!(null), "got null"),
            ("write_file", json!({"path": "a"}), "missing required argument `content`"),
            (
                "edit_file",
                json!({"path": "a", "old_text": {"x": 1}, "new_text": "b"}),
                "argument `old_text` must be a string, got an object",
            ),
        ];
        for (name, input, expected) in cases {
            let outcome = run(&tools, name, input.clone()).await;
            assert!(outcome.is_error, "{name} {input}");
            assert!(outcome.for_model.contains(expected), "{name} {input}: {}", outcome.for_model);
        }
    }

    #[tokio::test]
    async fn hostile_shapes_do_not_panic() {
        let (_dir, tools) = workspace();
        let mut deep = json!("bottom");
        for _ in 0..1000 {
            deep = json!([deep]);
        }
        let huge = "é".repeat(1_000_000);
        for name in ["bash", "read_file", "write_file", "edit_file", "nope"] {
            for input in [
                json!({"path": deep.clone(), "command": deep.clone()}),
                json!({"path": huge, "old_text": "", "new_text": "", "content": 1e308}),
                json!({"path": "x", "offset": u64::MAX, "limit": u64::MAX}),
                json!(i64::MIN),
            ] {
                let outcome = run(&tools, name, input.clone()).await;
                assert!(outcome.is_error, "{name}");
                let _ = Tools::summary(name, &input);
                let _ = preview(&tools, name, &input);
            }
        }
    }

    #[test]
    fn summary_is_one_line() {
        assert_eq!(
            Tools::summary("bash", &json!({"command": "cargo test\ncargo fmt"})),
            "cargo test …"
        );
        assert_eq!(Tools::summary("bash", &json!({"command": "ls -la"})), "ls -la");
        assert_eq!(Tools::summary("edit_file", &json!({"path": "src/lib.rs"})), "src/lib.rs");
        assert_eq!(Tools::summary("read_file", &json!(7)), "read_file");
        assert_eq!(Tools::summary("todo", &json!({"items": []})), "todo");
        let long = "x".repeat(1000);
        assert!(Tools::summary("bash", &json!({ "command": long })).chars().count() < 300);
    }
}

mod previews {
    use super::*;

    #[test]
    fn edit_preview_is_a_unified_diff_and_changes_nothing() {
        let (dir, tools) = workspace();
        let path = dir.path().join("notes.txt");
        std::fs::write(&path, "one\ntwo\nthree\n").unwrap();
        let input = json!({"path": "notes.txt", "old_text": "two", "new_text": "TWO"});
        let diff = preview(&tools, "edit_file", &input).unwrap();
        assert!(diff.contains("--- a/notes.txt"), "{diff}");
        assert!(diff.contains("+++ b/notes.txt"), "{diff}");
        assert!(diff.contains("\n-two\n+TWO\n"), "{diff}");
        assert!(diff.contains(" one\n"), "{diff}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "one\ntwo\nthree\n");
    }

    #[test]
    fn write_preview_of_a_new_file_comes_from_dev_null() {
        let (dir, tools) = workspace();
        let input = json!({"path": "src/new.rs", "content": "fn main() {}\n"});
        let diff = preview(&tools, "write_file", &input).unwrap();
        assert!(diff.contains("--- /dev/null"), "{diff}");
        assert!(diff.contains("+++ b/src/new.rs"), "{diff}");
        assert!(diff.contains("+fn main() {}"), "{diff}");
        assert!(!dir.path().join("src").exists());
    }

    #[test]
    fn no_preview_for_other_tools_or_bad_calls() {
        let (dir, tools) = workspace();
        std::fs::write(dir.path().join("a.txt"), "a a").unwrap();
        assert_eq!(preview(&tools, "bash", &json!({"command": "ls"})), None);
        assert_eq!(preview(&tools, "read_file", &json!({"path": "a.txt"})), None);
        assert_eq!(preview(&tools, "write_file", &json!({"path": 3})), None);
        let ambiguous = json!({"path": "a.txt", "old_text": "a", "new_text": "b"});
        assert_eq!(preview(&tools, "edit_file", &ambiguous), None);
        let outside = json!({"path": "../x", "content": "x"});
        assert_eq!(preview(&tools, "write_file", &outside), None);
    }
}

mod never_panics {
    use super::*;
    use proptest::prelude::*;

    const KEYS: &[&str] =
        &["command", "timeout_ms", "path", "offset", "limit", "content", "old_text", "new_text"];

    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            any::<f64>().prop_map(Value::from),
            "[a-z./ ]{0,12}".prop_map(Value::from),
            any::<String>().prop_map(Value::from),
        ];
        leaf.prop_recursive(4, 32, 6, |inner| {
            let key =
                prop_oneof![proptest::sample::select(KEYS).prop_map(str::to_owned), "[a-z_]{1,8}",];
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                proptest::collection::btree_map(key, inner, 0..6)
                    .prop_map(|map| Value::Object(map.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        /// Decoding any JSON for any tool gives a call or an error, never a panic.
        #[test]
        fn argument_decoding_never_panics(
            name in proptest::sample::select(&["bash", "read_file", "write_file", "edit_file", "x"][..]),
            input in json_value(),
        ) {
            let _ = Tools::parse(name, &input);
            let _ = Tools::summary(name, &input);
        }

        /// The guard reads any text, shell-like or not, without panicking.
        #[test]
        fn guard_never_panics(
            text in prop_oneof![any::<String>(), "[a-z /~$(){}`'\"\\;&|<>=*.:-]{0,60}"],
        ) {
            let _ = guard::check_command(&text);
        }

        /// Running the file tools (bash is left out: it would run random text) on any JSON ends in
        /// an outcome, never a panic, and never writes outside the workspace.
        #[test]
        fn running_file_tools_never_panics(
            name in proptest::sample::select(&["read_file", "write_file", "edit_file", "nope"][..]),
            input in json_value(),
        ) {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            let (_dir, tools) = workspace();
            let _ = preview(&tools, name, &input);
            let outcome = runtime.block_on(tools.run(name, &input, &ctx()));
            for change in &outcome.changes {
                prop_assert!(change.path.starts_with(tools.workspace().root()));
            }
        }
    }
}
