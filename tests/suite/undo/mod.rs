//! Undo with the real binary and real files: everything a prompt changed comes back, bash's
//! changes included; what git ignores, and whatever someone changed since, is left alone and
//! said so; undo reaches past prompts that changed nothing; without git it falls back to the
//! file records and says what it cannot cover; and no session log — forged in keel's state, or
//! planted in a cloned repository — nor a symlink swapped in later can make it touch anything
//! outside the workspace.

mod hostile;

use crate::support::{bin, llm};
use bin::{keel, output_within, sessions};
use keel::agent::journal::Record;
use keel::runtime::Workspace;
use keel::runtime::change::FileChange;
use keel::runtime::undo::{UndoContext, UndoStack};
use llm::{FakeLlm, Step, text, tool};
use serde_json::json;
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::Path;
use std::process::Output;
use std::time::Duration;

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Runs `keel -p PROMPT` against a server playing `steps`, with `args` added.
async fn run(steps: Vec<Step>, home: &Path, work: &Path, args: &[&str]) -> Output {
    let server = FakeLlm::start(steps, Duration::ZERO).await;
    let mut command = keel(home);
    command
        .args(["--workdir"])
        .arg(work)
        .args(args)
        .env("ANTHROPIC_API_KEY", "k")
        .env("ANTHROPIC_BASE_URL", server.anthropic_base());
    let output = output_within(&mut command, "keel -p");
    assert!(output.status.success(), "{}", stderr(&output));
    output
}

fn undo(home: &Path, work: &Path) -> Output {
    let output = output_within(keel(home).args(["undo", "--workdir"]).arg(work), "keel undo");
    assert!(output.status.success(), "{}", stderr(&output));
    output
}

fn read(path: impl AsRef<Path>) -> String {
    std::fs::read_to_string(path).unwrap()
}

