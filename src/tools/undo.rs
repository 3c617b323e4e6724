//! Taking back what the tools wrote, one user turn at a time.
//!
//! `write_file` and `edit_file` report each file's content before and after the change. Undo walks
//! the last turn's changes newest first and puts every file back — unless it no longer holds what
//! keel wrote, in which case someone else changed it since and it is left alone.

use crate::tools::FileChange;
use std::path::PathBuf;

/// The changes of each user turn, oldest first.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UndoStack {
    turns: Vec<Vec<FileChange>>,
}

/// What one undo did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UndoReport {
    pub restored: Vec<PathBuf>,
    /// Files left alone, with the reason.
    pub skipped: Vec<(PathBuf, String)>,
}

impl UndoReport {
    /// One line for the person.
    pub fn summary(&self) -> String {
        if self.restored.is_empty() && self.skipped.is_empty() {
            return "Nothing to undo.".to_owned();
        }
        let mut parts = Vec::new();
        if !self.restored.is_empty() {
            let paths: Vec<String> =
                self.restored.iter().map(|path| path.display().to_string()).collect();
            parts.push(format!("Restored {}", paths.join(", ")));
        }
        for (path, why) in &self.skipped {
            parts.push(format!("left {} alone: {why}", path.display()));
        }
        parts.join("; ")
    }
}

impl UndoStack {
    /// Starts a new user turn; turns that change nothing leave no entry.
    pub fn begin_turn(&mut self) {
        if self.turns.last().is_none_or(|turn| !turn.is_empty()) {
            self.turns.push(Vec::new());
        }
    }

    pub fn record(&mut self, changes: impl IntoIterator<Item = FileChange>) {
        if self.turns.is_empty() {
            self.turns.push(Vec::new());
        }
        if let Some(turn) = self.turns.last_mut() {
            turn.extend(changes);
        }
    }

    /// Forgets the newest turn that changed any file, without restoring it (replaying an undo).
    pub fn forget_last(&mut self) -> Option<Vec<FileChange>> {
        while self.turns.last().is_some_and(Vec::is_empty) {
            self.turns.pop();
        }
        self.turns.pop()
    }

    /// Whether any turn left changes to undo.
    pub fn is_empty(&self) -> bool {
        self.turns.iter().all(Vec::is_empty)
    }

    /// Restores the files of the newest turn that changed any, and forgets that turn.
    pub fn undo(&mut self) -> UndoReport {
        let Some(changes) = self.forget_last() else {
            return UndoReport::default();
        };
        let mut report = UndoReport::default();
        for change in changes.iter().rev() {
            match restore(change) {
                Ok(()) => {
                    if !report.restored.contains(&change.path) {
                        report.restored.push(change.path.clone());
                    }
                }
                Err(why) => report.skipped.push((change.path.clone(), why)),
            }
        }
        report.restored.retain(|path| !report.skipped.iter().any(|(skipped, _)| skipped == path));
        report
    }
}

fn restore(change: &FileChange) -> Result<(), String> {
    let current = std::fs::read(&change.path).ok();
    if current.as_deref() != Some(change.after.as_slice()) {
        return Err("it was changed after keel wrote it".to_owned());
    }
    let result = match &change.before {
        Some(before) => std::fs::write(&change.path, before),
        None => std::fs::remove_file(&change.path),
    };
    result.map_err(|err| format!("could not restore it: {err}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &std::path::Path, before: Option<&str>, after: &str) -> FileChange {
        std::fs::write(path, after).unwrap();
        FileChange {
            path: path.to_owned(),
            before: before.map(|text| text.as_bytes().to_vec()),
            after: after.as_bytes().to_vec(),
        }
    }

    #[test]
    fn undo_restores_the_last_turn_then_the_one_before() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.txt");
        let b = dir.path().join("b.txt");
        let mut stack = UndoStack::default();
        stack.begin_turn();
        stack.record([write(&a, None, "one")]);
        stack.begin_turn();
        stack.record([write(&a, Some("one"), "two"), write(&b, None, "new")]);
        stack.record([write(&a, Some("two"), "three")]);

        let report = stack.undo();
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "one");
        assert!(!b.exists());
        assert_eq!(report.restored.len(), 2);

        stack.undo();
        assert!(!a.exists());
        assert_eq!(stack.undo().summary(), "Nothing to undo.");
    }

    #[test]
    fn a_file_changed_since_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.txt");
        let mut stack = UndoStack::default();
        stack.begin_turn();
        stack.record([write(&a, Some("mine"), "keel's")]);
        std::fs::write(&a, "someone else's").unwrap();
        let report = stack.undo();
        assert!(report.restored.is_empty());
        assert_eq!(report.skipped.len(), 1);
        assert!(report.summary().contains("changed after keel wrote it"));
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "someone else's");
    }
}
