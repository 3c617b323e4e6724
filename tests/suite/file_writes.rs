//! `write_file` and `edit_file` never lose work: writes are atomic, a failure part way leaves the
//! original byte for byte and no temporary file, the mode and owner are kept, and symlinks are
//! written through. The failures are real: a file size limit (`RLIMIT_FSIZE`, standing in for a
//! full disk) and a folder the writer may not create files in, each in a child process so that
//! the limit or the dropped privileges stay out of the other tests.

use crate::support::files;
use files::{CHILD_MARK, ctx, names_in, run, run_in_child, workspace};
use keel::runtime::Workspace;
use keel::tools::Tools;
use serde_json::{Value, json};
use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

/// The workspace the child works in.
const CHILD_WORKSPACE: &str = "KEEL_TEST_CHILD_WORKSPACE";
/// When set, the largest file the child may write, in bytes.
const CHILD_FILE_SIZE_LIMIT: &str = "KEEL_TEST_CHILD_FILE_SIZE_LIMIT";
/// When set, the child gives up root (if it has it) before the call.
const CHILD_UNPRIVILEGED: &str = "KEEL_TEST_CHILD_UNPRIVILEGED";
/// The user and group an unprivileged child becomes: `nobody` on most systems.
const NOBODY: u32 = 65534;
/// The child test, by its name in this binary.
const CHILD_TEST: &str = "suite::file_writes::child_runs_one_call_under_limits";

/// Not a test of its own: the body of the child processes the tests below start. It applies the
/// limits it is given, runs one tool call through `Tools::run` and prints the outcome.
#[test]
#[ignore = "runs only as a child process of the atomic-write tests"]
fn child_runs_one_call_under_limits() {
    let Ok(root) = std::env::var(CHILD_WORKSPACE) else {
        eprintln!("{CHILD_TEST} runs only when a test of file_writes starts it");
        return;
    };
    // The call to make, as `{"name": …, "input": …}`: too large for an environment variable.
    let call: Value = serde_json::from_reader(std::io::stdin()).unwrap();
    if let Ok(limit) = std::env::var(CHILD_FILE_SIZE_LIMIT) {
        use nix::sys::resource::{Resource, setrlimit};
        use nix::sys::signal::{SigSet, Signal};
        // Past the limit the kernel sends SIGXFSZ, which kills by default; blocked (ignoring it
        // takes `unsafe`), it stays pending and the write fails with EFBIG instead. Threads
        // started from here, tokio's blocking pool among them, inherit the mask.
        let mut blocked = SigSet::empty();
        blocked.add(Signal::SIGXFSZ);
        blocked.thread_block().unwrap();
        let limit: u64 = limit.parse().unwrap();
        setrlimit(Resource::RLIMIT_FSIZE, limit, limit).unwrap();
    }
    if std::env::var(CHILD_UNPRIVILEGED).is_ok() && nix::unistd::geteuid().is_root() {
        nix::unistd::setgid(nix::unistd::Gid::from_raw(NOBODY)).unwrap();
        nix::unistd::setuid(nix::unistd::Uid::from_raw(NOBODY)).unwrap();
    }
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let tools = Tools::new(Workspace::new(root).unwrap());
    let name = call["name"].as_str().unwrap();
    let outcome = runtime.block_on(tools.run(name, &call["input"], &ctx()));
    let report = json!({
        "is_error": outcome.is_error,
        "for_model": outcome.for_model,
        "changes": outcome.changes.len(),
    });
    println!("{CHILD_MARK}{report}");
}

/// Runs one call in a child process with the given limits set.
fn call_in_child(root: &Path, name: &str, input: Value, limits: &[(&str, String)]) -> Value {
    let mut env = vec![(CHILD_WORKSPACE, root.display().to_string())];
    env.extend(limits.iter().cloned());
    let call = json!({"name": name, "input": input}).to_string();
    let outcome = run_in_child(CHILD_TEST, &env, &call);
    json!({"is_error": outcome.is_error, "for_model": outcome.for_model, "changes": outcome.changes})
}

mod atomic {
    use super::*;

    const ORIGINAL: &str = "the original content, which must survive\n";
    /// The child may write files up to this size: the new content is far larger.
    const SIZE_LIMIT: u64 = 64 * 1024;

