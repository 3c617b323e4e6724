//! The Landlock rules for one command, built from its [`Spec`] by the sandbox's last step just
//! before it confines itself.
//!
//! Landlock only grants: a rule lets a command do something beneath a path, and nothing beneath it
//! can take that back. So a path kept from a command inside a tree it may use is kept by granting
//! its siblings instead: walking down from the tree's top to the path, each folder on the way
//! gets only what the path's ancestors may keep (listing, on the way to a hidden path; nothing,
//! on the way to a read-only one), and every other entry on the way gets the whole grant. What
//! that costs:
//! - An entry made in such a folder after the command started gets nothing: it is unreadable
//!   (on the way to a hidden path) or read-only (on the way to a kept one) for that command.
//! - Nothing can be made, removed or renamed in a folder on the way to a read-only path: the
//!   workspace's top (on the way to `.git/hooks` and `.keel`) and `.git` itself. What is there
//!   can be written in place.
//! - A folder on the way to a hidden path can be listed, and so can a hidden folder (listing is
//!   granted from above): its names show, not what its files hold.
//!
//! A hidden path is hidden wherever its folder is mounted again too ([`super::mounts`]).
//! Symlinks get no rule: Landlock judges a path where it leads, by the rules on the folders
//! above that, so a link grants nothing its target does not have. Paths are resolved (symlinks
//! followed) before the walk, so a hidden or writable path named through a link is judged where
//! it is. The host's `/tmp` is hidden (the command's own is its `TMPDIR`), and of `/dev` only the
//! null, zero, full, random and terminal devices are reachable: a raw disk is another way to
//! read a hidden file.

use super::spec::Spec;
use crate::runtime::sandbox::real_path::resolved;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Where reading is granted from.
const ROOT: &str = "/";
/// The host's `/tmp`, which bwrap hides behind the session's: hidden here too.
const HOST_TMP: &str = "/tmp";
/// The devices, hidden but for those below.
const DEVICES: &str = "/dev";
/// Devices a command may read and write, as in bwrap's own `/dev`.
const DEVICES_READ_WRITE: [&str; 4] = ["/dev/null", "/dev/zero", "/dev/full", "/dev/tty"];
/// Devices a command may read.
const DEVICES_READ: [&str; 2] = ["/dev/random", "/dev/urandom"];
/// The most rules one command's walk may make: past it, a folder on the way holds more entries
/// than keel grants one by one, and the command is refused rather than run with fewer.
pub const MAX_RULES: usize = 20_000;

/// What a rule lets a command do beneath its path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Rights {
    /// Read and run files.
    pub read: bool,
    /// List folders.
    pub list: bool,
    /// Write files; make, remove and rename entries (never devices).
    pub write: bool,
}

impl Rights {
    pub const NONE: Self = Self { read: false, list: false, write: false };
    pub const LIST: Self = Self { read: false, list: true, write: false };
    pub const READ: Self = Self { read: true, list: true, write: false };
    pub const WRITE: Self = Self { read: false, list: false, write: true };
    pub const READ_WRITE: Self = Self { read: true, list: true, write: true };

    fn is_empty(self) -> bool {
        self == Self::NONE
    }

    fn with(self, other: Self) -> Self {
        Self {
            read: self.read || other.read,
            list: self.list || other.list,
            write: self.write || other.write,
        }
    }
}

/// The rules, one per path, merged.
pub type Rules = BTreeMap<PathBuf, Rights>;

/// Why the rules could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "more than {MAX_RULES} entries to grant one by one, to keep paths out of reach inside {0}; \
     fewer hidden paths or a smaller folder on the way would do"
)]
pub struct TooMany(pub PathBuf);

/// The rules for `spec`: everything readable but its hidden paths, the host's `/tmp` and most
/// devices; its writable folders writable but for the paths kept (and hidden) in them.
pub fn build(spec: &Spec) -> Result<Rules, TooMany> {
    let hidden: Vec<PathBuf> = spec.hidden.iter().map(|path| resolved(path)).collect();
    let hidden = super::mounts::with_aliases(&hidden);
    let kept: Vec<PathBuf> =
        spec.kept.iter().map(|path| resolved(path)).chain(hidden.iter().cloned()).collect();
    let mut rules = Rules::new();
    let unreadable: Vec<PathBuf> =
        hidden.iter().cloned().chain([HOST_TMP.into(), DEVICES.into()]).collect();
    around(Path::new(ROOT), Rights::READ, Rights::LIST, &unreadable, &mut rules)?;
    grant(&mut rules, Path::new(DEVICES), Rights::LIST)?;
    for device in DEVICES_READ_WRITE {
        grant(&mut rules, Path::new(device), Rights::READ_WRITE)?;
    }
    for device in DEVICES_READ {
        grant(&mut rules, Path::new(device), Rights::READ)?;
    }
    for file in &spec.readable {
        let file = resolved(file);
        if file.is_file() && !hidden.iter().any(|hidden| file.starts_with(hidden)) {
            grant(&mut rules, &file, Rights::READ)?;
        }
    }
    for root in &spec.writable {
        let root = resolved(root);
        if !root.is_dir() {
            continue;
        }
        // Readable wherever it lies (the session's /tmp is in keel's hidden state folder), but
        // for what is hidden inside it.
        around(&root, Rights::READ, Rights::LIST, &hidden, &mut rules)?;
        around(&root, Rights::WRITE, Rights::NONE, &kept, &mut rules)?;
    }
    Ok(rules)
}

