//! The programs keel starts by name — `bwrap`, `git`, `bash`, an MCP server's bare command —
//! found on keel's own `PATH`, never in a folder a command can write.
//!
//! keel runs some of them outside the sandbox: `bwrap` itself, `git` for every undo snapshot,
//! each MCP server. With a folder of the workspace on `PATH` (an activated `.venv/bin`, direnv's
//! `PATH_add bin`, `node_modules/.bin`, an empty entry or `.`, which mean the current folder), one
//! command could plant `.venv/bin/git` and have keel run it unconfined at the next snapshot. So a
//! name is looked up only in entries that are absolute and lie outside every folder commands may
//! write (the workspace, the person's `writable_roots`), and a program found
//! there must not lead, through a symlink, into one either. A path the person gave (`KEEL_BWRAP`,
//! an MCP server's `command`) is taken as it is, unless it lies in such a folder. What cannot be
//! found so is refused, with the entries that were passed over and why.

use std::ffi::OsStr;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// Any of the execute bits.
const EXECUTABLE: u32 = 0o111;
/// The most passed-over entries a refusal names.
const NAMED_MAX: usize = 4;

/// Finds `name` on keel's own `PATH`; `writable` are the folders commands may write.
pub fn find(name: &OsStr, writable: &[PathBuf]) -> Result<PathBuf, String> {
    find_on(name, std::env::var_os("PATH").as_deref(), writable)
}

/// Finds `name` on `path` (a `PATH` value), passing over what commands may write.
pub fn find_on(
    name: &OsStr,
    path: Option<&OsStr>,
    writable: &[PathBuf],
) -> Result<PathBuf, String> {
    let shown = name.to_string_lossy();
    let writable: Vec<PathBuf> = writable.iter().map(|root| canonical(root)).collect();
    let given = Path::new(name);
    if given.components().count() > 1 || given.is_absolute() {
        if !given.is_absolute() {
            return Err(format!(
                "`{shown}` is a relative path, which keel would resolve in the workspace; give \
                 an absolute path or a bare name"
            ));
        }
        if let Some(place) = inside(&canonical(given), &writable) {
            return Err(format!(
                "`{shown}` lies inside {}, which commands can write",
                place.display()
            ));
        }
        return Ok(given.to_path_buf());
    }
    let mut passed = Vec::new();
    for entry in std::env::split_paths(path.unwrap_or_default()) {
        let shown_entry = entry.display().to_string();
        if entry.as_os_str().is_empty() || entry.is_relative() {
            // Both mean a folder relative to where keel runs: the workspace.
            if is_program(&entry.join(name)) || entry.as_os_str().is_empty() {
                passed.push(format!("'{shown_entry}' (relative)"));
            }
            continue;
        }
        let candidate = entry.join(name);
        if !is_program(&candidate) {
            continue;
        }
        match inside(&canonical(&candidate), &writable) {
            Some(place) => passed.push(format!(
                "{shown_entry} (inside {}, which commands can write)",
                place.display()
            )),
            None => return Ok(candidate),
        }
    }
    let mut why = format!("`{shown}` was not found on PATH");
    if !passed.is_empty() {
        let more = passed.len().saturating_sub(NAMED_MAX);
        passed.truncate(NAMED_MAX);
        why.push_str(" outside the folders commands can write; passed over: ");
        why.push_str(&passed.join(", "));
        if more > 0 {
            why.push_str(&format!(" and {more} more"));
        }
    }
    Err(why)
}

/// `path` (a `PATH` value) without the entries [`find`] passes over: empty or relative ones,
/// and those inside a folder commands may write (`writable`), symlinks followed. For programs
/// that look up names themselves (a hook of the person's, run outside the sandbox).
pub fn path_outside(path: Option<&OsStr>, writable: &[PathBuf]) -> std::ffi::OsString {
    let writable: Vec<PathBuf> = writable.iter().map(|root| canonical(root)).collect();
    let kept = std::env::split_paths(path.unwrap_or_default())
        .filter(|entry| entry.is_absolute())
        .filter(|entry| inside(&canonical(entry), &writable).is_none());
    std::env::join_paths(kept.collect::<Vec<_>>()).unwrap_or_default()
}

