//! What undo would revert, shown without touching anything (`/diff`): the newest prompt that
//! changed files, each file's change from before that prompt to what it left — what its
//! commands did, from the two workspace snapshots, together with what the file tools recorded
//! before the first of them.

use super::shadow::ObjectId;
use super::{UndoContext, UndoStack};
use crate::runtime::change::FileDiff;
use std::collections::HashMap;

/// The newest undoable prompt's changes, a diff a file, and what the person should know about
/// how far they reach.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TurnChanges {
    pub diffs: Vec<FileDiff>,
    pub notes: Vec<String>,
}

/// One path's content before the prompt and after it (`None`: absent).
type Sides = (Option<Vec<u8>>, Option<Vec<u8>>);

impl UndoStack {
    /// What the next undo would revert; `None` when there is nothing to undo.
    pub fn newest_changes(&self, context: UndoContext<'_>) -> Option<TurnChanges> {
        let turn = self.turns.iter().rev().find(|turn| !turn.is_empty())?;
        let mut order: Vec<String> = Vec::new();
        let mut sides: HashMap<String, Sides> = HashMap::new();
        let mut notes = Vec::new();
        let snapshots = turn.before.as_ref().zip(turn.after.as_ref());
        let records = if snapshots.is_some() { turn.early_files() } else { &turn.files[..] };
        for change in records {
            let path = context.workspace.display(&change.path);
            let entry = sides.entry(path.clone()).or_insert_with(|| {
                order.push(path);
                (change.before.clone(), None)
            });
            entry.1 = Some(change.after.clone());
        }
        if let Some((before, after)) = snapshots {
            match by_snapshots(context, before, after) {
                Ok(changed) => {
                    for (path, (then, now)) in changed {
                        let entry = sides.entry(path.clone()).or_insert_with(|| {
                            order.push(path);
                            (then, None)
                        });
                        entry.1 = now;
                    }
                }
                Err(why) => notes.push(format!(
                    "What commands changed cannot be shown ({why}); this is what write_file and \
                     edit_file changed."
                )),
            }
        } else if turn.blind || turn.before.is_some() {
            notes.push(
                "No workspace snapshot was taken around that prompt's commands, so this is only \
                 what write_file and edit_file changed."
                    .to_owned(),
            );
        }
        let diffs = order
            .iter()
            .filter_map(|path| {
                let (then, now) = sides.get(path)?;
                (then != now).then(|| FileDiff::new(path, then.as_deref(), now.as_deref()))
            })
            .collect();
        Some(TurnChanges { diffs, notes })
    }
}

/// The paths that differ between two snapshots, each with its content before and after.
fn by_snapshots(
    context: UndoContext<'_>,
    before: &ObjectId,
    after: &ObjectId,
) -> Result<Vec<(String, Sides)>, String> {
    let shadow = context.shadow.ok_or("this session's workspace snapshots are not available")?;
    let changes = shadow.changes(before, after).map_err(|err| err.to_string())?;
    let blobs = shadow.blobs(&changes).map_err(|err| err.to_string())?;
    let content = |entry: &Option<super::shadow::Entry>| {
        entry.as_ref().and_then(|entry| blobs.get(&entry.id).cloned())
    };
    Ok(changes
        .iter()
        .map(|change| {
            let path = String::from_utf8_lossy(&change.path).into_owned();
            (path, (content(&change.before), content(&change.after)))
        })
        .collect())
}
