//! Moving aside what a look found new: each `.git` or `HEAD` renamed, in its folder, to a name
//! git does not look for, through a descriptor of the folder opened beneath the workspace; a
//! `.git` file that points into the workspace's own repository left as it is; and the line that
//! tells the person, with the command that puts it back.

use super::{GIT, Scan};
use crate::runtime::beneath;
use crate::runtime::sandbox::real_path::normalized;
use std::io::Read;
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};

/// What a moved `.git` or `HEAD` is called: its name and this, with a number after it when that
/// is taken.
const QUARANTINE: &str = "-quarantined";
const QUARANTINE_TRIES: usize = 100;
/// A `.git` file's pointer, and the most of it read.
const GITDIR_PREFIX: &str = "gitdir:";
const POINTER_LIMIT: u64 = 4096;
/// Where the workspace's own repository keeps its submodules' and linked worktrees' folders.
const PERSONS_FOLDERS: [&str; 2] = [".git/modules", ".git/worktrees"];

/// Moves aside every mark `now` holds that `before` did not (as that very entry), unless it
/// points into the workspace's own repository; what to tell the person, and what was moved.
pub(super) fn quarantine_new(
    root: &Path,
    before: &Scan,
    now: &mut Scan,
) -> (Vec<String>, Vec<PathBuf>) {
    let (mut told, mut moved) = (Vec::new(), Vec::new());
    let mut new: Vec<PathBuf> = now
        .found
        .iter()
        .filter(|(path, identity)| before.found.get(*path) != Some(identity))
        .map(|(path, _)| path.clone())
        .collect();
    new.sort();
    for path in new {
        let Some(relative) = path.strip_prefix(root).ok().and_then(Path::parent) else { continue };
        let Some(name) = path.file_name().and_then(|name| name.to_str()) else { continue };
        if name == GIT && points_into_persons_repository(root, relative) {
            continue;
        }
        let shown = relative.join(name);
        let made = if name == GIT {
            format!("a command made {}", shown.display())
        } else if relative.as_os_str().is_empty() {
            "a command made the workspace's top a git repository (HEAD, objects, refs)".to_owned()
        } else {
            format!("a command made {} a git repository (HEAD, objects, refs)", relative.display())
        };
        told.push(match move_aside(root, relative, name) {
            Ok(aside) => {
                now.found.remove(&path);
                now.passed_over.insert(root.join(relative).join(&aside));
                moved.push(path.clone());
                let aside = relative.join(&aside);
                format!(
                    "Moved {} aside to {}: {made}, and git would run its hooks and settings \
                     outside the sandbox when used there. Look at them, then run `mv {} {}` in \
                     the workspace if you trust it.",
                    shown.display(),
                    aside.display(),
                    shell_word(&aside),
                    shell_word(&shown)
                )
            }
            Err(err) => format!(
                "keel could not move {} aside ({err}): {made}, and git would run its hooks and \
                 settings outside the sandbox when used there. Check it before you run git in \
                 that folder.",
                shown.display()
            ),
        });
    }
    (told, moved)
}

/// `path` as one word for the shell: a name a command chose must not run as a command when the
/// person pastes the line keel suggests.
fn shell_word(path: &Path) -> String {
    let text = path.to_string_lossy();
    shlex::try_quote(&text)
        .map_or_else(|_| text.escape_debug().to_string(), |word| word.into_owned())
}

/// Whether `folder/.git` is a file pointing into the workspace's `.git/modules` or
/// `.git/worktrees`.
fn points_into_persons_repository(root: &Path, folder: &Path) -> bool {
    let Ok(root_fd) = beneath::open_root(root) else { return false };
    let Ok(file) = beneath::open_for_reading(root_fd.as_fd(), &folder.join(GIT)) else {
        return false;
    };
    if !file.metadata().is_ok_and(|meta| meta.is_file()) {
        return false;
    }
    let mut pointer = String::new();
    if file.take(POINTER_LIMIT).read_to_string(&mut pointer).is_err() {
        return false;
    }
    let Some(target) = pointer.trim().strip_prefix(GITDIR_PREFIX).map(str::trim) else {
        return false;
    };
    let target = normalized(&root.join(folder).join(target));
    PERSONS_FOLDERS.iter().any(|persons| target.starts_with(root.join(persons)))
}

/// Renames `folder/NAME` to the first free quarantine name in `folder`; returns that name.
fn move_aside(root: &Path, folder: &Path, name: &str) -> std::io::Result<PathBuf> {
    let root_fd = beneath::open_root(root)?;
    let dir = if folder.as_os_str().is_empty() {
        root_fd
    } else {
        beneath::open_folder(root_fd.as_fd(), folder)?
    };
    for attempt in 1..=QUARANTINE_TRIES {
        let aside = match attempt {
            1 => PathBuf::from(format!("{name}{QUARANTINE}")),
            n => PathBuf::from(format!("{name}{QUARANTINE}-{n}")),
        };
        if beneath::metadata(dir.as_fd(), &aside)?.is_some() {
            continue;
        }
        beneath::rename(dir.as_fd(), Path::new(name), &aside)?;
        return Ok(aside);
    }
    Err(std::io::Error::other("every quarantine name is taken"))
}

#[cfg(test)]
mod tests {
    use super::super::settle;
    use super::*;
    use crate::runtime::testing::folder;

    #[test]
    fn the_suggested_move_back_runs_nothing_a_name_holds() {
        let (_work, root) = &folder();
        let folder = root.join("x; touch pwned; y");
        std::fs::create_dir_all(folder.join(".git")).unwrap();
        let settled = settle(root, &Scan { complete: true, ..Scan::default() });
        let line = settled.told.first().expect("the move is told");
        let command = line.split('`').nth(1).expect("a command to paste");
        let ran = std::process::Command::new("sh")
            .args(["-c", command])
            .current_dir(root)
            .status()
            .unwrap();
        assert!(ran.success(), "{command}");
        assert!(folder.join(".git").is_dir(), "moved back: {command}");
        assert!(!root.join("pwned").exists(), "{command}");
    }

    #[test]
    fn a_pointer_into_the_persons_repository_is_theirs() {
        let (_work, root) = &folder();
        std::fs::create_dir_all(root.join("lib")).unwrap();
        for (pointer, theirs) in [
            ("gitdir: ../.git/modules/lib\n", true),
            ("gitdir: ../.git/worktrees/lib", true),
            ("gitdir: ../.git/modules/../../elsewhere", false),
            ("gitdir: ../elsewhere", false),
            ("not a pointer", false),
        ] {
            std::fs::write(root.join("lib/.git"), pointer).unwrap();
            assert_eq!(points_into_persons_repository(root, Path::new("lib")), theirs, "{pointer}");
        }
    }
}
