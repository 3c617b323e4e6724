//! Taking back what a prompt changed, one prompt at a time.
//!
//! Each prompt's turn is one entry on the [`UndoStack`]. What `write_file` and `edit_file`
//! change, their own records undo exactly: each file's content before and after. Only a command
//! can change what no record holds, so a turn that runs one also holds two snapshots of the
//! workspace in keel's shadow repository ([`shadow`]): one taken right before its first command,
//! one after the turn. Undo puts back every path that differs between them — whatever changed
//! it, bash included — then the file records from before the first snapshot, and leaves alone
//! any path that no longer holds what the turn left there (someone changed it since), as well
//! as what git ignores. Without snapshots (no git), the file records are all undo has. Either
//! way every path is checked against the workspace again right before it is touched (`place`),
//! so a forged log cannot reach outside it.

mod by_records;
mod by_snapshot;
mod git_output;
mod index_file;
mod index_note;
mod place;
mod preview;
mod report;
pub mod shadow;
mod tree_memo;
mod unchanged;

pub use preview::TurnChanges;
pub use report::UndoReport;
pub use shadow::{ObjectId, Shadow, ShadowError};

use crate::runtime::Workspace;
use crate::runtime::change::FileChange;

/// The name of git's per-folder ignore rules.
const IGNORE_FILE: &str = ".gitignore";
/// Said when a prompt's commands changed ignore rules: what only the new rules ignore is beyond
/// the snapshots.
const IGNORED_BY_NEW_RULES: &str = "That prompt's commands changed a .gitignore: files it \
created that only the new rules ignore were never snapshotted, so undo left them as they are \
(files the snapshots already held were restored whatever the rules say).";

/// What an undo works on.
#[derive(Debug, Clone, Copy)]
pub struct UndoContext<'a> {
    pub workspace: &'a Workspace,
    /// The shadow repository the snapshots are in, if the session has one.
    pub shadow: Option<&'a Shadow>,
}

/// The prompts' changes, oldest first.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UndoStack {
    turns: Vec<Turn>,
}

/// One prompt's changes.
#[derive(Debug, Clone, Default, PartialEq)]
struct Turn {
    /// The workspace snapshot taken before the turn's first command (or, in a session log
    /// written before snapshots waited for a command, before the prompt).
    before: Option<ObjectId>,
    /// How many of `files` were recorded before `before` was taken: those the snapshots do not
    /// cover.
    records_before: usize,
    /// The workspace snapshot taken after the turn, when it ran a command.
    after: Option<ObjectId>,
    /// A command ran with no snapshot before it (none could be taken): what it changed is
    /// beyond undo.
    blind: bool,
    /// What the file tools reported, oldest first.
    files: Vec<FileChange>,
}

impl Turn {
    /// Whether undoing this turn would change nothing.
    fn is_empty(&self) -> bool {
        match (&self.before, &self.after) {
            (Some(before), Some(after)) => before == after && self.early_files().is_empty(),
            _ => self.files.is_empty(),
        }
    }

    /// The file records from before the first snapshot.
    fn early_files(&self) -> &[FileChange] {
        &self.files[..self.records_before.min(self.files.len())]
    }
}

impl UndoStack {
    /// Starts a prompt's turn (at its first tool that can change the workspace), with the
    /// snapshot taken before it if there is one; a turn before it that changed nothing leaves no
    /// entry.
    pub fn begin_turn(&mut self, before: Option<ObjectId>) {
        if self.turns.last().is_some_and(Turn::is_empty) {
            self.turns.pop();
        }
        self.turns.push(Turn { before, ..Turn::default() });
    }

    /// The snapshot taken before the newest turn's first command (`None`: none could be taken).
    /// What the turn's file tools changed until now is undone from their records.
    pub fn before_commands(&mut self, before: Option<ObjectId>) {
        if self.turns.is_empty() {
            self.turns.push(Turn::default());
        }
        let Some(turn) = self.turns.last_mut() else { return };
        match before {
            Some(before) => {
                turn.records_before = turn.files.len();
                turn.before = Some(before);
            }
            None => turn.blind = true,
        }
    }

    /// The snapshot after the newest turn (taken again when a turn cut off is carried on).
    pub fn end_turn(&mut self, after: ObjectId) {
        if let Some(turn) = self.turns.last_mut() {
            turn.after = Some(after);
        }
    }

    /// Whether the newest turn has a snapshot before it but none after: it was cut off.
    pub fn awaits_end(&self) -> bool {
        self.turns.last().is_some_and(|turn| turn.before.is_some() && turn.after.is_none())
    }

    /// Adds file records to the newest turn.
    pub fn record(&mut self, changes: impl IntoIterator<Item = FileChange>) {
        if self.turns.is_empty() {
            self.turns.push(Turn::default());
        }
        if let Some(turn) = self.turns.last_mut() {
            turn.files.extend(changes);
        }
    }