/// Grants `rights` on `top` and all beneath it but the paths in `kept` (and all beneath them),
/// which get nothing: each folder on the way from `top` to one gets `on_the_way`, and each
/// other entry of those folders `rights`. A folder that cannot be listed grants nothing beneath.
/// A kept path that holds `top` is no concern here: what is granted inside it is meant to be.
fn around(
    top: &Path,
    rights: Rights,
    on_the_way: Rights,
    kept: &[PathBuf],
    rules: &mut Rules,
) -> Result<(), TooMany> {
    let inside: Vec<PathBuf> = kept.iter().filter(|path| path.starts_with(top)).cloned().collect();
    if inside.is_empty() {
        return grant(rules, top, rights);
    }
    if inside.iter().any(|path| path == top) {
        return Ok(());
    }
    grant(rules, top, on_the_way)?;
    let Ok(entries) = std::fs::read_dir(top) else { return Ok(()) };
    for entry in entries.flatten() {
        let Ok(kind) = entry.file_type() else { continue };
        if kind.is_symlink() {
            continue;
        }
        let path = entry.path();
        if kind.is_dir() {
            around(&path, rights, on_the_way, &inside, rules)?;
        } else if !inside.iter().any(|kept| kept.starts_with(&path)) {
            // A file on the way (a `.git` file before `.git/hooks`) is kept as it is.
            grant(rules, &path, rights)?;
        }
    }
    Ok(())
}

