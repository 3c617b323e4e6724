//! Undo from the file records: what `write_file` and `edit_file` reported, each file's content
//! before and after, and the folders a write made for a new file. Exact for the file tools'
//! changes; what bash changed is beyond it (the snapshots cover that).

use super::place::{CHANGED_SINCE, Content, Place, remove_created_folders};
use super::report::Outcome;
use crate::runtime::Workspace;
use crate::runtime::change::FileChange;

/// Puts back the files of one prompt's records, newest change first.
pub(super) fn undo(workspace: &Workspace, changes: &[FileChange]) -> Vec<(String, Outcome)> {
    changes.iter().rev().map(|change| undo_one(workspace, change)).collect()
}

fn undo_one(workspace: &Workspace, change: &FileChange) -> (String, Outcome) {
    let shown = workspace.display(&change.path);
    let Ok(relative) = change.path.strip_prefix(workspace.root()) else {
        let why = "it is outside the workspace, so keel never touches it".to_owned();
        return (shown, Outcome::LeftAlone(why));
    };
    let Some(relative) = relative.to_str().filter(|relative| !relative.is_empty()) else {
        return (shown, Outcome::LeftAlone("its name is not UTF-8 text".to_owned()));
    };
    let place = match Place::check(workspace, relative) {
        Ok(place) => place,
        Err(why) => return (shown, Outcome::LeftAlone(why)),
    };
    if place.path() != change.path {
        let why = "its path now leads somewhere else (through a symlink)".to_owned();
        return (shown, Outcome::LeftAlone(why));
    }
    let shown = place.display().to_owned();
    match place.holds(Content::File(&change.after)) {
        Ok(true) => {}
        Ok(false) => return (shown, Outcome::LeftAlone(CHANGED_SINCE.to_owned())),
        Err(why) => return (shown, Outcome::LeftAlone(why)),
    }
    let done = match &change.before {
        Some(before) => place.write(before, None).map(|()| Outcome::Restored),
        None => place.remove().map(|()| {
            // The write made the nearest `created_folders` folders above the file.
            let mut left = change.created_folders;
            remove_created_folders(workspace, relative, |_| {
                let made = left > 0;
                left = left.saturating_sub(1);
                made
            });
            Outcome::Deleted
        }),
    };
    (shown, done.unwrap_or_else(Outcome::LeftAlone))
}
