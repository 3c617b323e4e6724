//! keel's own folders as the sandbox treats them: its config and state folders, and every other
//! hidden path ([`super::hidden`]), out of every command's reach wherever the workspace is; the
//! session's `/tmp`; and the note that explains a folder the sandbox covers.
//!
//! Started in the home folder, keel's workspace holds `~/.config/keel` (the person's settings:
//! an MCP server keel starts unconfined, `sandbox = "off"`, a `base_url`, the `api_key`),
//! `~/.local/state/keel` (sessions, undo's shadow repositories) and the person's credentials
//! (`~/.ssh`, `~/.aws`, …). Each hidden path shows empty and read-only inside the sandbox, wherever
//! it lies; keel's folders, even where the person lets them through, stay read-only. Where a
//! command could otherwise write, a missing one is covered, so that no command makes it (a
//! missing hidden *file*, such as `~/.netrc`, is not: a command in the home folder may write its
//! dotfiles). A mount can still be moved with a folder above it: a command could rename
//! `~/.local`, make a `~/.local/state/keel` of its own and plant a `commondir` in undo's
//! repository, which keel's next snapshot would obey, or rename `~/.config` and plant a
//! `~/.config/gh` of its own. So every folder between the writable place and such a path is
//! pinned (bound onto itself: still writable, but a mount point cannot be renamed or removed).
//!
//! A path the sandbox covers because it is missing (a workspace's `.keel`, a `.git` where there
//! is no repository, keel's config folder, `~/.ssh`) shows inside as a read-only folder that
//! holds only a note saying why (`COVER_NOTE`); outside, it does not exist.

use super::hidden::{Hidden, Kind};
use std::path::{Path, PathBuf};

/// The folder in keel's state folder bound over every path the sandbox covers.
const COVER_FOLDER: &str = "cover";
/// The empty file bound over every hidden file, in keel's state folder.
const EMPTY_FILE: &str = "hidden-file";
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
    /// empty (docs/sandbox.md, "Hidden"); a missing file is not covered.
    pub hidden: Hidden,
    /// The empty file bound over each hidden file; `None`: `/dev/null`.
    pub empty_file: Option<PathBuf>,
}

/// How the sandbox treats a path of keel's own, or a hidden one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Keep {
    /// A folder above one, inside a writable place: bound onto itself, so that it cannot be
    /// renamed.
    Pin(PathBuf),
    /// keel's folder, let through by the person, inside a writable place: bound read-only.
    ReadOnly(PathBuf),
    /// The first missing folder on the way, inside a writable place: covered, so that no command
    /// makes it.
    Cover(PathBuf),
    /// A hidden path: an empty read-only folder or file in its place.
    Hide(PathBuf),
}

impl Keep {
    pub fn path(&self) -> &Path {
        match self {
            Self::Pin(path) | Self::ReadOnly(path) | Self::Cover(path) | Self::Hide(path) => path,
        }
    }
}

/// What is to become of one path.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Target {
    /// Hidden; a missing one is covered where commands write.
    HiddenFolder,
    /// Hidden; a missing one is left missing.
    HiddenFile,
    /// keel's folder, let through: read-only.
    ReadOnly,
}

/// The folder every command sees as a private one: a host path there is out of sight anyway,
/// unless a place bound in holds it.
const PRIVATE_TMP: &str = "/tmp";

impl KeelFolders {
    /// keel's config folder and state folder as the environment `env` places them.
    pub fn from_env(env: &dyn Fn(&str) -> Option<String>) -> Self {
        let config = crate::state_home::user_config_dir(env);
        let state = crate::state_home::state_dir(env);
        Self { own: config.into_iter().chain(state).collect(), ..Self::default() }
    }