fn grant(rules: &mut Rules, path: &Path, rights: Rights) -> Result<(), TooMany> {
    if rights.is_empty() {
        return Ok(());
    }
    if rules.len() >= MAX_RULES && !rules.contains_key(path) {
        return Err(TooMany(path.parent().unwrap_or(path).to_path_buf()));
    }
    let merged = rules.get(path).copied().unwrap_or_default().with(rights);
    rules.insert(path.to_path_buf(), merged);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::runtime::sandbox::outside_tmp;

    /// A home with keel's folders, credentials and a project.
    fn home() -> tempfile::TempDir {
        let home = outside_tmp();
        let h = home.path();
        for folder in [
            ".ssh",
            ".config/keel",
            ".config/git",
            ".local/state/keel/tmp/1-x",
            "proj/.git/hooks",
            "proj/src",
        ] {
            std::fs::create_dir_all(h.join(folder)).unwrap();
        }
        for file in [
            ".ssh/id_ed25519",
            ".config/keel/config.toml",
            ".config/git/config",
            ".bashrc",
            "proj/.git/config",
            "proj/.git/HEAD",
            "proj/README.md",
        ] {
            std::fs::write(h.join(file), "x").unwrap();
        }
        std::os::unix::fs::symlink(h.join(".ssh"), h.join("proj/keys")).unwrap();
        home
    }

    fn rights(rules: &Rules, path: &Path) -> Rights {
        rules.get(path).copied().unwrap_or_default()
    }

    /// What the rules let a command do at `path`: the union of the rules on it and above it,
    /// as Landlock judges it.
    fn allowed(rules: &Rules, path: &Path) -> Rights {
        path.ancestors().fold(Rights::NONE, |sum, above| sum.with(rights(rules, above)))
    }

    #[test]
    fn a_hidden_path_is_kept_by_granting_its_siblings_on_the_way_down() {
        let home = home();
        let h = &home.path().canonicalize().unwrap();
        let spec = Spec {
            writable: vec![h.join("proj")],
            kept: vec![h.join("proj/.git/hooks"), h.join("proj/.git/config"), h.join("proj/.keel")],
            hidden: vec![h.join(".ssh"), h.join(".config/keel"), h.join(".netrc")],
            ..Spec::default()
        };
        let rules = build(&spec).unwrap();
        // On the way: listed only; beside it: read.
        for on_the_way in [Path::new("/"), h.as_path(), &h.join(".config")] {
            assert_eq!(rights(&rules, on_the_way), Rights::LIST, "{}", on_the_way.display());
        }
        assert_eq!(rights(&rules, &h.join(".config/git")), Rights::READ);
        assert_eq!(rights(&rules, &h.join(".bashrc")), Rights::READ);
        // Hidden: nothing on it, nothing above it but listing.
        for hidden in
            [h.join(".ssh/id_ed25519"), h.join(".config/keel/config.toml"), h.join(".netrc")]
        {
            assert!(!allowed(&rules, &hidden).read, "{}", hidden.display());
            assert!(!allowed(&rules, &hidden).write, "{}", hidden.display());
        }
        // A link into a hidden folder gets no rule of its own.
        assert!(!rules.contains_key(&h.join("proj/keys")));
        // The host's /tmp and raw devices are hidden; the null device is not.
        assert!(!allowed(&rules, Path::new("/tmp/x")).read);
        assert!(!allowed(&rules, Path::new("/dev/sda")).read);
        assert_eq!(allowed(&rules, Path::new("/dev/null")), Rights::READ_WRITE);
        assert!(allowed(&rules, Path::new("/usr/bin/bash")).read);
        assert!(!allowed(&rules, Path::new("/usr/bin/bash")).write);
    }

    #[test]
    fn read_only_paths_inside_the_workspace_freeze_the_folders_on_the_way() {
        let home = home();
        let h = &home.path().canonicalize().unwrap();
        let work = h.join("proj");
        let spec = Spec {
            writable: vec![work.clone()],
            kept: [".git/hooks", ".git/config", ".git/modules", ".keel"]
                .iter()
                .map(|path| work.join(path))
                .collect(),
            ..Spec::default()
        };
        let rules = build(&spec).unwrap();
        // The top and .git: nothing made, removed or renamed there.
        assert!(!rights(&rules, &work).write);
        assert!(!rights(&rules, &work.join(".git")).write);
        // What is beside the kept paths is writable, files in place and folders throughout.
        assert!(allowed(&rules, &work.join("src/new.rs")).write);
        assert!(allowed(&rules, &work.join("README.md")).write);
        assert!(allowed(&rules, &work.join(".git/HEAD")).write);
        for kept in [".git/hooks/pre-commit", ".git/config", ".keel/config.toml", "new-at-top"] {
            let path = work.join(kept);
            assert!(!allowed(&rules, &path).write, "{}", path.display());
            assert!(allowed(&rules, &path).read, "still read: {}", path.display());
        }
    }

    #[test]
    fn a_writable_folder_inside_a_hidden_one_stays_reachable() {
        let home = home();
        let h = &home.path().canonicalize().unwrap();
        let state = h.join(".local/state/keel");
        let tmp = state.join("tmp/1-x");
        let spec = Spec {
            writable: vec![tmp.clone()],
            hidden: vec![state.clone()],
            tmp: Some(tmp.clone()),
            ..Spec::default()
        };
        let rules = build(&spec).unwrap();
        assert_eq!(allowed(&rules, &tmp.join("download.tar")), Rights::READ_WRITE);
        assert!(!allowed(&rules, &state.join("sessions/x.jsonl")).read);
        assert!(!allowed(&rules, &state.join("tmp/2-other/x")).read, "another session's");
    }

    #[test]
    fn a_file_on_the_way_and_a_missing_kept_path_are_kept_as_they_are() {
        let home = home();
        let h = &home.path().canonicalize().unwrap();
        let work = h.join("worktree");
        std::fs::create_dir(&work).unwrap();
        std::fs::write(work.join(".git"), "gitdir: /elsewhere\n").unwrap();
        std::fs::write(work.join("main.rs"), "x").unwrap();
        let spec = Spec {
            writable: vec![work.clone()],
            kept: vec![work.join(".git/hooks"), work.join(".keel")],
            ..Spec::default()
        };
        let rules = build(&spec).unwrap();
        assert!(!allowed(&rules, &work.join(".git")).write, "the .git file stays as it is");
        assert!(!allowed(&rules, &work.join(".keel/config.toml")).write, "nor is .keel made");
        assert!(allowed(&rules, &work.join("main.rs")).write);
    }

    #[test]
    fn paths_are_judged_where_their_links_lead() {
        let home = home();
        let h = &home.path().canonicalize().unwrap();
        std::os::unix::fs::symlink(h.join(".ssh"), h.join("ssh-link")).unwrap();
        assert_eq!(resolved(&h.join("ssh-link/id_ed25519")), h.join(".ssh/id_ed25519"));
        assert_eq!(resolved(&h.join("ssh-link/missing/x")), h.join(".ssh/missing/x"));
        assert_eq!(resolved(&h.join("gone/./a/../b")), h.join("gone/b"));
        let spec = Spec { hidden: vec![h.join("ssh-link")], ..Spec::default() };
        let rules = build(&spec).unwrap();
        assert!(!allowed(&rules, &h.join(".ssh/id_ed25519")).read, "hidden where it is");
    }

    #[test]
    fn a_folder_too_big_to_walk_around_is_refused_not_half_granted() {
        let home = outside_tmp();
        let h = home.path().canonicalize().unwrap();
        std::fs::create_dir(h.join("secret")).unwrap();
        for n in 0..=MAX_RULES {
            std::fs::write(h.join(format!("f{n}")), "").unwrap();
        }
        let spec =
            Spec { writable: vec![h.clone()], hidden: vec![h.join("secret")], ..Spec::default() };
        assert_eq!(build(&spec).unwrap_err(), TooMany(h.clone()));
    }
}
