//! A `git` on `PATH` that runs a shell line of the test's before each call, then the real git;
//! and `keel -p` turns run with one that logs what git ran, then `keel undo`.

use crate::support::bin::{keel, output_within};
use crate::support::llm::{FakeLlm, Step};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

/// A `PATH` whose `git` (written into `bin`) runs `prelude` (a shell line; `$1` is git's
/// subcommand) before the real `git`.
pub fn path_with_git_doing(bin: &Path, prelude: &str) -> String {
    let found = std::process::Command::new("sh").args(["-c", "command -v git"]).output().unwrap();
    let real = String::from_utf8_lossy(&found.stdout).trim().to_owned();
    assert!(!real.is_empty(), "these tests need git");
    let script = format!("#!/bin/sh\n{prelude}\nexec '{real}' \"$@\"\n");
    std::fs::write(bin.join("git"), script).unwrap();
    std::fs::set_permissions(bin.join("git"), std::fs::Permissions::from_mode(0o755)).unwrap();
    format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default())
}

/// Runs one `keel -p` turn per prompt in `work`, each continuing the session, against a server
/// playing `steps`, with a `git` that logs its subcommands; returns what git ran in each turn,
/// then what `keel undo` said.
pub async fn turns_then_undo(
    steps: Vec<Step>,
    prompts: &[&str],
    work: &Path,
) -> (Vec<String>, String) {
    let (home, bin) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let log = bin.path().join("git.log");
    let path = path_with_git_doing(bin.path(), &format!("echo \"$1\" >> '{}'", log.display()));
    let server = FakeLlm::start(steps, Duration::ZERO).await;
    let mut ran = Vec::new();
    for (turn, prompt) in prompts.iter().enumerate() {
        let mut command = keel(home.path());
        command.args(["--workdir"]).arg(work).args(["-p", prompt]);
        if turn > 0 {
            command.arg("--continue");
        }
        command
            .env("PATH", &path)
            .env("ANTHROPIC_API_KEY", "k")
            .env("ANTHROPIC_BASE_URL", server.anthropic_base());
        let output = output_within(&mut command, "keel -p with a counted git");
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        ran.push(std::fs::read_to_string(&log).unwrap_or_default());
        let _ = std::fs::remove_file(&log);
    }
    let mut command = keel(home.path());
    command.args(["undo", "--workdir"]).arg(work).env("PATH", &path);
    let said =
        String::from_utf8_lossy(&output_within(&mut command, "keel undo").stdout).into_owned();
    (ran, said)
}
