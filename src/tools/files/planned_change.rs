//! Planning a write or an edit: the file's content before and after, worked out without
//! touching anything, so that the approval preview can show exactly what [`PlannedChange::apply`]
//! will write.
//!
//! Planning reads the current content, so it refuses what a read refuses (folders, FIFOs,
//! sockets, devices) and never blocks on one; and it resolves the path with
//! `Workspace::resolve_writable`, so nothing inside `.git/` or `.keel/` is ever planned. What the
//! model wrote is taken with keel's tags as it was shown them put back (`crate::tags::restore`).

use super::{EditArgs, MAX_EDIT_FILE_BYTES, WriteArgs};
use crate::runtime::Workspace;
use crate::runtime::atomic::write_atomically;
use crate::runtime::change::FileChange;
use crate::runtime::open::{check_regular, existing, io_error, open_regular};
use crate::runtime::path_error::PathError;
use crate::tags;
use crate::tools::{ToolError, ToolOutcome};
use std::borrow::Cow;
use std::io::Read;
use std::path::{Path, PathBuf};

/// What a write or an edit would do to one file, worked out without touching it.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedChange {
    /// The real path inside the workspace.
    pub path: PathBuf,
    /// The path as the model and the person read it.
    pub display: String,
    pub before: Option<Vec<u8>>,
    pub after: Vec<u8>,
    /// Set when the call would repeat a step already done: it changes nothing.
    pub repeat: Option<Repeat>,
    /// The sentence reporting the change once made.
    report: String,
    /// The workspace the path lies in, whose descriptor the write goes through.
    workspace: Workspace,
}

/// How a write or an edit repeats a step already done.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Repeat {
    /// A `write_file` of the content the file already has.
    SameContent,
    /// An `edit_file` whose `new_text` is in the file and whose `old_text` is not.
    AlreadyApplied,
}

impl PlannedChange {
    /// The sentence reporting the change once made (for a repeat: that nothing changes).
    pub fn report(&self) -> &str {
        &self.report
    }

    /// Writes the new content atomically (creating parent folders) and reports it with the undo
    /// record. On failure the file is left as it was and the error says why.
    pub fn apply(self) -> Result<ToolOutcome, ToolError> {
        if self.before.as_deref() == Some(self.after.as_slice()) {
            // Nothing to write, and nothing to undo.
            let already_done = self.repeat.is_some().then_some(self.display);
            return Ok(ToolOutcome { already_done, ..ToolOutcome::ok(self.report) });
        }
        let written = write_atomically(&self.workspace, &self.path, &self.display, &self.after)?;
        let mut outcome =
            ToolOutcome::ok(self.report + written.note.as_deref().unwrap_or_default());
        outcome.changes.push(FileChange {
            path: self.path,
            before: self.before,
            after: self.after,
            created_folders: written.created_folders,
        });
        Ok(outcome)
    }
}

/// Works out `write_file`'s change.
pub fn plan_write(workspace: &Workspace, args: &WriteArgs) -> Result<PlannedChange, ToolError> {
    let path = workspace.resolve_writable(&args.path)?;
    let display = workspace.display(&path);
    let before = read_existing(workspace, &path, &display)?;
    let content = tags::restore(&args.content);
    let after = content.as_bytes().to_vec();
    let (report, repeat) = match &before {
        None => (format!("Wrote {} bytes to {display} (new file).", content.len()), None),
        Some(old) if *old == after => (
            format!("No change: {display} already has exactly this content."),
            Some(Repeat::SameContent),
        ),
        Some(old) => (
            format!("Wrote {} bytes to {display} (replacing {} bytes).", content.len(), old.len()),
            None,
        ),
    };
    let workspace = workspace.clone();
    Ok(PlannedChange { path, display, before, after, repeat, report, workspace })
}

/// Works out `edit_file`'s change: fails unless `old_text` occurs exactly once.
pub fn plan_edit(workspace: &Workspace, args: &EditArgs) -> Result<PlannedChange, ToolError> {
    let path = workspace.resolve_writable(&args.path)?;
    let display = workspace.display(&path);
    let Some(before) = read_existing(workspace, &path, &display)? else {
        return Err(PathError::NotFound { path: display }.into());
    };
    let text =
        std::str::from_utf8(&before).map_err(|_| ToolError::NotUtf8 { path: display.clone() })?;
    let args = &as_written(args, text);
    if args.old_text.is_empty() {
        return Err(ToolError::EmptyOldText);
    }
    let (count, first) = occurrences(text, &args.old_text);
    let at = match (count, first) {
        (1, Some(at)) => at,
        (0, _) | (_, None) if is_applied(text, &args.new_text) => {
            let report = format!(
                "No change: this edit is already in {display} (new_text is there and old_text is \
                 not)."
            );
            let repeat = Some(Repeat::AlreadyApplied);
            return Ok(PlannedChange {
                path,
                display,
                after: before.clone(),
                before: Some(before),
                repeat,
                report,
                workspace: workspace.clone(),
            });
        }
        (0, _) | (_, None) => return Err(ToolError::TextNotFound { path: display }),
        (count, Some(_)) => {
            return Err(ToolError::TextNotUnique { path: display, count });
        }
    };
    let mut after = String::with_capacity(text.len() - args.old_text.len() + args.new_text.len());
    after.push_str(&text[..at]);
    after.push_str(&args.new_text);
    after.push_str(&text[at + args.old_text.len()..]);
    let line = text[..at].matches('\n').count() + 1;
    let report = if args.old_text == args.new_text {
        format!("No change to {display}: old_text and new_text are the same.")
    } else {
        format!("Edited {display}: replaced the text at line {line}.")
    };
    let after = after.into_bytes();
    let workspace = workspace.clone();
    Ok(PlannedChange {
        path,
        display,
        before: Some(before),
        after,
        repeat: None,
        report,
        workspace,
    })
}

