//! Why a path in the workspace could not be used: outside it, through a symlink out of it,
//! hidden, protected, not a regular file, or an I/O failure on the way. The text is written for
//! the model to act on; a tool's own errors wrap it (the tools' `ToolError::Path`).

use std::path::PathBuf;

/// Why a workspace path could not be resolved, opened or written.
#[derive(Debug, thiserror::Error)]
pub enum PathError {
    #[error(
        "Path `{path}` is outside the workspace {}; tools may only use files inside it.",
        .root.display()
    )]
    OutsideWorkspace { path: String, root: PathBuf },
    #[error(
        "Path `{path}` leads through a symlink to {}, which is outside the workspace {}.",
        .target.display(),
        .root.display()
    )]
    SymlinkEscape { path: String, target: PathBuf, root: PathBuf },
    #[error("Invalid path `{path}`: {reason}.")]
    InvalidPath { path: String, reason: String },
    #[error("{path}: {source}")]
    Io { path: String, source: std::io::Error },
    #[error("`{path}` does not exist (write_file creates new files).")]
    NotFound { path: String },
    #[error("`{path}` is a directory, not a file; list it with bash (`ls`).")]
    IsDirectory { path: String },
    #[error(
        "`{path}` is {kind}, not a regular file; the file tools only read and write regular files \
         (reading a FIFO or a device could wait forever)."
    )]
    NotRegularFile { path: String, kind: &'static str },
    #[error("`{path}` is {place}, which keel never changes: {reason}.")]
    ProtectedPath { path: String, place: String, reason: &'static str },
    #[error(
        "`{path}` is hidden from the model: {reason}. keel neither reads nor writes it for you, \
         and commands see it empty; only the person can let it through, by {how}."
    )]
    Hidden { path: String, reason: String, how: String },
    #[error("Could not write `{path}`: {step}{source}; {left}.")]
    WriteFailed { path: String, step: &'static str, source: std::io::Error, left: String },
}
