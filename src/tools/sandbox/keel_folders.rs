//! keel's own folders as the sandbox treats them: its config and state folders, out of every
//! command's reach wherever the workspace is; the session's `/tmp`; and the note that explains a
//! folder the sandbox covers.
//!
//! Started in the home folder, keel's workspace holds `~/.config/keel` (the person's settings:
//! an MCP server keel starts unconfined, `sandbox = "off"`, a `base_url`) and
//! `~/.local/state/keel` (sessions, undo's shadow repositories). Each is bound read-only where a
//! command could otherwise write it, and covered when missing, so that no command makes one. A
//! read-only mount can still be moved with a folder above it: a command could rename
//! `~/.local`, make a `~/.local/state/keel` of its own and plant a `commondir` in undo's
//! repository, which keel's next snapshot would obey. So every folder between the writable place
//! and keel's is pinned (bound onto itself: still writable, but a mount point cannot be renamed
//! or removed).
//!
//! A path the sandbox covers because it is missing (a workspace's `.keel`, a `.git` where there
//! is no repository, keel's config folder) shows inside as a read-only folder that holds only a
//! note saying why (`COVER_NOTE`); outside, it does not exist.

use std::path::{Path, PathBuf};

/// The folder in keel's state folder bound over every path the sandbox covers.
const COVER_FOLDER: &str = "cover";
/// The note in it, and what it says.
const COVER_NOTE: &str = "README";
const COVER_TEXT: &str = "keel covers this path, read-only, while a command runs: it does not \
exist in the workspace, and git or keel would obey what a command put here (hooks, settings) \
later, outside the sandbox. Outside the sandbox there is nothing here. To make it, the person \
runs the command themselves (for `.git`: `git init`).\n";

/// keel's own folders, as the sandbox needs them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KeelFolders {
    /// keel's config and state folders.
    pub own: Vec<PathBuf>,
    /// The session's `/tmp`, bound at `/tmp` for every command; `None`: an empty one for each.
    pub tmp: Option<PathBuf>,
    /// The folder that holds `COVER_NOTE`; `None`: covered paths show empty.
    pub cover: Option<PathBuf>,
    /// Paths hidden from commands, folders and files alike: inside the sandbox each shows
    /// empty (docs/sandbox.md, "Hidden").
    pub hidden: Vec<PathBuf>,
}

/// How the sandbox treats a path of keel's own inside a writable place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Keep {
    /// A folder above keel's: bound onto itself, so that it cannot be renamed.
    Pin(PathBuf),
    /// keel's folder: bound read-only.
    ReadOnly(PathBuf),
    /// The first missing folder on the way to keel's: covered, so that no command makes it.
    Cover(PathBuf),
}

impl KeelFolders {
    /// keel's config folder and state folder as the environment `env` places them.
    pub fn from_env(env: &dyn Fn(&str) -> Option<String>) -> Self {
        let config = crate::state_home::user_config_path(env)
            .and_then(|file| file.parent().map(Path::to_path_buf));
        let state = crate::state_home::state_dir(env);
        Self { own: config.into_iter().chain(state).collect(), ..Self::default() }
    }

