//! The empty folders a sandbox mounts on to cover a missing `.keel` or `.git/hooks`, removed once
//! no sandbox uses them.
//!
//! Two commands' sandboxes may share a placeholder (one left a background job running). Removing
//! it under a running sandbox would detach that sandbox's read-only mount, and let its command
//! create the folder. So each supervisor holds a shared lock on the placeholder's parent folder
//! while its sandbox lives, and removes the placeholder only if it then gets the lock alone.

use nix::fcntl::{Flock, FlockArg};
use std::fs::File;
use std::path::{Path, PathBuf};

/// Shared locks on the placeholders' parent folders, held while the sandbox lives.
pub struct InUse {
    _locks: Vec<Flock<File>>,
}

/// Takes a shared lock on each placeholder's parent folder, waiting while another supervisor
/// removes a placeholder there.
pub fn hold(placeholders: &[PathBuf]) -> InUse {
    let locks =
        parents(placeholders).filter_map(|file| Flock::lock(file, FlockArg::LockShared).ok());
    InUse { _locks: locks.collect() }
}

/// Removes each placeholder that is still empty, when no other sandbox holds its parent.
pub fn remove(placeholders: &[PathBuf]) {
    for placeholder in placeholders {
        let Some(parent) = placeholder.parent().and_then(open) else {
            continue;
        };
        if let Ok(_alone) = Flock::lock(parent, FlockArg::LockExclusiveNonblock) {
            // Only an empty folder goes: whatever someone put there since stays.
            let _ = std::fs::remove_dir(placeholder);
        }
    }
}

fn parents(placeholders: &[PathBuf]) -> impl Iterator<Item = File> + '_ {
    placeholders.iter().filter_map(|placeholder| placeholder.parent().and_then(open))
}

fn open(folder: &Path) -> Option<File> {
    File::open(folder).ok()
}
