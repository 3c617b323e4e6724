//! Where a search looks, and the walk through it: the folder (or file) the model named, resolved
//! inside the workspace, and its files as ripgrep would choose them, visited in parallel.
//!
//! The rules are ripgrep's defaults (`ignore::WalkBuilder`): `.gitignore` files (nested ones,
//! and those of the folders above, up to the repository's top) in a git repository, `.ignore`
//! files anywhere, git's `info/exclude` and global excludes; hidden files and folders skipped;
//! symlinks neither followed nor listed. When a pattern names a hidden file, hidden ones are
//! looked at, but a `.git` folder never is, nor a path hidden from the model
//! (`Workspace::hides`: keel's config and state, the person's credentials), whatever the
//! pattern: the walk does not go into one, and no file in one is opened or listed.
//!
//! The walk lists names by path; each file is then used through the workspace's descriptor
//! (`beneath`, with no symlink anywhere on the way), so a folder swapped for a symlink during
//! the walk makes its files fail to open (and its names fail the look `glob` gives the files it
//! shows): nothing outside is read or listed.

use super::SearchError;
use crate::runtime::{Workspace, beneath};
use ignore::{DirEntry, ParallelVisitor, ParallelVisitorBuilder, WalkBuilder, WalkState};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::SystemTime;
use tokio_util::sync::CancellationToken;

/// git's folder, never searched even where hidden files are.
const GIT_DIR: &str = ".git";
/// The walk's threads at most (ripgrep's own cap).
const MAX_THREADS: usize = 12;

/// The file or folder a search looks in.
#[derive(Debug, Clone)]
pub(super) struct Scope {
    /// Its real path, inside the workspace.
    pub base: PathBuf,
    /// It is a file (grep searches just that file).
    pub is_file: bool,
}

impl Scope {
    /// The scope `path` names (the workspace's root when `None`), which must exist.
    pub fn of(workspace: &Workspace, path: Option<&str>) -> Result<Self, SearchError> {
        let Some(path) = path.filter(|path| !path.is_empty()) else {
            return Ok(Self { base: workspace.root().to_path_buf(), is_file: false });
        };
        let base = workspace.resolve(path)?;
        let relative = workspace.below(&base).map_err(|_| missing(path))?;
        let meta = beneath::metadata(workspace.dir(), relative)
            .ok()
            .flatten()
            .ok_or_else(|| missing(path))?;
        if meta.is_dir() {
            return Ok(Self { base, is_file: false });
        }
        if meta.is_file() {
            return Ok(Self { base, is_file: true });
        }
        let kind = if meta.file_type().is_symlink() { "a symlink" } else { "not a regular file" };
        Err(SearchError::NotSearchable { path: path.to_owned(), kind })
    }
}

fn missing(path: &str) -> SearchError {
    SearchError::NotFound { path: path.to_owned() }
}

/// A walk from `root` (a real path inside `workspace`), by ripgrep's rules; `hidden`: hidden
/// files and folders are looked at too (`.git` still is not). What is hidden from the model is
/// never looked at.
pub(super) fn walk(workspace: &Workspace, root: &Path, hidden: bool) -> WalkBuilder {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(MAX_THREADS);
    let mut builder = WalkBuilder::new(root);
    builder.hidden(!hidden).follow_links(false).threads(threads);
    let hidden_from_model = workspace.hidden_inside().clone();
    builder.filter_entry(move |entry| {
        let git = hidden && entry.depth() > 0 && entry.file_name() == GIT_DIR;
        !git && hidden_from_model.holding(entry.path()).is_none()
    });
    builder
}

/// What looking at one file came to.
pub(super) enum Looked<T> {
    /// It counts, with what was found in it.
    Found(T),
    /// It was looked at and holds nothing.
    Nothing,
    /// It is binary, so it was not searched.
    Binary,
    /// It could not be opened or read.
    Unreadable,
    /// The filter passed it over: it does not count as looked at.
    Skipped,
}

/// What a walk found, over all its threads.
#[derive(Debug)]
pub(super) struct Walked<T> {
    pub found: Vec<T>,
    /// Files looked at.
    pub files: u64,
    /// Binary files passed over.
    pub binary: u64,
    /// Files and folders that could not be read.
    pub unreadable: u64,
}

impl<T> Default for Walked<T> {
    fn default() -> Self {
        Self { found: Vec::new(), files: 0, binary: 0, unreadable: 0 }
    }
}

impl<T> Walked<T> {
    fn add(&mut self, other: &mut Walked<T>) {
        self.found.append(&mut other.found);
        self.files += other.files;
        self.binary += other.binary;
        self.unreadable += other.unreadable;
    }
}

