//! The paths no command and no tool of the model's may read: keel's own config and state folders,
//! and the person's credentials — made once, as keel starts, into one list ([`Hidden`]).
//!
//! A command can print whatever it can read, to the model, and the file and search tools read
//! for the model directly; in the home folder (`keel` run in `~`) `cat ~/.config/keel/config.toml`
//! or `read_file .ssh/id_ed25519` would hand over the provider's `api_key` or a private key. So
//! these paths are hidden wherever the workspace is: inside the sandbox each hidden folder is an
//! empty read-only folder and each hidden file an empty read-only file (`bwrap/`, through
//! [`super::KeelFolders::hidden`]); `read_file`, `write_file`, `edit_file`, `grep`, `glob` and
//! `@path` refuse them, naming why and how to allow one (`Workspace::resolve`), and searches pass
//! over them.
//!
//! The list ([`credentials`]) holds the stores of the common tools' logins, keys and
//! tokens under the home folder, and where their own variables move them. The person's own config
//! adds to it (`hidden_paths`) or lets one of keel's list through (`readable_paths`); a
//! workspace's `.keel/config.toml` may do neither (`config::trust`). What the person hides stays
//! hidden even inside a path they let through, so `readable_paths = ["~/.ssh"]` with
//! `hidden_paths = ["~/.ssh/id_ed25519"]` shows the folder but not the key. keel's config and
//! state folders, hidden or let through, stay read-only to commands (`keel_folders`).
//!
//! Every path is taken as the kernel reaches it — its existing part with symlinks followed — so a
//! symlink into a hidden path is hidden too, and compared regardless of ASCII case (a `.SSH` on a
//! case-insensitive file system is `.ssh`). A path that holds the workspace is not hidden: the
//! person chose to work there, and hiding it would hide the workspace; `keel sandbox` says so.

mod credentials;
mod entry;
mod report;
mod sources;

pub use entry::{Entry, Kind, NotHidden, Why};
pub use sources::{HiddenError, Sources};

use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The paths hidden from commands and the model's tools, made once as keel starts; cheap to
/// clone. The default is an empty list (nothing hidden), for tests and tools outside a launch.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Hidden {
    inner: Arc<Inner>,
}

#[derive(Debug, Default, PartialEq, Eq)]
struct Inner {
    /// Hidden, sorted, none inside another.
    entries: Vec<Entry>,
    /// What is not hidden though named, and why.
    not_hidden: Vec<NotHidden>,
}

impl Hidden {
    /// The list of `entries` as given (sorted, duplicates and paths inside another dropped).
    pub fn of(mut entries: Vec<Entry>, not_hidden: Vec<NotHidden>) -> Self {
        // Stable: of two equal paths the first named (keel's, then the defaults) stays.
        entries.sort_by(|a, b| a.path.cmp(&b.path));
        let mut kept: Vec<Entry> = Vec::with_capacity(entries.len());
        for entry in entries {
            if !kept.iter().any(|outer| within(&entry.path, &outer.path)) {
                kept.push(entry);
            }
        }
        Self { inner: Arc::new(Inner { entries: kept, not_hidden }) }
    }

    /// The list of `folders` and `files` as given, each hidden as the person's own: for tests
    /// and benches of what the sandbox makes of a list.
    pub fn of_paths(folders: &[PathBuf], files: &[PathBuf]) -> Self {
        let entry = |path: &PathBuf, kind| Entry {
            path: path.clone(),
            shown: path.display().to_string(),
            kind,
            why: Why::Person,
        };
        let folders = folders.iter().map(|path| entry(path, Kind::Folder));
        Self::of(folders.chain(files.iter().map(|path| entry(path, Kind::File))).collect(), vec![])
    }

    /// The hidden paths.
    pub fn entries(&self) -> &[Entry] {
        &self.inner.entries
    }

    /// The hidden path that holds `path` (a real path: symlinks followed), or is it.
    pub fn holding(&self, path: &Path) -> Option<&Entry> {
        self.inner.entries.iter().find(|entry| within(path, &entry.path))
    }

    /// Only the hidden paths inside `root`: all a tool confined to `root` can meet, so a
    /// search of a workspace elsewhere checks nothing per file.
    pub fn inside(&self, root: &Path) -> Self {
        let entries = self.inner.entries.iter().filter(|entry| within(&entry.path, root));
        let inner = Inner { entries: entries.cloned().collect(), not_hidden: Vec::new() };
        Self { inner: Arc::new(inner) }
    }

    /// The hidden paths that are files, or would be.
    pub fn files(&self) -> Vec<PathBuf> {
        let files = self.inner.entries.iter().filter(|entry| entry.kind == Kind::File);
        files.map(|entry| entry.path.clone()).collect()
    }
}

/// Whether `path` is `outer` or lies inside it, comparing names regardless of ASCII case.
fn within(path: &Path, outer: &Path) -> bool {
    let mut names = path.components();
    for want in outer.components() {
        match names.next() {
            Some(name)
                if name
                    .as_os_str()
                    .as_bytes()
                    .eq_ignore_ascii_case(want.as_os_str().as_bytes()) => {}
            _ => return false,
        }
    }
    true
}

/// What the tests of the list's parts make it from.
#[cfg(test)]
mod testing {
    use super::{Hidden, Sources};
    use std::path::{Path, PathBuf};

    pub fn env_of(vars: Vec<(&'static str, String)>) -> impl Fn(&str) -> Option<String> {
        move |name: &str| vars.iter().find(|(key, _)| *key == name).map(|(_, value)| value.clone())
    }

    pub fn list(home: &Path, workspace: &Path, hidden: &[&str], readable: &[&str]) -> Hidden {
        let env = env_of(vec![("HOME", home.display().to_string())]);
        let hidden: Vec<PathBuf> = hidden.iter().map(PathBuf::from).collect();
        let readable: Vec<PathBuf> = readable.iter().map(PathBuf::from).collect();
        let sources =
            Sources { env: &env, workspace, hidden_paths: &hidden, readable_paths: &readable };
        Hidden::new(&sources).unwrap()
    }

    pub fn shown_list(hidden: &Hidden) -> Vec<&str> {
        hidden.entries().iter().map(|entry| entry.shown.as_str()).collect()
    }
}

#[cfg(test)]
mod inside_tests {
    use super::*;

    #[test]
    fn only_what_lies_inside_a_root_is_kept_for_its_tools() {
        let hidden = Hidden::of_paths(&["/h/.ssh".into(), "/elsewhere/x".into()], &[]);
        let inside = hidden.inside(Path::new("/h"));
        assert!(inside.holding(Path::new("/h/.ssh/id")).is_some());
        assert_eq!(inside.entries().len(), 1);
        assert!(hidden.inside(Path::new("/work")).entries().is_empty());
    }
}

#[cfg(test)]
mod tests {
    use super::testing::{list, shown_list};
    use crate::runtime::testing::folder;
    use std::path::Path;

    #[test]
    fn paths_inside_another_hidden_one_are_folded_into_it() {
        let (_home, h) = folder();
        let hidden = list(&h, Path::new("/nowhere"), &["~/.config"], &[]);
        let shown = shown_list(&hidden);
        assert!(shown.contains(&"~/.config"), "{shown:?}");
        assert!(!shown.iter().any(|path| path.starts_with("~/.config/")), "{shown:?}");
    }
}