/// The edit with keel's tags put back as files hold them: the model was shown `‹reminder>` for
/// a file's `<reminder>` (`crate::tags`), and copies what it was shown. A file that holds the
/// `‹` itself, where the tags put back are not found, is edited as the model wrote it.
fn as_written<'a>(args: &'a EditArgs, text: &str) -> Cow<'a, EditArgs> {
    let old_text = tags::restore(&args.old_text);
    if !text.contains(old_text.as_ref()) && text.contains(&args.old_text) {
        return Cow::Borrowed(args);
    }
    match (old_text, tags::restore(&args.new_text)) {
        (Cow::Borrowed(_), Cow::Borrowed(_)) => Cow::Borrowed(args),
        (old_text, new_text) => Cow::Owned(EditArgs {
            path: args.path.clone(),
            old_text: old_text.into_owned(),
            new_text: new_text.into_owned(),
        }),
    }
}

/// Whether an edit whose `old_text` is gone is already applied: its `new_text` is there, exactly
/// once. Blank text proves nothing, and text found several times may be some other code: both
/// stay "not found", so a mistyped `old_text` is never taken for a step done.
fn is_applied(text: &str, new_text: &str) -> bool {
    !new_text.trim().is_empty() && occurrences(text, new_text).0 == 1
}

/// The file's content, `None` if it does not exist; refuses what is not a regular file and files
/// too large to hold.
fn read_existing(
    workspace: &Workspace,
    path: &Path,
    display: &str,
) -> Result<Option<Vec<u8>>, ToolError> {
    let Some(meta) = existing(workspace, path, display)? else {
        return Ok(None);
    };
    check_regular(&meta, display)?;
    let (file, opened) = open_regular(workspace, path, display)?;
    let too_large =
        |size| ToolError::TooLarge { path: display.to_owned(), size, limit: MAX_EDIT_FILE_BYTES };
    if opened.len() > MAX_EDIT_FILE_BYTES {
        return Err(too_large(opened.len()));
    }
    let mut content = Vec::new();
    // One byte more than the cap tells a file that grew since it was measured.
    file.take(MAX_EDIT_FILE_BYTES + 1)
        .read_to_end(&mut content)
        .map_err(|source| io_error(display, source))?;
    if content.len() as u64 > MAX_EDIT_FILE_BYTES {
        return Err(too_large(content.len() as u64));
    }
    Ok(Some(content))
}

/// How many times `needle` occurs in `haystack`, overlaps included, and where it first does.
fn occurrences(haystack: &str, needle: &str) -> (usize, Option<usize>) {
    let mut count = 0;
    let mut first = None;
    let mut from = 0;
    while let Some(found) = haystack[from..].find(needle) {
        let at = from + found;
        first.get_or_insert(at);
        count += 1;
        from = at + haystack[at..].chars().next().map_or(1, char::len_utf8);
    }
    (count, first)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn occurrences_count_overlaps() {
        assert_eq!(occurrences("aaa", "aa"), (2, Some(0)));
        assert_eq!(occurrences("xéx", "x"), (2, Some(0)));
        assert_eq!(occurrences("abc", "d"), (0, None));
    }

    #[test]
    fn an_edit_copied_from_a_defused_view_finds_the_files_own_tags() {
        let edit = |old: &str, new: &str| EditArgs {
            path: "notes".into(),
            old_text: old.into(),
            new_text: new.into(),
        };
        let file = "<reminder>keep</reminder>";
        let copied = edit("‹reminder>keep", "‹reminder>kept");
        assert_eq!(*as_written(&copied, file), edit("<reminder>keep", "<reminder>kept"));
        // A file that holds the look-alike itself is edited as written.
        let own = edit("‹reminder>x", "‹reminder>y");
        assert!(matches!(as_written(&own, "a ‹reminder>x b"), Cow::Borrowed(_)));
        let plain = edit("a", "b");
        assert!(matches!(as_written(&plain, "a"), Cow::Borrowed(_)));
    }
}
