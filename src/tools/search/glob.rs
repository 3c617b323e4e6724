//! `glob`: the workspace's files whose path matches a glob, newest first.
//!
//! The walk starts at the plain folders ahead of the pattern (`src/tools` for
//! `src/tools/**/*.rs`), so a narrow pattern does not walk the whole workspace. Each match's
//! time comes from the walk's own look at it (one `lstat`); the files an answer shows are looked
//! at again through the workspace's descriptor, so that a name listed through a folder swapped
//! for a symlink while the walk ran is never shown.

use super::answer::{self, Page, last_line, shown_path};
use super::pattern::{PathGlob, below};
use super::scope::{self, Looked, Scope};
use super::{Found, GlobArgs, SearchError};
use crate::runtime::Workspace;
use std::path::PathBuf;
use std::time::SystemTime;
use tokio_util::sync::CancellationToken;

/// Lists the files `args` ask for; stops early when `stop` fires.
pub fn glob(
    workspace: &Workspace,
    args: &GlobArgs,
    stop: &CancellationToken,
) -> Result<Found, SearchError> {
    let scope = Scope::of(workspace, args.path.as_deref())?;
    if scope.is_file {
        let path = args.path.clone().unwrap_or_default();
        return Err(SearchError::NotAFolder { path });
    }
    let pattern = PathGlob::new(&args.pattern, &scope.base)?;
    let page = Page::of(args.offset, args.limit);
    let root = pattern.walk_root(&scope.base);
    let walked = if scope::is_real_folder(workspace, &root) {
        let walk = scope::walk(workspace, &root, pattern.names_hidden());
        scope::visit(&walk, stop, || {
            |entry: &ignore::DirEntry| {
                let path = entry.path();
                if !below(path, &scope.base).is_some_and(|relative| pattern.matches(relative)) {
                    return Looked::Nothing;
                }
                match entry.metadata().ok().filter(std::fs::Metadata::is_file) {
                    Some(meta) => Looked::Found((path.to_owned(), scope::modified_time(&meta))),
                    None => Looked::Unreadable,
                }
            }
        })?
    } else {
        scope::Walked::<(PathBuf, SystemTime)>::default()
    };
    let mut files = walked.found;
    if files.is_empty() {
        return Ok(answer::nothing("files match", walked.files, 0, walked.unreadable));
    }
    scope::newest_first(&mut files, |(path, modified)| (*modified, path));
    let total = files.len() as u64;
    page.check(total, "files")?;
    let end = page.end(total);
    let from = usize::try_from(page.offset).unwrap_or(usize::MAX);
    let to = usize::try_from(end).unwrap_or(usize::MAX);
    let mut text = String::new();
    // Those shown are looked at again through the workspace's descriptor: a name listed
    // through a folder swapped for a symlink is not.
    for (path, _) in files[from..to].iter().filter(|(path, _)| scope::is_inside(workspace, path)) {
        text.push_str(&shown_path(&workspace.display(path)));
        text.push('\n');
    }
    let tally = answer::count(total, "file", "files");
    text.push_str(&last_line("glob", &tally, (page.offset, end), total));
    Ok(Found { text, tally })
}