    /// What keeps each of keel's folders out of a command's reach, in the order to mount them,
    /// where one lies inside a `writable` place. One that holds the workspace (`workspace`) is
    /// left as it is: covering it would cover the workspace.
    pub fn keeps(&self, writable: &[PathBuf], workspace: &Path) -> Vec<Keep> {
        let mut keeps: Vec<Keep> = Vec::new();
        let keep = |kept: Keep, keeps: &mut Vec<Keep>| {
            if !keeps.contains(&kept) {
                keeps.push(kept);
            }
        };
        for folder in self.own.iter().filter(|folder| !workspace.starts_with(folder)) {
            let Some(place) = writable.iter().find(|place| folder.starts_with(place)) else {
                continue;
            };
            let Ok(below) = folder.strip_prefix(place) else { continue };
            let mut path = place.clone();
            let mut parts = below.components().peekable();
            while let Some(part) = parts.next() {
                path.push(part);
                let last = parts.peek().is_none();
                match path.symlink_metadata() {
                    Ok(meta) if last && meta.is_dir() => {
                        keep(Keep::ReadOnly(path.clone()), &mut keeps);
                    }
                    Ok(meta) if meta.is_dir() => keep(Keep::Pin(path.clone()), &mut keeps),
                    // A file or a symlink where a folder should be: read-only as it is, so that
                    // nothing goes through it.
                    Ok(_) => {
                        keep(Keep::ReadOnly(path.clone()), &mut keeps);
                        break;
                    }
                    Err(_) => {
                        keep(Keep::Cover(path.clone()), &mut keeps);
                        break;
                    }
                }
            }
        }
        keeps
    }
}

/// Makes the folder of notes bound over covered paths in keel's state folder `state`, with its
/// note; returns it.
pub fn prepare_cover(state: &Path) -> std::io::Result<PathBuf> {
    let folder = state.join(COVER_FOLDER);
    crate::tools::undo::shadow::create_private_dir(&folder)?;
    let note = folder.join(COVER_NOTE);
    if std::fs::read(&note).ok().as_deref() != Some(COVER_TEXT.as_bytes()) {
        std::fs::write(&note, COVER_TEXT)?;
    }
    // Readable by commands whatever user the note was made by.
    use std::os::unix::fs::PermissionsExt;
    const READABLE_FOLDER: u32 = 0o755;
    std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(READABLE_FOLDER))?;
    Ok(folder)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn started_in_the_home_folder_keels_folders_are_kept_and_their_parents_pinned() {
        let home = tempfile::tempdir().unwrap();
        let h = home.path();
        std::fs::create_dir_all(h.join(".local/state/keel")).unwrap();
        std::fs::create_dir_all(h.join(".config")).unwrap();
        let folders = KeelFolders {
            own: vec![h.join(".config/keel"), h.join(".local/state/keel")],
            ..KeelFolders::default()
        };
        let keeps = folders.keeps(&[h.to_path_buf()], h);
        assert_eq!(
            keeps,
            vec![
                Keep::Pin(h.join(".config")),
                Keep::Cover(h.join(".config/keel")),
                Keep::Pin(h.join(".local")),
                Keep::Pin(h.join(".local/state")),
                Keep::ReadOnly(h.join(".local/state/keel")),
            ]
        );
        // Elsewhere, the read-only root covers them already.
        let work = tempfile::tempdir().unwrap();
        assert!(folders.keeps(&[work.path().to_path_buf()], work.path()).is_empty());
        // A workspace inside keel's own folder is not covered over.
        let inside = h.join(".local/state/keel/w");
        let keeps = folders.keeps(&[h.to_path_buf(), inside.clone()], &inside);
        assert!(!keeps.is_empty());
        assert!(keeps.iter().all(|keep| match keep {
            Keep::ReadOnly(path) | Keep::Pin(path) | Keep::Cover(path) => !inside.starts_with(path),
        }));
    }

    #[test]
    fn a_missing_parent_is_covered_in_its_place() {
        let home = tempfile::tempdir().unwrap();
        let h = home.path();
        let folders = KeelFolders { own: vec![h.join(".config/keel")], ..KeelFolders::default() };
        assert_eq!(folders.keeps(&[h.to_path_buf()], h), vec![Keep::Cover(h.join(".config"))]);
    }

    #[test]
    fn the_cover_holds_its_note() {
        let state = tempfile::tempdir().unwrap();
        let cover = prepare_cover(state.path()).unwrap();
        let note = std::fs::read_to_string(cover.join(COVER_NOTE)).unwrap();
        assert!(note.contains("keel covers this path"), "{note}");
        assert_eq!(prepare_cover(state.path()).unwrap(), cover);
    }
}
