//! Where keel keeps a session and who may write it, with the real binary and real files: state
//! outside the workspace (nothing in `git status`), old in-workspace logs moved out once, ids
//! that never name a path, one process per session, `--continue` by the log's own file time, and
//! a log damaged in the middle repaired to its valid prefix with nothing thrown away.

mod repair;

use crate::support::{bin, llm};
use bin::{json_lines, keel, last_result, output_within, sessions};
use keel::agent::journal::{Record, SessionError, SessionStore};
use keel::message::{ContentBlock, Message, Role};
use llm::{FakeLlm, text, tool};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, SystemTime};

fn run_p(server: &FakeLlm, provider: &str, home: &Path, work: &Path, args: &[&str]) -> Output {
    let mut command = keel(home);
    command.args(["--output-format", "json", "--workdir"]).arg(work).args(args);
    match provider {
        "anthropic" => {
            command.env("ANTHROPIC_API_KEY", "k").env("ANTHROPIC_BASE_URL", server.anthropic_base())
        }
        _ => command.env("OPENAI_API_KEY", "k").env("OPENAI_BASE_URL", server.openai_base()),
    };
    output_within(&mut command, "keel -p")
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn git(dir: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"])
        .args(args)
        .current_dir(dir)
        .env("HOME", dir)
        // `git status` would otherwise refresh the index, and the test checks that nothing did.
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .output()
        .unwrap();
    assert!(output.status.success(), "git {args:?}: {}", stderr(&output));
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Every file under `dir` and its bytes.
fn files_under(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut pending = vec![dir.to_owned()];
    while let Some(at) = pending.pop() {
        for entry in std::fs::read_dir(&at).unwrap().flatten() {
            let path = entry.path();
            if entry.file_type().unwrap().is_dir() {
                pending.push(path);
            } else {
                files.insert(path.clone(), std::fs::read(&path).unwrap_or_default());
            }
        }
    }
    files
}

#[tokio::test(flavor = "multi_thread")]
async fn nothing_of_keel_lands_in_the_workspace_and_its_git_is_never_touched() {
    let (home, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    git(work.path(), &["init", "-q"]);
    std::fs::write(work.path().join("app.txt"), "v1\n").unwrap();
    git(work.path(), &["add", "app.txt"]);
    git(work.path(), &["commit", "-q", "-m", "first"]);
    let git_before = files_under(&work.path().join(".git"));

    let looking = FakeLlm::start(
        vec![
            tool("read_file", json!({"path": "app.txt"})),
            tool("bash", json!({"command": "ls -la > /dev/null"})),
            text("Looked."),
        ],
        Duration::ZERO,
    )
    .await;
    let output = run_p(&looking, "anthropic", home.path(), work.path(), &["-p", "Look around."]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(git(work.path(), &["status", "--porcelain", "--ignored"]), "");

    let changing = FakeLlm::start(
        vec![
            tool("write_file", json!({"path": "new.txt", "content": "x\n"})),
            tool("bash", json!({"command": "echo v2 > app.txt"})),
            text("Changed."),
        ],
        Duration::ZERO,
    )
    .await;
    let output = run_p(&changing, "openai", home.path(), work.path(), &["-p", "Change it."]);
    assert!(output.status.success(), "{}", stderr(&output));
    let status = git(work.path(), &["status", "--porcelain", "--ignored"]);
    assert_eq!(status, " M app.txt\n?? new.txt\n", "only the model's own work shows");

    let undo =
        output_within(keel(home.path()).args(["undo", "--workdir"]).arg(work.path()), "undo");
    assert!(undo.status.success(), "{}", stderr(&undo));
    assert_eq!(git(work.path(), &["status", "--porcelain", "--ignored"]), "", "all undone");
    assert_eq!(
        files_under(&work.path().join(".git")),
        git_before,
        "the workspace's .git is untouched"
    );

    // The state is in the home's state folder: one folder for this workspace, naming it.
    let store = sessions(home.path(), work.path());
    assert_eq!(store.list().unwrap().len(), 2);
    let named = std::fs::read_to_string(store.dir().join("workspace")).unwrap();
    assert_eq!(Path::new(&named), work.path().canonicalize().unwrap());
    assert!(store.dir().starts_with(home.path().join(".local/state/keel/workspaces")));
}

#[tokio::test(flavor = "multi_thread")]
async fn xdg_state_home_decides_where_sessions_go() {
    let (home, work, state) =
        (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let server = FakeLlm::start(vec![text("hi")], Duration::ZERO).await;
    let mut command = keel(home.path());
    command
        .args(["-p", "hello", "--workdir"])
        .arg(work.path())
        .env("XDG_STATE_HOME", state.path())
        .env("ANTHROPIC_API_KEY", "k")
        .env("ANTHROPIC_BASE_URL", server.anthropic_base());
    let output = output_within(&mut command, "keel -p");
    assert!(output.status.success(), "{}", stderr(&output));
    let store = SessionStore::new(&state.path().join("keel"), &work.path().canonicalize().unwrap());
    assert_eq!(store.list().unwrap().len(), 1);
    assert!(!home.path().join(".local").exists());
    assert_eq!(std::fs::read_dir(work.path()).unwrap().count(), 0);
}

/// A log as an older keel wrote it in the workspace (its `turn` record had no snapshot).
fn legacy_log(prompt: &str) -> String {
    [
        json!({"type": "start", "id": "1700000000-abcd", "started_at": 1_700_000_000}),
        json!({"type": "turn"}),
        json!({"type": "message", "message": {"role": "user", "content": [{"type": "text", "text": prompt}]}}),
        json!({"type": "message", "message": {"role": "assistant", "content": [{"type": "text", "text": "old answer"}]}}),
    ]
    .iter()
    .map(|record| format!("{record}\n"))
    .collect()
}

#[test]
fn old_session_logs_in_the_workspace_are_moved_out_once_saying_so() {
    let (home, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let legacy = work.path().join(".keel/sessions");
    std::fs::create_dir_all(&legacy).unwrap();
    std::fs::write(work.path().join(".keel/config.toml"), "nag_threshold = 5\n").unwrap();
    let log = legacy_log("an old prompt");
    std::fs::write(legacy.join("1700000000-abcd.jsonl"), &log).unwrap();

    let listing = |what: &str| {
        output_within(keel(home.path()).args(["sessions", "--workdir"]).arg(work.path()), what)
    };
    let first = listing("keel sessions");
    assert!(first.status.success(), "{}", stderr(&first));
    assert!(
        stderr(&first).contains("moved 1 session log from .keel/sessions"),
        "{}",
        stderr(&first)
    );
    let stdout = String::from_utf8_lossy(&first.stdout);
    assert!(stdout.contains("1700000000-abcd") && stdout.contains("an old prompt"), "{stdout}");
    assert!(!legacy.exists(), "the emptied sessions folder is gone");
    assert!(work.path().join(".keel/config.toml").exists(), "the person's settings stay");
    let store = sessions(home.path(), work.path());
    let moved = std::fs::read_to_string(store.sessions_dir().join("1700000000-abcd.jsonl"));
    assert_eq!(moved.unwrap(), log, "moved byte for byte");

    let second = listing("keel sessions again");
    assert!(!stderr(&second).contains("moved"), "only once: {}", stderr(&second));
    assert!(String::from_utf8_lossy(&second.stdout).contains("an old prompt"));

    // An old log whose id is saved already stays where it is, and neither copy changes.
    std::fs::create_dir_all(&legacy).unwrap();
    let other = legacy_log("another prompt");
    std::fs::write(legacy.join("1700000000-abcd.jsonl"), &other).unwrap();
    let third = listing("keel sessions with a clash");
    assert!(third.status.success(), "{}", stderr(&third));
    assert!(
        stderr(&third).contains("a session 1700000000-abcd is already saved"),
        "{}",
        stderr(&third)
    );
    assert!(!stderr(&third).contains("moved"), "nothing moved: {}", stderr(&third));
    assert_eq!(std::fs::read_to_string(legacy.join("1700000000-abcd.jsonl")).unwrap(), other);
    let saved = std::fs::read_to_string(store.sessions_dir().join("1700000000-abcd.jsonl"));
    assert_eq!(saved.unwrap(), log);
}

#[test]
fn a_symlinked_legacy_folder_or_log_is_left_where_it_is() {
    let (home, work, elsewhere) =
        (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    std::fs::write(elsewhere.path().join("1700000000-abcd.jsonl"), legacy_log("not mine")).unwrap();
    std::fs::create_dir_all(work.path().join(".keel")).unwrap();
    std::os::unix::fs::symlink(elsewhere.path(), work.path().join(".keel/sessions")).unwrap();
    let output = output_within(
        keel(home.path()).args(["sessions", "--workdir"]).arg(work.path()),
        "keel sessions",
    );
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(elsewhere.path().join("1700000000-abcd.jsonl").exists(), "nothing moved through it");
    assert!(sessions(home.path(), work.path()).list().unwrap().is_empty());

    // A log that is itself a symlink stays too, and says why.
    std::fs::remove_file(work.path().join(".keel/sessions")).unwrap();
    std::fs::create_dir_all(work.path().join(".keel/sessions")).unwrap();
    std::os::unix::fs::symlink(
        elsewhere.path().join("1700000000-abcd.jsonl"),
        work.path().join(".keel/sessions/1700000001-abcd.jsonl"),
    )
    .unwrap();
    let output = output_within(
        keel(home.path()).args(["sessions", "--workdir"]).arg(work.path()),
        "keel sessions",
    );
    assert!(stderr(&output).contains("not a session log keel wrote"), "{}", stderr(&output));
    assert!(work.path().join(".keel/sessions/1700000001-abcd.jsonl").is_symlink());
}

#[test]
fn resume_takes_a_session_id_never_a_path() {
    let (home, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let store = sessions(home.path(), work.path());
    // Where a path-like id could lead: the workspace, the state folder, the home.
    let targets = [
        work.path().join("x.jsonl"),
        home.path().join("x.jsonl"),
        home.path().join(".local/state/keel/workspaces/x.jsonl"),
    ];
    let outside = targets[1].display().to_string();
    let ids = ["../../x", "../../../../x", "x.jsonl", "..", "a/b", outside.as_str(), ""];
    for id in ids {
        for target in &targets {
            std::fs::create_dir_all(target.parent().unwrap()).unwrap();
            std::fs::write(target, "precious\n").unwrap();
        }
        let mut command = keel(home.path());
        command
            .args(["-p", "--resume", id, "--workdir"])
            .arg(work.path())
            .env("ANTHROPIC_API_KEY", "k")
            .env("ANTHROPIC_BASE_URL", "http://127.0.0.1:9");
        let output = output_within(&mut command, "keel -p --resume");
        assert_eq!(output.status.code(), Some(2), "{id}: {}", stderr(&output));
        assert!(stderr(&output).contains("is not a session id"), "{id}: {}", stderr(&output));
        for target in &targets {
            assert_eq!(std::fs::read_to_string(target).unwrap(), "precious\n", "{id}");
        }
        assert!(!store.dir().exists(), "{id}: nothing was created for the workspace");
    }
}

#[test]
fn a_log_that_is_a_symlink_or_a_fifo_is_never_opened() {
    let (state, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let store = SessionStore::new(state.path(), &work.path().canonicalize().unwrap());
    let real = store.create().unwrap();
    let (real_id, real_path) = (real.id().to_owned(), real.path().to_owned());
    drop(real);
    let before = std::fs::read(&real_path).unwrap();
    let linked = "1700000002-abcd";
    let link = store.sessions_dir().join(format!("{linked}.jsonl"));
    std::os::unix::fs::symlink(&real_path, &link).unwrap();
    let fifo = "1700000003-abcd";
    nix::unistd::mkfifo(
        &store.sessions_dir().join(format!("{fifo}.jsonl")),
        nix::sys::stat::Mode::S_IRWXU,
    )
    .unwrap();
    for id in [linked, fifo] {
        match store.open(id) {
            Err(SessionError::NotFound { id: refused, .. }) => assert_eq!(refused, id),
            other => panic!("{id} was opened: {other:?}"),
        }
    }
    assert_eq!(std::fs::read(&real_path).unwrap(), before, "the log behind the link is untouched");
    assert!(store.open(&real_id).is_ok(), "the log itself opens");
    // What cannot be opened for another reason is that reason, naming the file.
    let folder = "1700000004-abcd";
    let folder_path = store.sessions_dir().join(format!("{folder}.jsonl"));
    std::fs::create_dir(&folder_path).unwrap();
    match store.open(folder) {
        Err(SessionError::Io { path, source }) => {
            assert_eq!((path, source.raw_os_error()), (folder_path, Some(nix::libc::EISDIR)));
        }
        other => panic!("a folder in the log's place: {other:?}"),
    }
    // Only plain files with a session's id are sessions.
    std::fs::write(store.sessions_dir().join("my notes.jsonl"), "").unwrap();
    assert_eq!(store.newest_first().unwrap(), vec![real_id]);
    // A sessions folder that cannot be read is an error naming it, not a list of none.
    let sessions = store.sessions_dir();
    std::fs::remove_dir_all(&sessions).unwrap();
    std::fs::write(&sessions, "").unwrap();
    match store.newest_first() {
        Err(SessionError::Io { path, .. }) => assert_eq!(path, sessions),
        other => panic!("an unreadable sessions folder: {other:?}"),
    }
}

#[test]
fn a_session_is_opened_by_one_holder_at_a_time() {
    let (state, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let store = SessionStore::new(state.path(), &work.path().canonicalize().unwrap());
    let clock = || SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).unwrap().as_secs();
    let before = clock();
    let log = store.create().unwrap();
    let id = log.id().to_owned();
    // Ids sort by when their session started.
    let started: u64 = id.split_once('-').unwrap().0.parse().unwrap();
    assert!((before..=clock()).contains(&started), "{id}");
    match store.open(&id) {
        Err(SessionError::Locked { id: locked, pid }) => {
            assert_eq!((locked, pid), (id.clone(), Some(std::process::id())));
        }
        other => panic!("a second open was not refused: {other:?}"),
    }
    let pid_file = store.sessions_dir().join(format!("{id}.pid"));
    assert!(pid_file.exists(), "the holder's pid is beside the log");
    drop(log);
    assert!(!pid_file.exists(), "a pid left beside a log nobody holds would mislead");
    assert!(store.open(&id).is_ok(), "the lock goes with the holder");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_second_keel_is_told_which_process_has_the_session() {
    const SLEEP: &str = "sleep 620.5";
    let steps = vec![
        tool("bash", json!({"command": format!("if [ -e hold ]; then rm hold; {SLEEP}; fi")})),
        text("done"),
    ];
    let server = FakeLlm::start(steps, Duration::ZERO).await;
    let (home, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    std::fs::write(work.path().join("hold"), "").unwrap();
    let mut first = keel(home.path());
    first
        .args(["-p", "go", "--output-format", "json", "--workdir"])
        .arg(work.path())
        .env("ANTHROPIC_API_KEY", "k")
        .env("ANTHROPIC_BASE_URL", server.anthropic_base())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut first = first.spawn().unwrap();
    let mut lines = BufReader::new(first.stdout.take().unwrap()).lines();
    while !lines.next().expect("keel ended early").unwrap().contains("\"tool_start\"") {}
    let store = sessions(home.path(), work.path());
    let id = store.list().unwrap()[0].id.clone();
    let log_path = store.sessions_dir().join(format!("{id}.jsonl"));
    let log_before = std::fs::read(&log_path).unwrap();

    let holder = format!("open in keel process {}", first.id());
    for args in [&["-p", "--continue"][..], &["-p", "more", "--resume", &id]] {
        let output = run_p(&server, "anthropic", home.path(), work.path(), args);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {}", stderr(&output));
        assert!(stderr(&output).contains(&holder), "{args:?}: {}", stderr(&output));
    }
    let undo =
        output_within(keel(home.path()).args(["undo", "--workdir"]).arg(work.path()), "undo");
    assert_eq!(undo.status.code(), Some(2), "{}", stderr(&undo));
    assert!(
        stderr(&undo).contains(&holder) && stderr(&undo).contains("/undo"),
        "{}",
        stderr(&undo)
    );
    let output = run_p(&server, "anthropic", home.path(), work.path(), &["-p", "--continue"]);
    assert!(stderr(&output).contains("Leave out --continue"), "{}", stderr(&output));
    assert_eq!(std::fs::read(&log_path).unwrap(), log_before, "the refused runs wrote nothing");

    first.kill().unwrap(); // SIGKILL: the lock goes with the process.
    first.wait().unwrap();
    let output = run_p(&server, "anthropic", home.path(), work.path(), &["-p", "--continue"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(last_result(&json_lines(&output))["text"], "done");
}
