//! The workspace's paths that stay read-only to every command, because git or keel obeys what
//! they hold later, outside any sandbox — keel's `.keel`, the repository's hooks, settings,
//! submodules' repositories and linked worktrees' folders — and how bwrap covers each: `.git`
//! pinned in place, what exists bound read-only over itself, what is missing covered so that no
//! command makes it.

use std::path::{Path, PathBuf};

/// The workspace's repository: pinned in place, or covered where there is none.
const GIT: &str = ".git";
/// Paths inside the workspace that stay read-only, even when they do not exist yet: keel's own
/// settings; the repository's hooks; its submodules' repositories and its linked worktrees'
/// folders, each with a config, hooks or a `commondir` that git obeys when the person works there.
const PROTECTED_ALWAYS: [&str; 4] = [".keel", ".git/hooks", ".git/modules", ".git/worktrees"];
/// Paths inside the workspace that stay read-only when they exist: the repository's settings
/// (`config.worktree` is read when the config turns it on, which no command can).
const PROTECTED_IF_PRESENT: [&str; 2] = [".git/config", ".git/config.worktree"];

/// Every path inside the workspace that stays read-only, as names below its top, whether or not
/// it exists: what the Landlock sandbox keeps too (`sandbox::landlock`).
pub fn protected_names() -> impl Iterator<Item = &'static str> {
    PROTECTED_ALWAYS.into_iter().chain(PROTECTED_IF_PRESENT)
}

/// How a protected path is covered: bound onto itself writable (a mount point cannot be renamed
/// or removed), bound over as it is read-only, or covered by an empty read-only folder.
pub(super) enum Protect {
    Pinned,
    Existing,
    Missing,
}

/// The workspace's protected paths, each with how to cover it, in the order they are mounted.
///
/// `.git` comes first. A repository folder is pinned: a command could otherwise rename it away
/// and put a repository of its own, hooks and all, in its place. A `.git` file (a linked
/// worktree's pointer) or symlink stays as it is, read-only, and so does all it holds. With no
/// repository, `.git` is covered, so that no command makes one whose hooks would run later,
/// outside any sandbox. Its `hooks` (even missing) and `config` are covered only in a folder.
pub(super) fn protected(workspace: &Path) -> Vec<(Protect, PathBuf)> {
    let mut paths = Vec::new();
    let git = workspace.join(GIT);
    let repository = match git.symlink_metadata() {
        Ok(meta) if meta.is_dir() && !is_empty_folder(&git) => {
            paths.push((Protect::Pinned, git));
            true
        }
        // A dangling symlink has nothing to bind; git finds no repository there either.
        Ok(meta) if !meta.is_dir() => {
            if git.exists() {
                paths.push((Protect::Existing, git));
            }
            false
        }
        _ => {
            paths.push((Protect::Missing, git));
            false
        }
    };
    let in_repository = |path: &Path| !path.starts_with(workspace.join(GIT)) || repository;
    for name in PROTECTED_ALWAYS {
        let path = workspace.join(name);
        if !in_repository(&path) {
            continue;
        }
        if path.symlink_metadata().is_ok() && !is_empty_folder(&path) {
            paths.push((Protect::Existing, path));
        } else if path.parent().is_some_and(Path::is_dir) {
            paths.push((Protect::Missing, path));
        }
    }
    for name in PROTECTED_IF_PRESENT {
        let path = workspace.join(name);
        if in_repository(&path) && path.symlink_metadata().is_ok() {
            paths.push((Protect::Existing, path));
        }
    }
    paths
}

/// An empty folder may be another sandbox's placeholder, about to go: it is covered as missing,
/// since bwrap makes the folder again if it is gone by then.
fn is_empty_folder(path: &Path) -> bool {
    std::fs::read_dir(path).is_ok_and(|mut entries| entries.next().is_none())
}