fn mode(path: impl AsRef<Path>) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[tokio::test(flavor = "multi_thread")]
async fn undo_takes_back_what_bash_did_and_leaves_what_git_ignores() {
    let (home, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let w = work.path();
    std::fs::write(w.join("keep.txt"), "keep\n").unwrap();
    std::fs::write(w.join("edit.txt"), "before\n").unwrap();
    std::fs::write(w.join("run.sh"), "#!/bin/sh\n").unwrap();
    std::fs::set_permissions(w.join("run.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(w.join(".gitignore"), "*.log\n").unwrap();
    std::fs::write(w.join("app.log"), "log v1\n").unwrap();
    let command = "rm keep.txt && echo after > edit.txt && echo new > made.txt && \
                   mkdir -p d/e && echo deep > d/e/f.txt && echo 'log v2' > app.log && \
                   chmod -x run.sh";
    let steps = vec![tool("bash", json!({ "command": command })), text("Done.")];
    run(steps, home.path(), w, &["-p", "Rearrange things."]).await;
    assert!(!w.join("keep.txt").exists());

    let said = stdout(&undo(home.path(), w));
    for line in [
        "restored edit.txt",
        "re-created keep.txt",
        "restored run.sh",
        "deleted made.txt",
        "deleted d/e/f.txt",
    ] {
        assert!(said.contains(line), "{line:?} missing from:\n{said}");
    }
    assert!(!said.contains("app.log"), "what git ignores is not undo's: {said}");
    assert_eq!(read(w.join("keep.txt")), "keep\n");
    assert_eq!(read(w.join("edit.txt")), "before\n");
    assert_eq!(mode(w.join("run.sh")), 0o755, "the mode comes back too");
    assert!(!w.join("made.txt").exists());
    assert!(!w.join("d").exists(), "folders the prompt created go when emptied");
    assert_eq!(read(w.join("app.log")), "log v2\n", "ignored files are left alone");
    assert!(stdout(&undo(home.path(), w)).contains("Nothing to undo"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_file_changed_since_the_prompt_is_left_alone_and_said_so() {
    let (home, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let w = work.path();
    std::fs::write(w.join("a.txt"), "a0\n").unwrap();
    std::fs::write(w.join("b.txt"), "b0\n").unwrap();
    let steps =
        vec![tool("bash", json!({"command": "echo a1 > a.txt && echo b1 > b.txt"})), text("Done.")];
    run(steps, home.path(), w, &["-p", "Change both."]).await;
    std::fs::write(w.join("b.txt"), "the person's\n").unwrap();

    let said = stdout(&undo(home.path(), w));
    assert!(said.contains("restored a.txt"), "{said}");
    assert!(said.contains("left b.txt alone: it was changed after that prompt"), "{said}");
    assert_eq!(read(w.join("a.txt")), "a0\n");
    assert_eq!(read(w.join("b.txt")), "the person's\n");
}

#[tokio::test(flavor = "multi_thread")]
async fn undo_reaches_the_last_prompt_that_changed_files_past_chat_only_prompts() {
    let (home, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let w = work.path();
    let first = vec![
        tool("write_file", json!({"path": "w.txt", "content": "written\n"})),
        text("Written."),
        text("Just chatting."),
    ];
    run(first.clone(), home.path(), w, &["-p", "Write it."]).await;
    // A chat-only prompt in the same session, then one in a session of its own.
    run(first, home.path(), w, &["-p", "How are you?", "--continue"]).await;
    run(vec![text("Hello.")], home.path(), w, &["-p", "Hi."]).await;
    assert!(w.join("w.txt").exists());

    let said = stdout(&undo(home.path(), w));
    assert!(said.contains("deleted w.txt"), "{said}");
    assert!(!w.join("w.txt").exists());
    assert!(stdout(&undo(home.path(), w)).contains("Nothing to undo"));
}

/// A bin folder holding only what the commands below need: no git.
fn path_without_git(dir: &Path) -> String {
    // bwrap too: commands still run in the sandbox.
    for program in ["bash", "rm", "bwrap"] {
        let found = std::process::Command::new("sh")
            .args(["-c", &format!("command -v {program}")])
            .output()
            .unwrap();
        let real = String::from_utf8_lossy(&found.stdout).trim().to_owned();
        std::os::unix::fs::symlink(real, dir.join(program)).unwrap();
    }
    dir.display().to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn without_git_undo_falls_back_to_the_file_records_and_says_so() {
    // The programs' folder lies outside /tmp, which the sandbox replaces with a private one.
    let bin = crate::support::files::outside_tmp();
    let (home, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let w = work.path();
    std::fs::write(w.join("gone.txt"), "bash removes this\n").unwrap();
    let server = FakeLlm::start(
        vec![
            tool("write_file", json!({"path": "w.txt", "content": "written\n"})),
            tool("bash", json!({"command": "rm gone.txt"})),
            text("Done."),
        ],
        Duration::ZERO,
    )
    .await;
    let path = path_without_git(bin.path());
    let mut command = keel(home.path());
    command
        .args(["-p", "Go.", "--workdir"])
        .arg(w)
        .env("PATH", &path)
        .env("ANTHROPIC_API_KEY", "k")
        .env("ANTHROPIC_BASE_URL", server.anthropic_base());
    let output = output_within(&mut command, "keel -p without git");
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(!w.join("gone.txt").exists());

    let mut command = keel(home.path());
    command.args(["undo", "--workdir"]).arg(w).env("PATH", &path);
    let said = stdout(&output_within(&mut command, "keel undo without git"));
    assert!(said.contains("deleted w.txt"), "{said}");
    assert!(said.contains("not what bash did"), "{said}");
    assert!(!w.join("w.txt").exists());
    assert!(!w.join("gone.txt").exists(), "bash's change is beyond the records");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_persons_git_settings_never_touch_a_snapshot() {
    let (home, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let w = work.path();
    let marker = home.path().join("filter-ran");
    // A filter in the person's own git config, which the workspace's attributes name: git-lfs
    // works this way, and a cloned repository chooses the attributes.
    std::fs::write(
        home.path().join(".gitconfig"),
        format!("[filter \"evil\"]\n\tclean = \"touch '{}'; tr a-z A-Z\"\n", marker.display()),
    )
    .unwrap();
    std::fs::write(w.join(".gitattributes"), "* filter=evil text=auto eol=lf\n").unwrap();
    std::fs::write(w.join("crlf.txt"), "one\r\ntwo\r\n").unwrap();
    let steps =
        vec![tool("bash", json!({"command": "printf 'changed\\n' > crlf.txt"})), text("Done.")];
    run(steps, home.path(), w, &["-p", "Change it."]).await;
    undo(home.path(), w);
    assert_eq!(std::fs::read(w.join("crlf.txt")).unwrap(), b"one\r\ntwo\r\n", "byte for byte");
    assert!(!marker.exists(), "the person's filter never ran");
}

/// A `git` first on the PATH that writes each subcommand it runs to `log`, then runs git.
fn path_with_counted_git(bin: &Path, log: &Path) -> String {
    let found = std::process::Command::new("sh").args(["-c", "command -v git"]).output().unwrap();
    let real = String::from_utf8_lossy(&found.stdout).trim().to_owned();
    assert!(!real.is_empty(), "these tests need git");
    let script = format!("#!/bin/sh\necho \"$1\" >> '{}'\nexec '{real}' \"$@\"\n", log.display());
    std::fs::write(bin.join("git"), script).unwrap();
    std::fs::set_permissions(bin.join("git"), std::fs::Permissions::from_mode(0o755)).unwrap();
    format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default())
}

#[tokio::test(flavor = "multi_thread")]
async fn git_runs_only_for_the_turns_that_run_a_command() {
    let (home, work, bin) =
        (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let w = work.path();
    std::fs::write(w.join("a.txt"), "read me\n").unwrap();
    let log = bin.path().join("git.log");
    let path = path_with_counted_git(bin.path(), &log);
    let steps = vec![
        tool("read_file", json!({"path": "a.txt"})),
        text("Read."),
        tool("write_file", json!({"path": "d/e/w.txt", "content": "written\n"})),
        tool("edit_file", json!({"path": "a.txt", "old_text": "read", "new_text": "edited"})),
        text("Written."),
        tool("bash", json!({"command": "echo ran > b.txt"})),
        text("Ran."),
    ];
    let server = FakeLlm::start(steps, Duration::ZERO).await;
    let mut runs = Vec::new();
    for args in [
        ["-p", "Read a.txt."].as_slice(),
        &["-p", "Write w.txt.", "--continue"],
        &["-p", "Run it.", "--continue"],
    ] {
        let mut command = keel(home.path());
        command
            .args(["--workdir"])
            .arg(w)
            .args(args)
            .env("PATH", &path)
            .env("ANTHROPIC_API_KEY", "k")
            .env("ANTHROPIC_BASE_URL", server.anthropic_base());
        let output = output_within(&mut command, "keel -p with a counted git");
        assert!(output.status.success(), "{}", stderr(&output));
        runs.push(std::fs::read_to_string(&log).unwrap_or_default());
        let _ = std::fs::remove_file(&log);
    }
    // The file tools' records undo them exactly: only a command needs the workspace snapshotted,
    // once before it and once after the turn (the repository is made without `git init`).
    let snapshot = "add\nwrite-tree\n";
    assert_eq!(runs[0], "", "a turn that only read");
    assert_eq!(runs[1], "", "a turn that wrote and edited");
    assert_eq!(runs[2], snapshot.repeat(2), "a turn that ran a command");

    let undo = |what: &str| {
        let mut command = keel(home.path());
        command.args(["undo", "--workdir"]).arg(w).env("PATH", &path);
        stdout(&output_within(&mut command, what))
    };
    let said = undo("keel undo of the command");
    assert!(said.contains("deleted b.txt"), "{said}");
    assert!(w.join("d/e/w.txt").exists(), "the turn before is not this undo's");
    let said = undo("keel undo of the writes");
    assert!(said.contains("deleted d/e/w.txt") && said.contains("restored a.txt"), "{said}");
    assert!(!said.contains("not what bash did"), "the records are the whole turn: {said}");
    assert!(!w.join("d").exists(), "the folders the write made go with it");
    assert_eq!(read(w.join("a.txt")), "read me\n");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_turn_that_writes_then_runs_a_command_is_undone_whole() {
    let (home, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let w = work.path();
    std::fs::write(w.join("a.txt"), "v0\n").unwrap();
    let steps = vec![
        tool("write_file", json!({"path": "a.txt", "content": "v1\n"})),
        tool("write_file", json!({"path": "new/n.txt", "content": "new\n"})),
        tool("bash", json!({"command": "echo v2 > a.txt && echo c > c.txt && rm new/n.txt"})),
        tool("write_file", json!({"path": "late.txt", "content": "late\n"})),
        text("Done."),
    ];
    run(steps, home.path(), w, &["-p", "Change things."]).await;
    assert_eq!(read(w.join("a.txt")), "v2\n");

    let said = stdout(&undo(home.path(), w));
    assert_eq!(read(w.join("a.txt")), "v0\n", "the command's change, then the write before it");
    for gone in ["c.txt", "late.txt", "new"] {
        assert!(!w.join(gone).exists(), "{gone} is still there: {said}");
    }
    assert_eq!(said.matches("a.txt").count(), 1, "each path is reported once: {said}");
    assert!(said.contains("restored a.txt") && said.contains("deleted c.txt"), "{said}");
    assert!(!said.contains("not what bash did"), "{said}");
}

#[test]
fn a_forged_folder_count_never_removes_the_workspace() {
    let dir = tempfile::tempdir().unwrap();
    let workspace = Workspace::new(dir.path()).unwrap();
    std::fs::create_dir(workspace.root().join("x")).unwrap();
    let path = workspace.root().join("x/y.txt");
    std::fs::write(&path, "made\n").unwrap();
    let mut stack = UndoStack::default();
    stack.begin_turn(None);
    let change = FileChange {
        path,
        after: b"made\n".to_vec(),
        created_folders: 99,
        ..FileChange::default()
    };
    stack.record([change]);
    let report = stack.undo(UndoContext { workspace: &workspace, shadow: None });
    assert_eq!(report.deleted, vec!["x/y.txt".to_owned()]);
    assert!(!workspace.root().join("x").exists(), "the folder the write made goes");
    assert!(workspace.root().is_dir(), "the workspace itself stays, whatever the log says");
}

/// `/undo` inside a saved session takes back what bash did, from the session's own shadow
/// repository; after `/clear` the new conversation is saved to a log of its own.
#[tokio::test(flavor = "multi_thread")]
async fn undo_in_the_session_covers_bash_and_clear_saves_the_next_conversation_apart() {
    use keel::agent::journal::SessionStore;
    use keel::agent::{self, AgentEvent, Command, Entry, Sessions};
    use keel::llm::Provider;
    use keel::llm::scripted::ScriptedProvider;
    use keel::tools::Tools;
    const WAIT: Duration = Duration::from_secs(30);

    keel::runtime::supervisor::set_program(crate::support::bin::program());
    let (state, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let store = SessionStore::new(state.path(), &work.path().canonicalize().unwrap());
    let script = json!({
        "prompt": "go",
        "finished": "finished",
        "steps": [
            {"text": "", "tools": [{"name": "bash", "input": {"command": "echo made > made.txt"}}]},
            {"text": "made it"},
            {"text": "a new conversation"},
        ],
    });
    let provider = ScriptedProvider::from_json(&script.to_string(), Duration::ZERO).unwrap();
    let tools = Tools::new(Workspace::new(work.path()).unwrap());
    let config = agent::AgentConfig::default();
    let mut handle = agent::spawn_with_session(
        config,
        Some(Provider::Scripted(provider)),
        tools,
        Sessions::New(store.clone()),
    );
    let until_result = async |handle: &mut agent::AgentHandle| loop {
        let event = tokio::time::timeout(WAIT, handle.events.recv()).await.unwrap().unwrap();
        if matches!(event, AgentEvent::Result { .. }) {
            return;
        }
    };
    handle.commands.send(Command::Submit("go".into())).unwrap();
    until_result(&mut handle).await;
    assert!(work.path().join("made.txt").exists());

    handle.commands.send(Command::Undo).unwrap();
    let undone = tokio::time::timeout(WAIT, async {
        loop {
            let snapshot = handle.snapshots.recv().await.unwrap();
            if let Some(Entry::Notice { text }) = snapshot.transcript.last()
                && text.starts_with("Undid")
            {
                return text.clone();
            }
        }
    })
    .await
    .unwrap();
    assert!(undone.contains("deleted made.txt"), "{undone}");
    assert!(!work.path().join("made.txt").exists(), "{undone}");

    handle.commands.send(Command::Clear).unwrap();
    handle.commands.send(Command::Submit("again".into())).unwrap();
    until_result(&mut handle).await;
    handle.commands.send(Command::Quit).unwrap();
    tokio::time::timeout(WAIT, handle.task).await.unwrap().unwrap();
    assert_eq!(store.list().unwrap().len(), 2, "the cleared conversation and the new one");
}