    #[test]
    fn a_write_that_fails_part_way_leaves_the_original_and_no_temporary_file() {
        let (dir, _tools) = workspace();
        let path = dir.path().join("x.txt");
        fs::write(&path, ORIGINAL).unwrap();
        let limit = [(CHILD_FILE_SIZE_LIMIT, SIZE_LIMIT.to_string())];
        let big = "y".repeat(4 * SIZE_LIMIT as usize);
        let outcome = call_in_child(
            dir.path(),
            "write_file",
            json!({"path": "x.txt", "content": big}),
            &limit,
        );
        assert_eq!(outcome["is_error"], true, "{outcome}");
        let message = outcome["for_model"].as_str().unwrap();
        assert!(message.contains("File too large"), "{message}");
        assert!(message.ends_with("`x.txt` was left as it was."), "{message}");
        assert_eq!(outcome["changes"], 0);
        assert_eq!(fs::read_to_string(&path).unwrap(), ORIGINAL);
        assert_eq!(names_in(dir.path()), ["x.txt"]);

        // An edit that grows the file past the limit fails the same way.
        let outcome = call_in_child(
            dir.path(),
            "edit_file",
            json!({"path": "x.txt", "old_text": "original", "new_text": big}),
            &limit,
        );
        assert_eq!(outcome["is_error"], true, "{outcome}");
        assert!(outcome["for_model"].as_str().unwrap().contains("left as it was"), "{outcome}");
        assert_eq!(fs::read_to_string(&path).unwrap(), ORIGINAL);
        assert_eq!(names_in(dir.path()), ["x.txt"]);
    }

    #[test]
    fn a_new_file_that_cannot_be_written_leaves_nothing_not_even_its_folders() {
        let (dir, _tools) = workspace();
        let limit = [(CHILD_FILE_SIZE_LIMIT, SIZE_LIMIT.to_string())];
        let big = "y".repeat(2 * SIZE_LIMIT as usize);
        let outcome = call_in_child(
            dir.path(),
            "write_file",
            json!({"path": "new/deeper/x.txt", "content": big}),
            &limit,
        );
        let message = outcome["for_model"].as_str().unwrap();
        assert!(message.ends_with("`new/deeper/x.txt` was not created."), "{message}");
        assert!(names_in(dir.path()).is_empty(), "{:?}", names_in(dir.path()));
    }

