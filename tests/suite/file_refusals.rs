//! What the file tools refuse, and that refusing is prompt and harmless: writes into `.git/` and
//! the workspace's `.keel/` (by any path, symlinks and case variations included), and FIFOs,
//! sockets and devices, which would make a read or the approval preview wait forever.

use crate::support::files;
use files::{PROMPT, names_in, run, workspace};
use keel::runtime::Workspace;
use keel::tools::Tools;
use keel::tools::preview::preview_named;
use serde_json::{Value, json};
use std::fs;
use std::os::unix::fs::{FileTypeExt, symlink};
use std::path::Path;

/// Runs `job` on its own thread and fails the test, instead of hanging it, if it blocks.
fn promptly<T: Send + 'static>(what: &str, job: impl FnOnce() -> T + Send + 'static) -> T {
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || sender.send(job()));
    receiver
        .recv_timeout(PROMPT)
        .unwrap_or_else(|_| panic!("{what} did not return within {PROMPT:?}: it is blocked"))
}

/// The three ways to change a file, each aimed at `path`.
fn writes(path: &str) -> [(&'static str, Value); 2] {
    [
        ("write_file", json!({"path": path, "content": "pwned\n"})),
        ("edit_file", json!({"path": path, "old_text": "a", "new_text": "pwned"})),
    ]
}

mod protected {
    use super::*;

    /// A workspace holding a repository's files, a nested repository and a submodule.
    fn repository() -> (tempfile::TempDir, Tools) {
        let (dir, tools) = workspace();
        let root = dir.path();
        for folder in [".git/hooks", "vendor/nested/.git", "lib/sub", ".keel", "docs/.keel"] {
            fs::create_dir_all(root.join(folder)).unwrap();
        }
        fs::write(root.join(".git/config"), "[core]\n\tbare = false\n").unwrap();
        fs::write(root.join("vendor/nested/.git/HEAD"), "ref: refs/heads/main\n").unwrap();
        // A submodule's `.git` is a file pointing into the parent's `.git/modules`.
        fs::write(root.join("lib/sub/.git"), "gitdir: ../../.git/modules/sub\n").unwrap();
        fs::write(root.join(".keel/config.toml"), "approval = \"always\"\n").unwrap();
        (dir, tools)
    }

    /// Every write and edit of `path` is refused with a message naming `expected`, and changes
    /// nothing.
    async fn refused(tools: &Tools, root: &Path, path: &str, expected: &str) {
        let before = snapshot(root);
        for (name, input) in writes(path) {
            let outcome = run(tools, name, input.clone()).await;
            assert!(outcome.is_error, "{name} {path} was allowed");
            assert!(outcome.for_model.contains(expected), "{name} {path}: {}", outcome.for_model);
            assert!(outcome.changes.is_empty());
            assert_eq!(preview_named(tools, name, &input), None, "{name} {path} was previewed");
        }
        assert_eq!(snapshot(root), before, "{path} changed something");
    }

    /// Every file under `root` with its content, to see that nothing changed.
    fn snapshot(root: &Path) -> Vec<(String, Option<Vec<u8>>)> {
        let mut files = Vec::new();
        let mut pending = vec![root.to_path_buf()];
        while let Some(folder) = pending.pop() {
            for entry in fs::read_dir(&folder).unwrap() {
                let path = entry.unwrap().path();
                let meta = fs::symlink_metadata(&path).unwrap();
                if meta.is_dir() {
                    pending.push(path.clone());
                }
                let content = meta.is_file().then(|| fs::read(&path).unwrap());
                files.push((path.display().to_string(), content));
            }
        }
        files.sort();
        files
    }

    #[tokio::test]
    async fn writes_into_git_are_refused_and_say_why() {
        let (dir, tools) = repository();
        let outcome = run(&tools, "write_file", json!({"path": ".git/config", "content": "x"}));
        assert_eq!(
            outcome.await.for_model,
            "`.git/config` is inside .git/, which keel never changes: git's own files are not \
             the model's to edit."
        );
        let root = dir.path();
        refused(&tools, root, ".git/config", "inside .git/").await;
        refused(&tools, root, ".git/hooks/pre-commit", "inside .git/").await;
        refused(&tools, root, ".git", ".git/ itself").await;
        refused(&tools, root, "vendor/nested/.git/HEAD", "inside .git/").await;
        refused(&tools, root, "lib/sub/.git", ".git/ itself").await;
        refused(&tools, root, "new/.git/hooks/post-checkout", "inside .git/").await;
        let absolute = root.canonicalize().unwrap().join(".git/config");
        refused(&tools, root, absolute.to_str().unwrap(), "inside .git/").await;
        refused(&tools, root, "./lib/../.git/config", "inside .git/").await;
    }

    #[tokio::test]
    async fn keel_settings_at_the_root_are_refused() {
        let (dir, tools) = repository();
        let root = dir.path();
        refused(&tools, root, ".keel/config.toml", "the person's to edit").await;
        refused(&tools, root, ".keel/new.toml", "inside .keel/").await;
        refused(&tools, root, ".keel", ".keel/ itself").await;
    }

    #[tokio::test]
    async fn symlinks_into_git_or_keel_are_refused_on_their_real_path() {
        let (dir, tools) = repository();
        let root = dir.path();
        symlink(".git", root.join("gitdir")).unwrap();
        symlink(".git/config", root.join("config-link")).unwrap();
        symlink("../.git/hooks", root.join("lib/hooks")).unwrap();
        symlink(".keel", root.join("settings")).unwrap();
        refused(&tools, root, "gitdir/config", "`.git/config` is inside .git/").await;
        refused(&tools, root, "config-link", "`.git/config` is inside .git/").await;
        refused(&tools, root, "lib/hooks/pre-push", "`.git/hooks/pre-push` is inside").await;
        refused(&tools, root, "settings/config.toml", "inside .keel/").await;
    }

    /// On most Linux file systems `.GIT` is a folder of its own, but on case-insensitive ones it
    /// is git's: the rule ignores ASCII case (see `runtime::workspace`).
    #[tokio::test]
    async fn case_variations_are_refused_too() {
        let (dir, tools) = repository();
        let root = dir.path();
        refused(&tools, root, ".GIT/config", "inside .GIT/").await;
        refused(&tools, root, ".Git/hooks/pre-commit", "inside .Git/").await;
        refused(&tools, root, "vendor/nested/.gIt/HEAD", "inside .gIt/").await;
        refused(&tools, root, ".KEEL/config.toml", "inside .KEEL/").await;
    }

    #[tokio::test]
    async fn neighbours_stay_writable_and_git_stays_readable() {
        let (dir, tools) = repository();
        let allowed =
            [".gitignore", ".gitmodules", ".github/workflows/ci.yml", "a.git/x", ".keelrc"];
        for path in allowed.into_iter().chain(["docs/.keel/notes.md", "lib/.git-blame-ignore"]) {
            let outcome = run(&tools, "write_file", json!({"path": path, "content": "a\n"})).await;
            assert!(!outcome.is_error, "{path}: {}", outcome.for_model);
            assert_eq!(fs::read_to_string(dir.path().join(path)).unwrap(), "a\n");
        }
        let outcome = run(&tools, "read_file", json!({"path": ".git/config"})).await;
        assert!(!outcome.is_error, "{}", outcome.for_model);
        assert!(outcome.for_model.contains("bare = false"));
        let outcome = run(&tools, "read_file", json!({"path": ".keel/config.toml"})).await;
        assert!(outcome.for_model.contains("approval"), "{}", outcome.for_model);
    }
}

mod special_files {
    use super::*;
    use std::os::unix::net::UnixListener;

    /// Reading, writing, editing and previewing `path` are all refused at once with `expected`,
    /// and what is there stays what it was.
    async fn refused_at_once(tools: &Tools, root: &Path, path: &str, expected: &str) {
        let kind = |root: &Path| fs::symlink_metadata(root.join(path)).unwrap().file_type();
        let before = kind(root);
        let mut calls = vec![("read_file", json!({"path": path}))];
        calls.extend(writes(path));
        for (name, input) in calls {
            let (call_tools, call_input) = (tools.clone(), input.clone());
            let outcome = promptly(&format!("{name} {path}"), move || {
                let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
                runtime.block_on(call_tools.run(name, &call_input, &files::ctx()))
            });
            assert!(outcome.is_error, "{name} {path} was allowed");
            assert!(outcome.for_model.contains(expected), "{name} {path}: {}", outcome.for_model);
            let (preview_tools, preview_input) = (tools.clone(), input.clone());
            let diff = promptly(&format!("the preview of {name} {path}"), move || {
                preview_named(&preview_tools, name, &preview_input)
            });
            assert_eq!(diff, None);
        }
        assert_eq!(kind(root), before, "{path} was replaced");
    }

    #[tokio::test]
    async fn a_fifo_is_refused_without_waiting_for_a_writer() {
        let (dir, tools) = workspace();
        let mode = nix::sys::stat::Mode::from_bits_truncate(0o644);
        nix::unistd::mkfifo(&dir.path().join("pipe"), mode).unwrap();
        refused_at_once(&tools, dir.path(), "pipe", "`pipe` is a FIFO (named pipe)").await;
        assert!(fs::symlink_metadata(dir.path().join("pipe")).unwrap().file_type().is_fifo());
        assert_eq!(names_in(dir.path()), ["pipe"], "a temporary file was left");
    }

    #[tokio::test]
    async fn a_socket_is_refused() {
        let (dir, tools) = workspace();
        let _listener = UnixListener::bind(dir.path().join("agent.sock")).unwrap();
        refused_at_once(&tools, dir.path(), "agent.sock", "is a socket, not a regular file").await;
    }

    #[tokio::test]
    async fn a_device_behind_a_symlink_is_outside_the_workspace() {
        let (dir, tools) = workspace();
        symlink("/dev/zero", dir.path().join("zero")).unwrap();
        symlink("/dev", dir.path().join("devices")).unwrap();
        refused_at_once(&tools, dir.path(), "zero", "outside the workspace").await;
        refused_at_once(&tools, dir.path(), "devices/null", "outside the workspace").await;
    }

    /// A device inside the workspace: the workspace is `/dev` itself. Only reads and previews run
    /// here, never a write, so nothing in `/dev` can be touched even if the refusal broke.
    #[tokio::test]
    async fn a_device_inside_the_workspace_is_refused_before_it_is_opened() {
        let tools = Tools::new(Workspace::new("/dev").unwrap());
        for device in ["zero", "null", "urandom"] {
            let input = json!({"path": device});
            let outcome = run(&tools, "read_file", input).await;
            assert!(outcome.is_error, "{device}");
            let expected = format!("`{device}` is a character device, not a regular file");
            assert!(outcome.for_model.contains(&expected), "{}", outcome.for_model);
            let write = json!({"path": device, "content": "x"});
            let preview_tools = tools.clone();
            let diff = promptly("the preview of a write onto a device", move || {
                preview_named(&preview_tools, "write_file", &write)
            });
            assert_eq!(diff, None);
        }
    }
}
