//! Notes keel keeps beside a snapshot's private index, in its state folder (which commands
//! cannot write): each named by a suffix to the index's file name, written whole or not at all,
//! and dropped when the index starts again. What they say is up to their modules
//! ([`super::tree_memo`], [`super::unchanged`]).

use std::path::{Path, PathBuf};

/// The note `suffix` of `index`.
pub(super) fn path(index: &Path, suffix: &str) -> PathBuf {
    let mut name = index.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// The note's text, if there is one.
pub(super) fn read(index: &Path, suffix: &str) -> Option<String> {
    std::fs::read_to_string(path(index, suffix)).ok()
}

/// Writes the note through a temporary file renamed into place, so that a reader sees the old
/// note or the new one; when that fails there is no note at all (best effort: without it the
/// next snapshot does the work the note would have saved).
pub(super) fn write(index: &Path, suffix: &str, text: &str) {
    let note = path(index, suffix);
    let mut temporary = note.clone().into_os_string();
    temporary.push(format!(".{}.tmp", std::process::id()));
    let temporary = PathBuf::from(temporary);
    let written =
        std::fs::write(&temporary, text).and_then(|()| std::fs::rename(&temporary, &note));
    if written.is_err() {
        let _ = std::fs::remove_file(&temporary);
        forget(index, suffix);
    }
}

/// Drops the note.
pub(super) fn forget(index: &Path, suffix: &str) {
    let _ = std::fs::remove_file(path(index, suffix));
}

/// `bytes` as lowercase hex digits: how notes hold digests and checksums.
pub(super) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}
