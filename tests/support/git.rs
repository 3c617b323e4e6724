//! A `git` on `PATH` that runs a shell line of the test's before each call, then the real git.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

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
