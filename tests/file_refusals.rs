#![allow(clippy::unwrap_used, clippy::expect_used)]
//! What the file tools refuse, and that refusing is prompt and harmless: FIFOs, sockets and
//! devices, which would make a read or the approval preview wait forever.

mod file_support;

use file_support::{PROMPT, names_in, run, workspace};
use keel::tools::preview::preview;
use keel::tools::{Tools, Workspace};
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
                runtime.block_on(call_tools.run(name, &call_input, &file_support::ctx()))
            });
            assert!(outcome.is_error, "{name} {path} was allowed");
            assert!(outcome.for_model.contains(expected), "{name} {path}: {}", outcome.for_model);
            let (preview_tools, preview_input) = (tools.clone(), input.clone());
            let diff = promptly(&format!("the preview of {name} {path}"), move || {
                preview(&preview_tools, name, &preview_input)
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
                preview(&preview_tools, "write_file", &write)
            });
            assert_eq!(diff, None);
        }
    }
}
