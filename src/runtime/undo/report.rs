//! What one undo did, for the person: every path relative to the workspace, in three lists.

/// What one undo did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UndoReport {
    /// A prompt's changes were taken off the stack (false: there was nothing to undo).
    pub undid: bool,
    /// Files put back as they were before the prompt.
    pub restored: Vec<String>,
    /// Files the prompt created, removed again.
    pub deleted: Vec<String>,
    /// Files the prompt removed, made again as they were.
    pub recreated: Vec<String>,
    /// Files left as they are, with the reason (most often: changed by someone since).
    pub left_alone: Vec<(String, String)>,
    /// What the person should know about how far this undo reached.
    pub notes: Vec<String>,
}

/// How one path came out of an undo.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Outcome {
    Restored,
    Deleted,
    Recreated,
    LeftAlone(String),
}

impl UndoReport {
    /// Whether any file was put back or removed.
    pub fn changed_files(&self) -> bool {
        !self.restored.is_empty() || !self.deleted.is_empty() || !self.recreated.is_empty()
    }

    /// Files this undo wrote or removed, and files it refused to touch, as one list.
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        self.restored
            .iter()
            .chain(&self.deleted)
            .chain(&self.recreated)
            .chain(self.left_alone.iter().map(|(path, _)| path))
            .map(String::as_str)
    }

    /// Files listed once each, in the order met; a later outcome for the same path replaces an
    /// earlier one (undo walks a prompt's changes newest first, so the oldest decides).
    pub(super) fn from_outcomes(outcomes: Vec<(String, Outcome)>) -> Self {
        let mut order: Vec<(String, Outcome)> = Vec::new();
        for (path, outcome) in outcomes {
            match order.iter_mut().find(|(seen, _)| *seen == path) {
                // A path left alone once stays left alone: part of it was not put back.
                Some((_, Outcome::LeftAlone(_))) => {}
                Some((_, earlier)) => *earlier = outcome,
                None => order.push((path, outcome)),
            }
        }
        let mut report = Self { undid: true, ..Self::default() };
        for (path, outcome) in order {
            match outcome {
                Outcome::Restored => report.restored.push(path),
                Outcome::Deleted => report.deleted.push(path),
                Outcome::Recreated => report.recreated.push(path),
                Outcome::LeftAlone(why) => report.left_alone.push((path, why)),
            }
        }
        report
    }

    /// What the person reads: a line per file.
    pub fn summary(&self) -> String {
        let mut lines = Vec::new();
        if self.undid {
            lines.push("Undid the last prompt that changed files:".to_owned());
            lines.extend(self.restored.iter().map(|path| format!("  restored {path}")));
            lines.extend(self.deleted.iter().map(|path| format!("  deleted {path}")));
            lines.extend(self.recreated.iter().map(|path| format!("  re-created {path}")));
            lines.extend(
                self.left_alone.iter().map(|(path, why)| format!("  left {path} alone: {why}")),
            );
            if lines.len() == 1 {
                lines.push("  no file needed changing back".to_owned());
            }
        } else {
            lines.push("Nothing to undo.".to_owned());
        }
        lines.extend(self.notes.iter().cloned());
        lines.join("\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_oldest_change_to_a_path_decides_and_left_alone_sticks() {
        let report = UndoReport::from_outcomes(vec![
            ("a".into(), Outcome::Restored),
            ("b".into(), Outcome::LeftAlone("changed".into())),
            ("a".into(), Outcome::Deleted),
            ("b".into(), Outcome::Restored),
        ]);
        assert_eq!(report.deleted, vec!["a".to_owned()]);
        assert!(report.restored.is_empty());
        assert_eq!(report.left_alone, vec![("b".to_owned(), "changed".to_owned())]);
        assert!(report.summary().contains("left b alone: changed"));
        assert_eq!(UndoReport::default().summary(), "Nothing to undo.");
    }
}