    #[test]
    fn a_folder_where_no_file_can_be_created_leaves_the_original_and_says_so() {
        let (dir, _tools) = workspace();
        let folder = dir.path().join("locked");
        fs::create_dir(&folder).unwrap();
        fs::write(folder.join("x.txt"), ORIGINAL).unwrap();
        // The unprivileged child must be able to reach the file and read it, not add files.
        fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755)).unwrap();
        fs::set_permissions(folder.join("x.txt"), fs::Permissions::from_mode(0o666)).unwrap();
        fs::set_permissions(&folder, fs::Permissions::from_mode(0o555)).unwrap();
        let unprivileged = [(CHILD_UNPRIVILEGED, "1".to_owned())];
        let outcomes = [
            call_in_child(
                dir.path(),
                "write_file",
                json!({"path": "locked/x.txt", "content": "new"}),
                &unprivileged,
            ),
            call_in_child(
                dir.path(),
                "edit_file",
                json!({"path": "locked/x.txt", "old_text": "original", "new_text": "new"}),
                &unprivileged,
            ),
        ];
        fs::set_permissions(&folder, fs::Permissions::from_mode(0o755)).unwrap();
        for outcome in outcomes {
            let message = outcome["for_model"].as_str().unwrap();
            assert_eq!(outcome["is_error"], true, "{message}");
            assert!(
                message.contains("cannot create a temporary file in its folder: Permission denied"),
                "{message}"
            );
            assert!(message.ends_with("`locked/x.txt` was left as it was."), "{message}");
        }
        assert_eq!(fs::read_to_string(folder.join("x.txt")).unwrap(), ORIGINAL);
        assert_eq!(names_in(&folder), ["x.txt"]);
    }

    #[tokio::test]
    async fn the_mode_survives_an_edit_and_a_new_file_gets_the_usual_one() {
        let (dir, tools) = workspace();
        let script = dir.path().join("run.sh");
        fs::write(&script, "#!/bin/sh\necho old\n").unwrap();
        fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).unwrap();
        let secret = dir.path().join("secret.env");
        fs::write(&secret, "TOKEN=1\n").unwrap();
        fs::set_permissions(&secret, fs::Permissions::from_mode(0o600)).unwrap();

        let edit = json!({"path": "run.sh", "old_text": "old", "new_text": "new"});
        let outcome = run(&tools, "edit_file", edit).await;
        assert!(!outcome.is_error, "{}", outcome.for_model);
        assert_eq!(fs::read_to_string(&script).unwrap(), "#!/bin/sh\necho new\n");
        assert_eq!(fs::metadata(&script).unwrap().mode() & 0o7777, 0o755);

        let write = json!({"path": "secret.env", "content": "TOKEN=2\n"});
        assert!(!run(&tools, "write_file", write).await.is_error);
        assert_eq!(fs::metadata(&secret).unwrap().mode() & 0o7777, 0o600);

        let outcome = run(&tools, "write_file", json!({"path": "fresh.txt", "content": "x"})).await;
        assert!(!outcome.is_error, "{}", outcome.for_model);
        let mode = fs::metadata(dir.path().join("fresh.txt")).unwrap().mode() & 0o7777;
        assert_eq!(mode, 0o666 & !umask(), "{mode:o}");
        assert_eq!(names_in(dir.path()), ["fresh.txt", "run.sh", "secret.env"]);
    }

    /// This process's umask, as the kernel reports it (reading it this way changes nothing).
    fn umask() -> u32 {
        let status = fs::read_to_string("/proc/self/status").unwrap();
        let line = status.lines().find(|line| line.starts_with("Umask:")).unwrap();
        u32::from_str_radix(line.split_whitespace().nth(1).unwrap(), 8).unwrap()
    }

    #[tokio::test]
    async fn the_owner_survives_a_write() {
        let (dir, tools) = workspace();
        let path = dir.path().join("owned.txt");
        fs::write(&path, "before\n").unwrap();
        if nix::unistd::geteuid().is_root() {
            // Root can hand the file to someone else, and must hand the new one back.
            std::os::unix::fs::chown(&path, Some(NOBODY), Some(NOBODY)).unwrap();
        }
        let before = fs::metadata(&path).unwrap();
        let outcome = run(&tools, "write_file", json!({"path": "owned.txt", "content": "after\n"}));
        assert!(!outcome.await.is_error);
        let after = fs::metadata(&path).unwrap();
        assert_ne!(after.ino(), before.ino(), "the file was written in place, not replaced");
        assert_eq!((after.uid(), after.gid()), (before.uid(), before.gid()));
    }

    #[tokio::test]
    async fn writing_through_a_symlink_replaces_its_target_and_keeps_the_link() {
        let (dir, tools) = workspace();
        fs::create_dir(dir.path().join("real")).unwrap();
        fs::write(dir.path().join("real/notes.txt"), "one\n").unwrap();
        std::os::unix::fs::symlink("real/notes.txt", dir.path().join("link.txt")).unwrap();
        std::os::unix::fs::symlink("real", dir.path().join("alias")).unwrap();

        let outcome = run(&tools, "write_file", json!({"path": "link.txt", "content": "two\n"}));
        let outcome = outcome.await;
        assert!(!outcome.is_error, "{}", outcome.for_model);
        let real = dir.path().join("real/notes.txt").canonicalize().unwrap();
        assert_eq!(outcome.changes[0].path, real);
        let edit = json!({"path": "alias/notes.txt", "old_text": "two", "new_text": "three"});
        assert!(!run(&tools, "edit_file", edit).await.is_error);

        let link = fs::symlink_metadata(dir.path().join("link.txt")).unwrap();
        assert!(link.file_type().is_symlink(), "the link was replaced by a file");
        assert_eq!(
            fs::read_link(dir.path().join("link.txt")).unwrap(),
            Path::new("real/notes.txt")
        );
        assert!(fs::symlink_metadata(dir.path().join("alias")).unwrap().file_type().is_symlink());
        assert_eq!(fs::read_to_string(&real).unwrap(), "three\n");
        assert_eq!(names_in(&dir.path().join("real")), ["notes.txt"]);
    }
}