/// Whether `path` is a file with an execute bit, as `exec` would start it.
fn is_program(path: &Path) -> bool {
    std::fs::metadata(path)
        .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & EXECUTABLE != 0)
}

/// `path` with every symlink followed, or as it is when it cannot be (it does not exist yet).
fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// The writable folder `path` lies in, if any.
fn inside<'a>(path: &Path, writable: &'a [PathBuf]) -> Option<&'a Path> {
    writable.iter().find(|root| path.starts_with(root)).map(PathBuf::as_path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    fn program(folder: &Path, name: &str) -> PathBuf {
        std::fs::create_dir_all(folder).unwrap();
        let path = folder.join(name);
        std::fs::write(&path, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    fn path_of(entries: &[&Path]) -> OsString {
        std::env::join_paths(entries).unwrap()
    }

    #[test]
    fn a_program_in_a_folder_commands_write_is_passed_over() {
        let (work, system) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let planted = program(&work.path().join(".venv/bin"), "git");
        let real = program(system.path(), "git");
        let path = path_of(&[planted.parent().unwrap(), system.path()]);
        let writable = [work.path().to_path_buf()];
        assert_eq!(find_on("git".as_ref(), Some(&path), &writable), Ok(real.clone()));
        // Only there: refused, saying where it was and why.
        let only = path_of(&[planted.parent().unwrap()]);
        let why = find_on("git".as_ref(), Some(&only), &writable).unwrap_err();
        assert!(why.contains(".venv/bin (inside"), "{why}");
        // A symlink outside that leads inside counts as inside.
        let linked = system.path().join("links");
        std::fs::create_dir(&linked).unwrap();
        std::os::unix::fs::symlink(&planted, linked.join("git")).unwrap();
        let path = path_of(&[&linked, system.path()]);
        assert_eq!(find_on("git".as_ref(), Some(&path), &writable), Ok(real));
    }

    #[test]
    fn empty_and_relative_entries_are_never_searched() {
        let system = tempfile::tempdir().unwrap();
        let real = program(system.path(), "bwrap");
        let path = OsString::from(format!(":bin:.:{}", system.path().display()));
        assert_eq!(find_on("bwrap".as_ref(), Some(&path), &[]), Ok(real));
        let why = find_on("bwrap".as_ref(), Some(OsStr::new(":bin")), &[]).unwrap_err();
        assert!(why.contains("'' (relative)"), "{why}");
    }

    #[test]
    fn a_path_for_programs_of_the_persons_keeps_only_entries_commands_cannot_write() {
        let (work, system) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let venv = work.path().join(".venv/bin");
        std::fs::create_dir_all(&venv).unwrap();
        let linked = system.path().join("linked");
        std::os::unix::fs::symlink(&venv, &linked).unwrap();
        let path = OsString::from(format!(
            ":bin:.:{}:{}:{}",
            venv.display(),
            linked.display(),
            system.path().display()
        ));
        let kept = path_outside(Some(&path), &[work.path().to_path_buf()]);
        assert_eq!(kept, system.path().as_os_str());
        assert!(path_outside(None, &[]).is_empty());
    }

    #[test]
    fn a_path_the_person_gave_is_taken_unless_commands_can_write_it() {
        let work = tempfile::tempdir().unwrap();
        let inside_work = program(work.path(), "server");
        let writable = [work.path().to_path_buf()];
        let why = find_on(inside_work.as_os_str(), None, &writable).unwrap_err();
        assert!(why.contains("which commands can write"), "{why}");
        assert_eq!(find_on("/usr/bin/env".as_ref(), None, &writable), Ok("/usr/bin/env".into()));
        assert!(find_on("./server".as_ref(), None, &[]).unwrap_err().contains("relative path"));
        assert!(find_on("nothing-by-this-name".as_ref(), None, &[]).is_err());
    }
}
