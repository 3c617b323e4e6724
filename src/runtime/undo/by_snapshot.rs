//! Undo from two workspace snapshots: everything that differs between the one taken before a
//! turn's first command and the one taken after the turn — bash's changes included — is put
//! back, unless it no longer holds what the turn left there.

use super::place::{CHANGED_SINCE, Content, Place, remove_created_folders};
use super::report::Outcome;
use super::shadow::{Entry, Kind, ObjectId, Shadow, ShadowError, TreeChange};
use crate::runtime::Workspace;
use std::collections::HashMap;

/// Works out the changes from `before` to `after` and puts back every path that still holds
/// what `after` has. Reads everything it needs from the shadow repository before it touches a
/// file, so a failure there changes nothing.
pub(super) fn undo(
    workspace: &Workspace,
    shadow: &Shadow,
    before: &ObjectId,
    after: &ObjectId,
) -> Result<Vec<(String, Outcome)>, ShadowError> {
    let mut changes = shadow.changes(before, after)?;
    let blobs = shadow.blobs(&changes)?;
    // Removals first: a file may give way to a folder of the same name, or the other way round.
    changes.sort_by_key(|change| change.before.is_some());
    let mut outcomes = Vec::with_capacity(changes.len());
    let mut folders_before = None;
    for change in &changes {
        let outcome = undo_one(workspace, change, &blobs);
        if outcome.1 == Outcome::Deleted {
            let existed = folders_before.get_or_insert_with(|| shadow.folders(before).ok());
            if let Some(existed) = existed {
                remove_created_folders(workspace, &outcome.0, |folder| {
                    !existed.contains(folder.as_bytes())
                });
            }
        }
        outcomes.push(outcome);
    }
    Ok(outcomes)
}

fn undo_one(
    workspace: &Workspace,
    change: &TreeChange,
    blobs: &HashMap<ObjectId, Vec<u8>>,
) -> (String, Outcome) {
    let shown = String::from_utf8_lossy(&change.path).into_owned();
    let Ok(relative) = std::str::from_utf8(&change.path) else {
        return (shown, Outcome::LeftAlone("its name is not UTF-8 text".to_owned()));
    };
    let place = match Place::check(workspace, relative) {
        Ok(place) => place,
        Err(why) => return (shown, Outcome::LeftAlone(why)),
    };
    let shown = place.display().to_owned();
    let (now, then) =
        match (content(change.after.as_ref(), blobs), content(change.before.as_ref(), blobs)) {
            (Ok(now), Ok(then)) => (now, then),
            (Err(why), _) | (_, Err(why)) => return (shown, Outcome::LeftAlone(why)),
        };
    match place.holds(now) {
        Ok(true) => {}
        Ok(false) => return (shown, Outcome::LeftAlone(CHANGED_SINCE.to_owned())),
        Err(why) => return (shown, Outcome::LeftAlone(why)),
    }
    let done = match then {
        Content::Absent => place.remove().map(|()| Outcome::Deleted),
        Content::File(bytes) => {
            let executable = change.before.as_ref().map(|entry| entry.kind == Kind::Executable);
            if matches!(now, Content::Link(_))
                && let Err(why) = place.remove()
            {
                return (shown, Outcome::LeftAlone(why));
            }
            place.write(bytes, executable).map(|()| back(&now))
        }
        Content::Link(target) => {
            let cleared = if now == Content::Absent { Ok(()) } else { place.remove() };
            cleared.and_then(|()| place.link(target)).map(|()| back(&now))
        }
    };
    (shown, done.unwrap_or_else(Outcome::LeftAlone))
}

/// How a path put back came back: made again where the turn had removed it, else restored.
fn back(now: &Content<'_>) -> Outcome {
    if *now == Content::Absent { Outcome::Recreated } else { Outcome::Restored }
}

/// What one side of a change holds, from the blobs read.
fn content<'a>(
    entry: Option<&Entry>,
    blobs: &'a HashMap<ObjectId, Vec<u8>>,
) -> Result<Content<'a>, String> {
    let Some(entry) = entry else { return Ok(Content::Absent) };
    let bytes = || {
        blobs
            .get(&entry.id)
            .map(Vec::as_slice)
            .ok_or_else(|| "its snapshot is missing from keel's state".to_owned())
    };
    match entry.kind {
        Kind::File | Kind::Executable => bytes().map(Content::File),
        Kind::Symlink => bytes().map(Content::Link),
        Kind::Other => Err("it is a nested git repository, which undo leaves to git".to_owned()),
    }
}