    /// What keeps keel's folders and the hidden paths out of a command's reach, in the order to
    /// mount them (a folder before what lies in it), given the places a command may write
    /// (`writable`, bound before) and the `workspace` (bound before, writable or not). A path that
    /// holds the workspace is left as it is: covering it would cover the workspace.
    pub fn keeps(&self, writable: &[PathBuf], workspace: &Path) -> Vec<Keep> {
        let hidden = self.hidden.entries();
        let hidden_holds = |path: &Path| hidden.iter().find(|entry| path.starts_with(&entry.path));
        let mut targets: Vec<(PathBuf, Target)> = Vec::new();
        for entry in hidden {
            let kind = match entry.kind {
                Kind::File => Target::HiddenFile,
                Kind::Folder => Target::HiddenFolder,
            };
            targets.push((entry.path.clone(), kind));
        }
        for path in self.own.iter().map(|own| super::real_path::real(own)) {
            if hidden_holds(&path).is_none() {
                targets.push((path, Target::ReadOnly));
            }
        }
        let mut keeps: Vec<Keep> = Vec::new();
        let mut keep = |kept: Keep| {
            if !keeps.contains(&kept) {
                keeps.push(kept);
            }
        };
        for (target, how) in targets {
            let inside_other = hidden_holds(&target).is_some_and(|outer| outer.path != target);
            if workspace.starts_with(&target) || inside_other {
                continue;
            }
            let Some(place) = writable.iter().find(|place| target.starts_with(place)) else {
                let in_sight = !target.starts_with(PRIVATE_TMP) || target.starts_with(workspace);
                if how != Target::ReadOnly && in_sight && target.symlink_metadata().is_ok() {
                    keep(Keep::Hide(target));
                }
                continue;
            };
            let Ok(below) = target.strip_prefix(place) else { continue };
            if below.as_os_str().is_empty() {
                // A writable place that is itself hidden, or keel's: hidden, or read-only.
                match how {
                    Target::ReadOnly => keep(Keep::ReadOnly(target)),
                    _ => keep(Keep::Hide(target)),
                }
                continue;
            }
            let mut path = place.clone();
            let mut parts = below.components().peekable();
            while let Some(part) = parts.next() {
                path.push(part);
                let last = parts.peek().is_none();
                match path.symlink_metadata() {
                    Ok(_) if last && how == Target::ReadOnly => keep(Keep::ReadOnly(path.clone())),
                    Ok(_) if last => keep(Keep::Hide(path.clone())),
                    Ok(meta) if meta.is_dir() => keep(Keep::Pin(path.clone())),
                    // A file or a symlink where a folder should be: read-only as it is, so that
                    // nothing goes through it.
                    Ok(_) => {
                        keep(Keep::ReadOnly(path.clone()));
                        break;
                    }
                    // A hidden file is not covered, nor the folders on the way to it.
                    Err(_) if how == Target::HiddenFile => break,
                    Err(_) => {
                        keep(Keep::Cover(path.clone()));
                        break;
                    }
                }
            }
        }
        // A folder's mount first, then what lies in it; otherwise in the order found.
        keeps.sort_by(|a, b| a.path().cmp(b.path()));
        keeps
    }
}

