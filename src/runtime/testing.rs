//! For unit tests: a temporary folder named as the kernel reaches it, and files and folders put
//! in it in one line.

use std::path::{Path, PathBuf};
use tempfile::TempDir;

/// A new temporary folder (removed when the first half is dropped) and its real path: `/tmp`
/// may be reached through a symlink.
pub fn folder() -> (TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().canonicalize().unwrap();
    (dir, real)
}

/// Makes each of `folders` below `root`, with the folders above it.
pub fn folders(root: &Path, folders: &[&str]) {
    for folder in folders {
        std::fs::create_dir_all(root.join(folder)).unwrap();
    }
}

/// Writes each `(path, content)` of `files` below `root`, making the folders above it.
pub fn files(root: &Path, files: &[(&str, &str)]) {
    for (path, content) in files {
        let path = root.join(path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(path, content).unwrap();
    }
}
