//! The last line of defence where no sandbox confines a command (`--sandbox off`, or none can be
//! set up and the person said yes): shell commands keel refuses to run, whatever the approval
//! mode. A sandboxed command is not judged here: the kernel decides what it can reach.
//!
//! [`check_command`] refuses the few commands that wreck a machine rather than a project: running
//! as another user, deleting, moving or recursively changing `/`, a system folder or a home
//! folder, overwriting disks and other devices, writing to a terminal or a kernel switch, powering
//! the machine off, fork bombs, killing every process.
//!
//! It judges the command as the shell will run it. The line is parsed by a real bash parser
//! (`brush-parser`); words are expanded the way bash expands them — quotes and `$'…'` decoded,
//! braces, `~`, variables from the environment the command will get and from the command's own
//! assignments, `$(…)` whose output keel can work out (`echo`, `pwd`) — and paths are resolved
//! against the folder the command is in after its `cd`s, then matched, globs included, against
//! the places that must not be touched ([`paths`]). Every `$(…)`, `bash -c` string, `eval`,
//! here-document fed to a shell and interpreter one-liner is checked as a command too; code keel
//! cannot see — a pipe into `sh` or `python3 -` of a download or a decoded payload — is refused.
//! Wrappers (`env`, `nice`, `timeout`, `xargs`, `busybox`, …) are seen through. When in doubt
//! about a destructive form, keel refuses, says why, and leaves it to the person.
//!
//! It is a guard against accidents and the model's mistakes, not a sandbox: a script written to a
//! file and then run by name is not read.

mod braces;
mod builtins;
mod call;
mod expansion;
mod inline;
mod paths;
mod printed_output;
mod programs;
mod walk;
mod words;
mod wrappers;

use crate::runtime::environment;
use call::Scope;
use paths::{Cwd, Places};
use std::path::Path;
use walk::Checker;

/// What a check says: `Err` carries the reason, written for the model to read.
type Verdict = Result<(), String>;

/// The longest command checked: what Linux passes as one argument (`bash -c` takes it as one).
const MAX_COMMAND_BYTES: usize = 128 * 1024;
/// How deeply brackets and compound commands may nest before the command counts as unreadable;
/// bounds the parser's recursion, which must fit a thread's stack.
pub const MAX_NESTING_DEPTH: usize = 32;
/// Words that open a compound command, and those that close one.
const OPENERS: &[&str] = &["if", "case", "for", "while", "until", "select"];
const CLOSERS: &[&str] = &["fi", "esac", "done"];

/// Checks `cmd` as run in the current directory. `Err` carries the reason it is refused.
pub fn check_command(cmd: &str) -> Result<(), String> {
    let cwd = std::env::current_dir().ok();
    check(cmd, cwd.as_deref())
}

/// Checks `cmd` as run in `cwd` (the workspace).
pub fn check_command_in(cmd: &str, cwd: &Path) -> Result<(), String> {
    check(cmd, Some(cwd))
}

fn check(cmd: &str, cwd: Option<&Path>) -> Verdict {
    if cmd.len() > MAX_COMMAND_BYTES {
        return Err(format!(
            "the command is longer than the {MAX_COMMAND_BYTES} bytes bash takes as one argument; \
             write it to a script file and run that"
        ));
    }
    if nesting_depth(cmd) > MAX_NESTING_DEPTH {
        return Err("the command nests brackets or compound commands too deeply to check".into());
    }
    let workspace = cwd.map(|cwd| cwd.to_string_lossy().into_owned());
    let places =
        Places { home: environment::value_for_command("HOME"), workspace: workspace.clone() };
    let mut scope = Scope::new(workspace.map_or(Cwd::Unknown, Cwd::Known));
    let brace_words = std::cell::Cell::new(0);
    Checker { places: &places, depth: 0, brace_words: &brace_words }.script(cmd, &mut scope)
}

/// The deepest nesting of brackets and of `if`, `while`, … blocks, quotes ignored: an upper
/// bound of what the parser will recurse through.
pub fn nesting_depth(cmd: &str) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    let mut word = String::new();
    for c in cmd.chars().chain(std::iter::once(' ')) {
        if c.is_ascii_alphanumeric() || c == '_' {
            word.push(c);
            continue;
        }
        if OPENERS.contains(&word.as_str()) {
            depth += 1;
        } else if CLOSERS.contains(&word.as_str()) {
            depth = depth.saturating_sub(1);
        }
        word.clear();
        match c {
            '(' | '{' | '[' => depth += 1,
            ')' | '}' | ']' => depth = depth.saturating_sub(1),
            _ => {}
        }
        deepest = deepest.max(depth);
    }
    deepest
}
