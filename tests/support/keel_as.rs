//! `keel -p` against a scripted model on 127.0.0.1, run as root (as the tests run) or as an
//! unprivileged user (`nobody`), with a private home and a workspace that user owns: what a
//! command may reach differs between the two, so the sandbox's escapes are tried both ways.
//! Homes and workspaces live outside `/tmp`, which a sandboxed command sees as a private folder.

use crate::support::bin;
use crate::support::llm::{FakeLlm, Step};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

/// The user and group an unprivileged run becomes: `nobody` on most systems.
pub const NOBODY: u32 = 65534;

/// Who keel runs as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum User {
    /// The user the tests run as (root here and in CI).
    Root,
    /// `nobody`, when the tests run as root; the tests' own user otherwise.
    Nobody,
}

impl User {
    pub const BOTH: [Self; 2] = [Self::Root, Self::Nobody];
}

/// What a run printed, the tool results the model was sent, in order, and every request whole.
pub struct Run {
    pub output: Output,
    pub results: Vec<String>,
    pub bodies: Vec<Value>,
}

impl Run {
    pub fn stderr(&self) -> String {
        bin::text(&self.output.stderr)
    }

    /// Every tool result, one after the other: for messages that name what was said.
    pub fn all_results(&self) -> String {
        self.results.join("\n---\n")
    }
}

/// Gives `path`, and everything in it, to `nobody` when the run is to be unprivileged.
pub fn give_to(user: User, path: &Path) {
    if user != User::Nobody || !nix::unistd::geteuid().is_root() {
        return;
    }
    let owner = Some(NOBODY);
    std::os::unix::fs::lchown(path, owner, owner).unwrap();
    if path.symlink_metadata().unwrap().is_dir() {
        for entry in std::fs::read_dir(path).unwrap() {
            give_to(user, &entry.unwrap().path());
        }
    }
}

/// Runs `keel -p go` in `work` with `home` as its home, as `user`, against a model that plays
/// `steps`; `adjust` changes the command first. `home` and `work` are given to the user.
pub fn keel_p(
    user: User,
    steps: Vec<Step>,
    home: &Path,
    work: &Path,
    args: &[&str],
    adjust: impl FnOnce(&mut Command),
) -> Run {
    keel_prompt(user, "go", steps, home, work, args, adjust)
}

/// [`keel_p`] with the prompt `prompt`.
pub fn keel_prompt(
    user: User,
    prompt: &str,
    steps: Vec<Step>,
    home: &Path,
    work: &Path,
    args: &[&str],
    adjust: impl FnOnce(&mut Command),
) -> Run {
    give_to(user, home);
    give_to(user, work);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(FakeLlm::start(steps, std::time::Duration::ZERO));
    let mut command = bin::keel(home);
    command
        .args(["-p", prompt, "--approval", "auto", "--workdir"])
        .arg(work)
        .args(args)
        .env("ANTHROPIC_API_KEY", "sk-test")
        .env("ANTHROPIC_BASE_URL", server.anthropic_base());
    if user == User::Nobody && nix::unistd::geteuid().is_root() {
        // std drops the supplementary groups as it changes the user.
        std::os::unix::process::CommandExt::uid(&mut command, NOBODY);
        std::os::unix::process::CommandExt::gid(&mut command, NOBODY);
    }
    adjust(&mut command);
    let output = bin::output_within(&mut command, "keel -p");
    let bodies = runtime.block_on(server.bodies());
    Run { output, results: tool_results(&bodies), bodies }
}

/// The tool results of every request, in order.
pub fn tool_results(bodies: &[Value]) -> Vec<String> {
    bodies
        .iter()
        .filter_map(|body| body["messages"].as_array()?.last().cloned())
        .flat_map(|message| message["content"].as_array().cloned().unwrap_or_default())
        .filter(|block| block["type"] == "tool_result")
        .map(|block| block["content"].as_str().unwrap_or_default().to_owned())
        .collect()
}
