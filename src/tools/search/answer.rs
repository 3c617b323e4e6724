//! How a search answers: which page of the results it shows, lines cut to a width, and the last
//! line, which says what was found (the tally) and, when more is left, how to page on.
//!
//! The last line always starts with `[` and the tally, so that [`tally_of`] can read it back
//! from an answer in the history (a resumed session, a masked result).

use super::{Found, MAX_LINE_CHARS, MAX_RESULTS, SearchError};
use std::fmt::Write as _;

/// Which results one answer shows: from `offset`, at most `limit`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Page {
    pub offset: u64,
    pub limit: u64,
}

impl Page {
    /// The page the model asked for; a limit above [`MAX_RESULTS`] is taken as that.
    pub fn of(offset: Option<u64>, limit: Option<u64>) -> Self {
        Self {
            offset: offset.unwrap_or(0),
            limit: limit.unwrap_or(MAX_RESULTS).clamp(1, MAX_RESULTS),
        }
    }

    /// Checks the page starts within `total` results (any page of none does).
    pub fn check(&self, total: u64, unit: &'static str) -> Result<(), SearchError> {
        if total > 0 && self.offset >= total {
            return Err(SearchError::OffsetPastEnd { offset: self.offset, total, unit });
        }
        Ok(())
    }

    /// The results this page takes, out of `total`.
    pub fn end(&self, total: u64) -> u64 {
        self.offset.saturating_add(self.limit).min(total)
    }
}

/// `1 match`, `12 matches`; `1 file`, `3 files`.
pub(super) fn count(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `12 matches in 3 files`.
pub(super) fn matches_in_files(matches: u64, files: u64) -> String {
    format!("{} in {}", count(matches, "match", "matches"), count(files, "file", "files"))
}

/// The last line of an answer that found something: the tally, then, when the answer does not
/// show all of it, which results it shows and how to get the next ones.
pub(super) fn last_line(tool: &str, tally: &str, shown: (u64, u64), total: u64) -> String {
    let (from, to) = shown;
    if from == 0 && to >= total {
        return format!("[{tally}]");
    }
    let mut line = format!("[{tally}; shown: {}–{to}, newest files first", from + 1);
    if to < total {
        let _ = write!(line, ". For more, call {tool} again with offset: {to}");
    }
    line.push_str(".]");
    line
}

/// The answer that found nothing (`what`: `matches`, `files match`): what was looked at, and
/// what was not.
pub(super) fn nothing(what: &str, files: u64, binary: u64, unreadable: u64) -> Found {
    let mut skipped = String::from(".gitignored and hidden files");
    if binary > 0 {
        let _ = write!(skipped, ", {}", count(binary, "binary file", "binary files"));
    }
    let looked = count(files, "file", "files");
    let mut text = format!("[No {what}: {looked} looked at (skipped: {skipped})");
    if unreadable > 0 {
        let _ = write!(text, "; {unreadable} could not be read");
    }
    text.push_str(".]");
    Found { text, tally: format!("no {what}") }
}

/// The tally an answer's last line starts with (`12 matches in 3 files`, `no matches`); `None`
/// for an answer that is not a search's.
pub fn tally_of(answer: &str) -> Option<String> {
    let last = answer.trim_end().rsplit('\n').next()?.strip_prefix('[')?;
    if let Some(nothing) = last.strip_prefix("No ") {
        let (what, _) = nothing.split_once(':')?;
        return Some(format!("no {what}"));
    }
    let end = last.find([';', ']'])?;
    Some(last[..end].to_owned())
}

/// `text` (one line) cut to [`MAX_LINE_CHARS`] characters, saying how many more there were.
pub(super) fn capped(text: &str) -> std::borrow::Cow<'_, str> {
    match text.char_indices().nth(MAX_LINE_CHARS) {
        None => text.into(),
        Some((at, _)) => {
            let more = text[at..].chars().count();
            format!("{}…[+{more} chars]", &text[..at]).into()
        }
    }
}

/// A path as an answer shows it: control characters (a newline in a file name) made visible,
/// so that one result is always one line.
pub(super) fn shown_path(path: &str) -> std::borrow::Cow<'_, str> {
    if !path.chars().any(char::is_control) {
        return path.into();
    }
    crate::visible::visible(path).replace('\n', "^J").into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_is_clamped_to_the_cap_and_must_start_within_the_results() {
        assert_eq!(Page::of(None, None), Page { offset: 0, limit: MAX_RESULTS });
        assert_eq!(Page::of(Some(5), Some(1000)).limit, MAX_RESULTS);
        assert_eq!(Page::of(Some(5), Some(10)).end(12), 12);
        assert!(Page::of(Some(12), None).check(12, "matches").is_err());
        assert!(Page::of(Some(3), None).check(0, "matches").is_ok());
    }

    #[test]
    fn the_last_line_says_what_was_found_and_how_to_go_on() {
        assert_eq!(
            last_line("grep", "12 matches in 3 files", (0, 12), 12),
            "[12 matches in 3 files]"
        );
        assert_eq!(
            last_line("grep", "240 matches in 31 files", (100, 200), 240),
            "[240 matches in 31 files; shown: 101–200, newest files first. For more, call grep \
             again with offset: 200.]"
        );
        let last = last_line("glob", "240 files", (200, 240), 240);
        assert_eq!(last, "[240 files; shown: 201–240, newest files first.]");
        assert_eq!(tally_of(&format!("a:1:x\n{last}\n")).as_deref(), Some("240 files"));
        let nothing = nothing("matches", 1, 2, 3);
        assert_eq!(
            nothing.text,
            "[No matches: 1 file looked at (skipped: .gitignored and hidden files, 2 binary \
             files); 3 could not be read.]"
        );
        assert_eq!(tally_of(&nothing.text), Some(nothing.tally));
        assert_eq!(tally_of("Exit code 0\n"), None);
    }

    #[test]
    fn long_lines_are_cut_and_counted() {
        let long = "é".repeat(MAX_LINE_CHARS + 7);
        let cut = capped(&long);
        assert!(cut.ends_with("…[+7 chars]"), "{cut}");
        assert_eq!(cut.chars().filter(|c| *c == 'é').count(), MAX_LINE_CHARS);
        assert_eq!(capped("short"), "short");
        assert_eq!(shown_path("a\nb.rs"), "a^Jb.rs");
    }
}