/// Walks `builder`'s files in parallel, each thread looking at its files with a function `make`
/// gives it; stops early, with [`SearchError::Interrupted`], when `stop` fires.
pub(super) fn visit<T, F, M>(
    builder: &WalkBuilder,
    stop: &CancellationToken,
    make: M,
) -> Result<Walked<T>, SearchError>
where
    T: Send,
    F: FnMut(&DirEntry) -> Looked<T> + Send,
    M: Fn() -> F,
{
    let out = Mutex::new(Walked::default());
    let mut visitors = Visitors { make, out: &out, stop };
    builder.build_parallel().visit(&mut visitors);
    if stop.is_cancelled() {
        return Err(SearchError::Interrupted);
    }
    Ok(out.into_inner().unwrap_or_else(PoisonError::into_inner))
}

struct Visitors<'a, T, M> {
    make: M,
    out: &'a Mutex<Walked<T>>,
    stop: &'a CancellationToken,
}

impl<'s, 'a: 's, T, F, M> ParallelVisitorBuilder<'s> for Visitors<'a, T, M>
where
    T: Send + 'a,
    F: FnMut(&DirEntry) -> Looked<T> + Send + 's,
    M: Fn() -> F,
{
    fn build(&mut self) -> Box<dyn ParallelVisitor + 's> {
        Box::new(Visitor {
            look: (self.make)(),
            local: Walked::default(),
            out: self.out,
            stop: self.stop,
        })
    }
}

/// One thread's visitor: it keeps what it finds to itself and hands it over when the walk ends.
struct Visitor<'a, T, F> {
    look: F,
    local: Walked<T>,
    out: &'a Mutex<Walked<T>>,
    stop: &'a CancellationToken,
}

impl<T: Send, F: FnMut(&DirEntry) -> Looked<T> + Send> ParallelVisitor for Visitor<'_, T, F> {
    fn visit(&mut self, entry: Result<DirEntry, ignore::Error>) -> WalkState {
        if self.stop.is_cancelled() {
            return WalkState::Quit;
        }
        let entry = match entry {
            Ok(entry) => entry,
            Err(err) => {
                // A rule that does not parse is not a file that could not be read.
                if err.io_error().is_some() {
                    self.local.unreadable += 1;
                }
                return WalkState::Continue;
            }
        };
        if !entry.file_type().is_some_and(|kind| kind.is_file()) {
            return WalkState::Continue;
        }
        match (self.look)(&entry) {
            Looked::Found(found) => {
                self.local.files += 1;
                self.local.found.push(found);
            }
            Looked::Nothing => self.local.files += 1,
            Looked::Binary => {
                self.local.files += 1;
                self.local.binary += 1;
            }
            Looked::Unreadable => self.local.unreadable += 1,
            Looked::Skipped => {}
        }
        WalkState::Continue
    }
}

impl<T, F> Drop for Visitor<'_, T, F> {
    fn drop(&mut self) {
        self.out.lock().unwrap_or_else(PoisonError::into_inner).add(&mut self.local);
    }
}

/// Opens the regular file `path` (a walked path, inside the workspace) through the workspace's
/// descriptor, with its time of last change; `None` when it cannot be, or is no longer a
/// regular file.
pub(super) fn open(workspace: &Workspace, path: &Path) -> Option<(File, SystemTime)> {
    if workspace.hides(path) {
        return None;
    }
    let relative = workspace.below(path).ok()?;
    let file = beneath::open_for_reading(workspace.dir(), relative).ok()?;
    let meta = file.metadata().ok().filter(std::fs::Metadata::is_file)?;
    Some((file, modified_time(&meta)))
}

/// Whether `path` (a walked path) is a regular file inside the workspace, looked at through the
/// workspace's descriptor with no symlink on the way.
pub(super) fn is_inside(workspace: &Workspace, path: &Path) -> bool {
    if workspace.hides(path) {
        return false;
    }
    let relative = workspace.below(path).ok();
    let meta = relative.and_then(|relative| beneath::metadata(workspace.dir(), relative).ok());
    meta.flatten().is_some_and(|meta| meta.is_file())
}

/// Whether `path` is a folder inside the workspace, with no symlink on the way to it.
pub(super) fn is_real_folder(workspace: &Workspace, path: &Path) -> bool {
    let relative = workspace.below(path).ok();
    let meta = relative.and_then(|relative| beneath::metadata(workspace.dir(), relative).ok());
    meta.flatten().is_some_and(|meta| meta.is_dir())
}

/// A file's time of last change (the epoch where the file system keeps none).
pub(super) fn modified_time(meta: &std::fs::Metadata) -> SystemTime {
    meta.modified().unwrap_or(SystemTime::UNIX_EPOCH)
}

/// `items` newest first (by time of last change), ties by path.
pub(super) fn newest_first<T>(items: &mut [T], key: impl Fn(&T) -> (SystemTime, &Path)) {
    items.sort_by(|a, b| {
        let (a_time, a_path) = key(a);
        let (b_time, b_path) = key(b);
        b_time.cmp(&a_time).then_with(|| a_path.cmp(b_path))
    });
}
