//! The paths of the workspace a hook's command names, read from its words as a shell line's
//! (its quotes taken out): `./check.sh`, `python3 hooks/lint.py`, `"$CLAUDE_PROJECT_DIR"/x.sh`,
//! `$PWD/x.sh`.
//!
//! The files named are what a workspace hook's hash covers and its private copies are made of
//! (`super::reading`), and what commands must not change under a trusted hook (`super::kept`);
//! a person's hook that names any path inside the workspace runs in the sandbox
//! (`super::place`).

use crate::runtime::sandbox::real_path::normalized;
use std::path::{Path, PathBuf};

/// Characters that end a word in a shell line, for finding the files a command names.
const SHELL_BREAKS: &[char] = &[';', '|', '&', '(', ')', '<', '>', '`', '\n', '\t', ' '];
/// Quotes, taken out of a word before it is read as a path (`"$CLAUDE_PROJECT_DIR"/x.sh`).
const QUOTES: [char; 2] = ['"', '\''];
/// Variables that name the workspace in a hook's command: keel's, Claude Code's, and the
/// shell's own (a hook starts in the workspace).
const WORKSPACE_VARS: [&str; 3] = ["KEEL_PROJECT_DIR", "CLAUDE_PROJECT_DIR", "PWD"];

/// The regular files inside `workspace` that `command`'s words name, each once, in order: the
/// word as written and the file.
pub fn named_files(command: &str, workspace: &Path) -> Vec<(String, PathBuf)> {
    let Ok(root) = workspace.canonicalize() else {
        return Vec::new();
    };
    let mut found: Vec<(String, PathBuf)> = Vec::new();
    for word in words(command).iter().map(String::as_str) {
        let expanded = expand_workspace(word, &root).unwrap_or_else(|| PathBuf::from(word));
        let candidate = root.join(&expanded);
        let Ok(file) = candidate.canonicalize() else { continue };
        if !file.starts_with(&root) || !file.is_file() || found.iter().any(|(_, f)| *f == file) {
            continue;
        }
        found.push((word.to_owned(), file));
    }
    found
}

/// Whether `command` names a path inside `workspace`: a file or folder of it that is there, any
/// path below `$KEEL_PROJECT_DIR`, `$CLAUDE_PROJECT_DIR` or `$PWD`, or an absolute path inside
/// it, there or not. A hook of the person's that does runs in the sandbox (`super::place`).
pub fn names_workspace(command: &str, workspace: &Path) -> bool {
    let Ok(root) = workspace.canonicalize() else {
        return false;
    };
    words(command).iter().any(|word| {
        if expand_workspace(word, &root).is_some() {
            return true;
        }
        match root.join(word).canonicalize() {
            Ok(found) => found.starts_with(&root),
            Err(_) => {
                Path::new(word).is_absolute() && normalized(Path::new(word)).starts_with(&root)
            }
        }
    })
}

/// The words of a shell line, its quotes taken out first, as paths may stand in it.
fn words(command: &str) -> Vec<String> {
    let unquoted = command.replace(QUOTES, "");
    unquoted.split(SHELL_BREAKS).filter(|word| !word.is_empty()).map(str::to_owned).collect()
}

/// `word` with a leading `$KEEL_PROJECT_DIR`, `$CLAUDE_PROJECT_DIR` or `$PWD` (braced or not)
/// as `root`; `None` when it has none.
fn expand_workspace(word: &str, root: &Path) -> Option<PathBuf> {
    for name in WORKSPACE_VARS {
        for form in [format!("${{{name}}}"), format!("${name}")] {
            if let Some(rest) = word.strip_prefix(&form)
                && (rest.is_empty() || rest.starts_with('/'))
            {
                return Some(root.join(rest.trim_start_matches('/')));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::testing::{files, folder};

    #[test]
    fn the_files_a_command_names_are_found_however_it_names_them() {
        let (_dir, root) = folder();
        files(&root, &[("hooks/a.py", "print()"), ("check.sh", "exit 0")]);
        let files = named_files(
            "python3 hooks/a.py && ./check.sh; \"$CLAUDE_PROJECT_DIR\"/check.sh /etc/passwd",
            &root,
        );
        let names: Vec<&str> = files.iter().map(|(word, _)| word.as_str()).collect();
        assert_eq!(names, ["hooks/a.py", "./check.sh"], "each file once, none outside");
        let files = named_files("cd \"$PWD\" && ${PWD}/check.sh", &root);
        assert_eq!(files, [("${PWD}/check.sh".to_owned(), root.join("check.sh"))]);
    }
}