/// Makes the folder of notes bound over covered paths in keel's state folder `state`, with its
/// note; returns it.
pub fn prepare_cover(state: &Path) -> std::io::Result<PathBuf> {
    let folder = state.join(COVER_FOLDER);
    crate::runtime::undo::shadow::create_private_dir(&folder)?;
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

/// Makes the empty file bound over hidden files in keel's state folder `state`; returns it.
pub fn prepare_empty_file(state: &Path) -> std::io::Result<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    /// Readable by commands whatever user made it; written by no one.
    const READ_ONLY_FILE: u32 = 0o444;
    let path = state.join(EMPTY_FILE);
    let meta = path.symlink_metadata();
    if !meta.as_ref().is_ok_and(|meta| meta.is_file() && meta.len() == 0) {
        if meta.is_ok() {
            std::fs::remove_file(&path)?;
        }
        std::fs::File::create(&path)?;
    }
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(READ_ONLY_FILE))?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::testing::{folder, folders};

    use crate::runtime::sandbox::outside_tmp;

    /// keel's folders, `~/.ssh`, `~/.netrc` and `~/.docker/config.json` hidden in home `h`.
    fn hiding(h: &Path) -> KeelFolders {
        let own = vec![h.join(".config/keel"), h.join(".local/state/keel")];
        let files = [h.join(".netrc"), h.join(".docker/config.json")];
        let folders: Vec<PathBuf> = own.iter().cloned().chain([h.join(".ssh")]).collect();
        let hidden = Hidden::of_paths(&folders, &files);
        KeelFolders { own, hidden, ..KeelFolders::default() }
    }

    #[test]
    fn started_in_the_home_folder_hidden_paths_are_hidden_their_parents_pinned() {
        let home = outside_tmp();
        let h = &home.path().canonicalize().unwrap();
        folders(h, &[".local/state/keel", ".config", ".ssh", ".docker"]);
        let folders = hiding(h);
        assert_eq!(
            folders.keeps(&[h.to_path_buf()], h),
            vec![
                Keep::Pin(h.join(".config")),
                Keep::Cover(h.join(".config/keel")),
                Keep::Pin(h.join(".docker")),
                Keep::Pin(h.join(".local")),
                Keep::Pin(h.join(".local/state")),
                Keep::Hide(h.join(".local/state/keel")),
                Keep::Hide(h.join(".ssh")),
            ],
            "a missing file (.netrc, .docker/config.json) is left missing"
        );
        // Elsewhere, what exists is hidden all the same, and nothing needs pinning.
        let work = outside_tmp();
        let w = work.path().to_path_buf();
        assert_eq!(
            folders.keeps(std::slice::from_ref(&w), &w),
            vec![Keep::Hide(h.join(".local/state/keel")), Keep::Hide(h.join(".ssh"))]
        );
        // Read-only (nothing writable): the same.
        assert_eq!(folders.keeps(&[], &w).len(), 2);
        // A missing hidden folder in the home folder is covered: no command plants one.
        std::fs::remove_dir(h.join(".ssh")).unwrap();
        assert!(folders.keeps(&[h.to_path_buf()], h).contains(&Keep::Cover(h.join(".ssh"))));
    }

    #[test]
    fn under_tmp_only_what_a_bound_place_holds_is_in_sight() {
        let (_home, h) = &folder();
        folders(h, &[".ssh"]);
        let folders = hiding(h);
        let work = outside_tmp();
        let w = work.path().to_path_buf();
        assert!(folders.keeps(std::slice::from_ref(&w), &w).is_empty());
        assert_eq!(folders.keeps(&[], h), vec![Keep::Hide(h.join(".ssh"))]);
    }

    #[test]
    fn started_in_the_home_folder_keels_folders_let_through_stay_read_only() {
        let (_home, h) = &folder();
        folders(h, &[".local/state/keel", ".config"]);
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
        // A workspace inside keel's own folder is not covered over, hidden or not.
        let inside = h.join(".local/state/keel/w");
        for folders in [folders, hiding(h)] {
            let keeps = folders.keeps(&[h.to_path_buf(), inside.clone()], &inside);
            assert!(!keeps.is_empty());
            assert!(keeps.iter().all(|keep| !inside.starts_with(keep.path())), "{keeps:?}");
        }
    }

    #[test]
    fn a_missing_parent_is_covered_in_its_place() {
        let (_home, h) = &folder();
        let folders = KeelFolders { own: vec![h.join(".config/keel")], ..KeelFolders::default() };
        assert_eq!(folders.keeps(&[h.to_path_buf()], h), vec![Keep::Cover(h.join(".config"))]);
    }

    #[test]
    fn the_cover_holds_its_note() {
        use std::os::unix::fs::PermissionsExt;
        let state = tempfile::tempdir().unwrap();
        let cover = prepare_cover(state.path()).unwrap();
        let note = std::fs::read_to_string(cover.join(COVER_NOTE)).unwrap();
        assert!(note.contains("keel covers this path"), "{note}");
        assert_eq!(prepare_cover(state.path()).unwrap(), cover);
        let empty = prepare_empty_file(state.path()).unwrap();
        std::fs::set_permissions(&empty, std::fs::Permissions::from_mode(0o644)).unwrap();
        std::fs::write(&empty, "not empty").unwrap();
        assert_eq!(prepare_empty_file(state.path()).unwrap(), empty);
        assert_eq!(std::fs::read(&empty).unwrap(), b"");
    }
}
