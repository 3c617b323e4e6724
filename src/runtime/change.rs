//! A file's change: what a write left and what the file held before ([`FileChange`], what undo
//! records of a file tool's call), and as a unified diff with its counts of lines added and
//! removed ([`FileDiff`]): what the approval box shows before a write or an edit, what the
//! conversation and the pager show after one, and what `/diff` shows of a prompt's changes.
//!
//! The text is `similar`'s unified diff with `a/` and `b/` headers (`/dev/null` for a file that
//! did not exist, or no longer does); its hunk headers carry the line numbers a front end draws
//! beside each line. Content too large to diff quickly is summarised in one line instead.

use serde::Serialize;
use similar::{ChangeTag, TextDiff};
use std::path::PathBuf;

/// Lines of unchanged context around each change.
pub const CONTEXT_LINES: usize = 3;
/// Content beyond this size is summarised rather than diffed, to keep every view quick.
pub const MAX_DIFF_BYTES: usize = 1024 * 1024;

/// One file a call wrote, and what it held before (`None`: it did not exist).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FileChange {
    pub path: PathBuf,
    pub before: Option<Vec<u8>>,
    pub after: Vec<u8>,
    /// How many folders above the file the write created (it made them to put the file in).
    pub created_folders: usize,
}

/// One file's change, as a diff.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileDiff {
    /// The path relative to the workspace, as the model and the person read it.
    pub path: String,
    /// Lines added and removed.
    pub added: usize,
    pub removed: usize,
    /// The unified diff (or, for content too large or not text, one line that says so).
    pub unified: String,
}

impl FileDiff {
    /// The change of `path` from `before` (`None`: it did not exist) to `after` (`None`: it was
    /// removed).
    pub fn new(path: &str, before: Option<&[u8]>, after: Option<&[u8]>) -> Self {
        let size = |bytes: Option<&[u8]>| bytes.map_or(0, <[u8]>::len);
        let (before_len, after_len) = (size(before), size(after));
        let summary =
            |unified: String| Self { path: path.to_owned(), added: 0, removed: 0, unified };
        if before_len > MAX_DIFF_BYTES || after_len > MAX_DIFF_BYTES {
            return summary(format!(
                "{path}: {before_len} bytes → {after_len} bytes (too large to show as a diff)\n"
            ));
        }
        let old = before.map(String::from_utf8_lossy).unwrap_or_default();
        let new = after.map(String::from_utf8_lossy).unwrap_or_default();
        if before.is_some() && after.is_some() && old == new {
            return summary(format!("{path}: no changes\n"));
        }
        let old_header = if before.is_some() { format!("a/{path}") } else { "/dev/null".into() };
        let new_header = if after.is_some() { format!("b/{path}") } else { "/dev/null".into() };
        let diff = TextDiff::from_lines(old.as_ref(), new.as_ref());
        let (mut added, mut removed) = (0, 0);
        for change in diff.iter_all_changes() {
            match change.tag() {
                ChangeTag::Insert => added += 1,
                ChangeTag::Delete => removed += 1,
                ChangeTag::Equal => {}
            }
        }
        let unified = diff
            .unified_diff()
            .context_radius(CONTEXT_LINES)
            .header(&old_header, &new_header)
            .to_string();
        if unified.is_empty() {
            // Only an empty file made or removed diffs to nothing.
            let what = if after.is_some() { "new empty file" } else { "empty file removed" };
            return summary(format!("{path}: {what}\n"));
        }
        Self { path: path.to_owned(), added, removed, unified }
    }

    /// What a file tool's recorded change did, its path as `workspace` shows it.
    pub fn of_change(workspace: &crate::runtime::Workspace, change: &FileChange) -> Self {
        let path = workspace.display(&change.path);
        Self::new(&path, change.before.as_deref(), Some(&change.after))
    }

    /// `+3 −1`: the counts as the conversation's folded line shows them.
    pub fn counts(&self) -> String {
        format!("+{} −{}", self.added, self.removed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_edit_counts_its_lines_and_carries_line_numbers() {
        let diff = FileDiff::new("app.py", Some(b"a\nb\nc\n"), Some(b"a\nB\nc\nd\n"));
        assert_eq!((diff.added, diff.removed), (2, 1));
        assert_eq!(diff.counts(), "+2 −1");
        assert!(diff.unified.starts_with("--- a/app.py\n+++ b/app.py\n@@ -1,3 +1,4 @@\n"));
    }

    #[test]
    fn new_removed_unchanged_and_huge_files_read_plainly() {
        let new = FileDiff::new("n.txt", None, Some(b"x\n"));
        assert!(new.unified.starts_with("--- /dev/null\n+++ b/n.txt\n"), "{}", new.unified);
        let gone = FileDiff::new("g.txt", Some(b"x\n"), None);
        assert!(gone.unified.contains("+++ /dev/null"), "{}", gone.unified);
        assert_eq!(gone.removed, 1);
        assert_eq!(FileDiff::new("s", Some(b"x"), Some(b"x")).unified, "s: no changes\n");
        assert_eq!(FileDiff::new("e", None, Some(b"")).unified, "e: new empty file\n");
        let big = vec![b'x'; MAX_DIFF_BYTES + 1];
        assert!(FileDiff::new("b", None, Some(&big)).unified.contains("too large"));
    }
}