    /// Forgets the newest turn that changed anything, without restoring it (replaying an
    /// undo). Returns whether there was one.
    pub fn forget_last(&mut self) -> bool {
        self.take_last().is_some()
    }

    /// The `.gitignore` files the newest turn changed through the file tools (absolute paths):
    /// its snapshots must not take their rules as a reason to leave a file out.
    pub fn ignore_rules_written(&self) -> Vec<std::path::PathBuf> {
        let Some(turn) = self.turns.last() else { return Vec::new() };
        turn.files
            .iter()
            .filter(|change| change.path.file_name().is_some_and(|name| name == IGNORE_FILE))
            .filter(|change| change.before.as_deref() != Some(change.after.as_slice()))
            .map(|change| change.path.clone())
            .collect()
    }

    /// Whether no turn left changes to undo.
    pub fn is_empty(&self) -> bool {
        self.turns.iter().all(Turn::is_empty)
    }

    /// Puts back what the newest turn that changed anything changed, and forgets that turn.
    pub fn undo(&mut self, context: UndoContext<'_>) -> UndoReport {
        let Some(turn) = self.take_last() else {
            return UndoReport::default();
        };
        let workspace = context.workspace;
        let mut notes = Vec::new();
        if let (Some(before), Some(after)) = (&turn.before, &turn.after) {
            match context.shadow.map(|shadow| by_snapshot::undo(workspace, shadow, before, after)) {
                Some(Ok(mut outcomes)) => {
                    let rules_changed = outcomes.iter().any(|(path, _)| {
                        std::path::Path::new(path).file_name().is_some_and(|n| n == IGNORE_FILE)
                    });
                    // What the file tools did before the first command, after what came since.
                    outcomes.extend(by_records::undo(workspace, turn.early_files()));
                    let mut report = UndoReport::from_outcomes(outcomes);
                    if rules_changed {
                        report.notes.push(IGNORED_BY_NEW_RULES.to_owned());
                    }
                    return report;
                }
                Some(Err(err)) => notes.push(format!(
                    "The workspace snapshots could not be read ({err}), so only what write_file \
                     and edit_file changed was undone, not what bash did."
                )),
                None => notes.push(
                    "This session's workspace snapshots are not available, so only what \
                     write_file and edit_file changed was undone, not what bash did."
                        .to_owned(),
                ),
            }
        } else if turn.blind || turn.before.is_some() {
            notes.push(
                "No workspace snapshot was taken around that prompt's commands (is git \
                 installed?), so only what write_file and edit_file changed was undone, not what \
                 bash did."
                    .to_owned(),
            );
        }
        let mut report = UndoReport::from_outcomes(by_records::undo(workspace, &turn.files));
        report.notes = notes;
        report
    }

    fn take_last(&mut self) -> Option<Turn> {
        while self.turns.last().is_some_and(Turn::is_empty) {
            self.turns.pop();
        }
        self.turns.pop()
    }
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
            created_folders: 0,
        }
    }

    #[test]
    fn undo_restores_the_last_turn_then_the_one_before() {
        let dir = tempfile::tempdir().unwrap();
        let workspace = Workspace::new(dir.path()).unwrap();
        let context = UndoContext { workspace: &workspace, shadow: None };
        let a = workspace.root().join("a.txt");
        let b = workspace.root().join("b.txt");
        let mut stack = UndoStack::default();
        stack.begin_turn(None);
        stack.record([write(&a, None, "one")]);
        stack.begin_turn(None);
        stack.record([write(&a, Some("one"), "two"), write(&b, None, "new")]);
        stack.record([write(&a, Some("two"), "three")]);
        stack.begin_turn(None); // a prompt that changed nothing

        let report = stack.undo(context);
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "one");
        assert!(!b.exists());
        assert_eq!((report.restored, report.deleted), (vec!["a.txt".into()], vec!["b.txt".into()]));

        stack.undo(context);
        assert!(!a.exists());
        assert_eq!(stack.undo(context).summary(), "Nothing to undo.");
    }

    #[test]
    fn a_file_changed_since_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let workspace = Workspace::new(dir.path()).unwrap();
        let a = workspace.root().join("a.txt");
        let mut stack = UndoStack::default();
        stack.begin_turn(None);
        stack.record([write(&a, Some("mine"), "keel's")]);
        std::fs::write(&a, "someone else's").unwrap();
        let report = stack.undo(UndoContext { workspace: &workspace, shadow: None });
        assert!(report.restored.is_empty());
        assert_eq!(report.left_alone, vec![("a.txt".to_owned(), place::CHANGED_SINCE.to_owned())]);
        assert!(report.summary().contains("left a.txt alone"));
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "someone else's");
    }
}
