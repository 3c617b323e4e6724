//! `grep`: the lines of the workspace's files that match a regex, newest files first.
//!
//! Two passes keep memory flat however much matches. The first walks the files in parallel and
//! counts each one's matching lines (for `files`, it stops at a file's first); it keeps no
//! line. Sorted newest first, those counts say which files the page asked for falls in; the
//! second pass searches only them again, keeping just the page's lines and their context.

use super::answer::{self, Page, capped, last_line, matches_in_files, shown_path};
use super::pattern::{self, PathGlob, below};
use super::scope::{self, Looked, Scope, Walked};
use super::{Found, GrepArgs, GrepOutput, MAX_ANSWER_BYTES, MAX_CONTEXT, SearchError};
use crate::runtime::Workspace;
use grep_regex::RegexMatcher;
use grep_searcher::{
    BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkContextKind, SinkMatch,
};
use std::fmt::Write as _;
use std::io;
use std::path::{Path, PathBuf};
use std::time::SystemTime;
use tokio_util::sync::CancellationToken;

/// The longest line the searcher holds in memory; a file with a longer one is not searched.
const MAX_LINE_BYTES: usize = 64 * 1024 * 1024;
/// What marks a break between lines that do not follow each other, with context (ripgrep's).
const BREAK: &str = "--";

/// A file with matches, as the first pass found it.
#[derive(Debug)]
struct Hit {
    path: PathBuf,
    modified: SystemTime,
    /// Its matching lines (1 for `files`, which stops at the first).
    count: u64,
}

/// Searches the workspace as `args` say; stops early when `stop` fires.
pub fn grep(
    workspace: &Workspace,
    args: &GrepArgs,
    stop: &CancellationToken,
) -> Result<Found, SearchError> {
    let matcher = pattern::regex(&args.pattern, args.ignore_case.unwrap_or(false))?;
    let scope = Scope::of(workspace, args.path.as_deref())?;
    let filter = match &args.glob {
        Some(glob) if !scope.is_file => Some(PathGlob::new(glob, &scope.base)?),
        _ => None,
    };
    let output = args.output.unwrap_or_default();
    let page = Page::of(args.offset, args.limit);
    let first_only = output == GrepOutput::Files;
    let walked = count_matches(workspace, &scope, filter.as_ref(), &matcher, first_only, stop)?;
    let mut hits = walked.found;
    scope::newest_first(&mut hits, |hit| (hit.modified, &hit.path));
    let files = hits.len() as u64;
    let matches: u64 = hits.iter().map(|hit| hit.count).sum();
    if hits.is_empty() {
        return Ok(answer::nothing("matches", walked.files, walked.binary, walked.unreadable));
    }
    let path_of = |hit: &Hit| shown_path(&workspace.display(&hit.path)).into_owned();
    match output {
        GrepOutput::Files | GrepOutput::Count => {
            page.check(files, "files")?;
            let end = page.end(files);
            let mut text = String::new();
            for hit in &hits[to_index(page.offset)..to_index(end)] {
                match output {
                    GrepOutput::Count => writeln!(text, "{}:{}", path_of(hit), hit.count),
                    _ => writeln!(text, "{}", path_of(hit)),
                }
                .ok();
            }
            let tally = match output {
                GrepOutput::Count => matches_in_files(matches, files),
                _ => answer::count(files, "file", "files"),
            };
            text.push_str(&last_line("grep", &tally, (page.offset, end), files));
            Ok(Found { text, tally })
        }
        GrepOutput::Content => {
            page.check(matches, "matches")?;
            let context = args.context.unwrap_or(0).min(MAX_CONTEXT);
            let (mut text, shown) = content(workspace, &hits, &matcher, page, context)?;
            let tally = matches_in_files(matches, files);
            let end = page.offset + shown;
            text.push_str(&last_line("grep", &tally, (page.offset, end), matches));
            Ok(Found { text, tally })
        }
    }
}

/// The first pass: every file's matching lines counted (or, `first_only`, its first found).
fn count_matches(
    workspace: &Workspace,
    scope: &Scope,
    filter: Option<&PathGlob>,
    matcher: &RegexMatcher,
    first_only: bool,
    stop: &CancellationToken,
) -> Result<Walked<Hit>, SearchError> {
    let Some(root) = walk_root(workspace, scope, filter) else {
        return Ok(Walked::default());
    };
    let hidden = filter.is_some_and(PathGlob::names_hidden);
    let walk = scope::walk(workspace, &root, hidden);
    scope::visit(&walk, stop, || {
        let mut searcher = searcher(0, false);
        let matcher = matcher.clone();
        move |entry| {
            let path = entry.path();
            if let Some(filter) = filter
                && !below(path, &scope.base).is_some_and(|relative| filter.matches(relative))
            {
                return Looked::Skipped;
            }
            let Some((file, modified)) = scope::open(workspace, path) else {
                return Looked::Unreadable;
            };
            let mut sink = Counter { count: 0, binary: false, first_only };
            if searcher.search_file(&matcher, &file, &mut sink).is_err() {
                return Looked::Unreadable;
            }
            match (sink.binary, sink.count) {
                (true, _) => Looked::Binary,
                (false, 0) => Looked::Nothing,
                (false, count) => Looked::Found(Hit { path: path.to_owned(), modified, count }),
            }
        }
    })
}

/// Where the walk starts: the folder searched, or the plain folders ahead of the glob filter
/// within it; `None` when those are not a real folder there (so nothing can match).
fn walk_root(workspace: &Workspace, scope: &Scope, filter: Option<&PathGlob>) -> Option<PathBuf> {
    let root = filter.map_or_else(|| scope.base.clone(), |filter| filter.walk_root(&scope.base));
    (root == scope.base || scope::is_real_folder(workspace, &root)).then_some(root)
}

/// A searcher as ripgrep's for files it found by walking: binary files (a NUL byte) are given
/// up on; `numbered`: lines are numbered; `context` lines are shown around each match.
fn searcher(context: u64, numbered: bool) -> Searcher {
    let lines = usize::try_from(context).unwrap_or(0);
    SearcherBuilder::new()
        .binary_detection(BinaryDetection::quit(0))
        .heap_limit(Some(MAX_LINE_BYTES))
        .line_number(numbered)
        .before_context(lines)
        .after_context(lines)
        .build()
}

/// The first pass's sink: counts matching lines, gives up on binary data.
struct Counter {
    count: u64,
    binary: bool,
    first_only: bool,
}

impl Sink for Counter {
    type Error = io::Error;

    fn matched(&mut self, _: &Searcher, _: &SinkMatch<'_>) -> Result<bool, io::Error> {
        // One line a match: the searcher is not in multi-line mode.
        self.count += 1;
        Ok(!self.first_only)
    }

    fn binary_data(&mut self, _: &Searcher, _: u64) -> Result<bool, io::Error> {
        self.binary = true;
        Ok(false)
    }
}

/// The second pass: the page's matching lines and their context, `path:line:text` (context
/// `path-line-text`), with how many matches it shows — fewer than the page's when the answer
/// reached [`MAX_ANSWER_BYTES`] first.
fn content(
    workspace: &Workspace,
    hits: &[Hit],
    matcher: &RegexMatcher,
    page: Page,
    context: u64,
) -> Result<(String, u64), SearchError> {
    let total: u64 = hits.iter().map(|hit| hit.count).sum();
    let end = page.end(total);
    let mut searcher = searcher(context, true);
    let mut text = String::new();
    let mut shown = 0;
    let mut before = 0;
    'files: for hit in hits {
        let (first, after) = (before, before + hit.count);
        before = after;
        if after <= page.offset {
            continue;
        }
        if first >= end {
            break;
        }
        let skip = page.offset.saturating_sub(first);
        let take = end.min(after) - first.max(page.offset);
        let lines = page_lines(workspace, &hit.path, matcher, &mut searcher, (skip, take), context);
        let path = shown_path(&workspace.display(&hit.path)).into_owned();
        let mut last = None;
        for line in lines {
            let gap = last.is_some_and(|last| line.number != last + 1)
                || (last.is_none() && !text.is_empty());
            let mut entry = String::new();
            if context > 0 && gap {
                entry.push_str(BREAK);
                entry.push('\n');
            }
            let mark = if line.is_match { ':' } else { '-' };
            let _ = writeln!(entry, "{path}{mark}{}{mark}{}", line.number, capped(&line.text));
            if shown > 0 && text.len() + entry.len() > MAX_ANSWER_BYTES {
                break 'files;
            }
            text.push_str(&entry);
            shown += u64::from(line.is_match);
            last = Some(line.number);
        }
    }
    Ok((text, shown))
}

/// One line of the second pass.
#[derive(Debug)]
struct Line {
    number: u64,
    is_match: bool,
    text: String,
}

/// The lines of the file at `path` for its matches `skip..skip + take`, with their context.
/// Empty when the file can no longer be read (it changed since the first pass).
fn page_lines(
    workspace: &Workspace,
    path: &Path,
    matcher: &RegexMatcher,
    searcher: &mut Searcher,
    (skip, take): (u64, u64),
    context: u64,
) -> Vec<Line> {
    let Some((file, _)) = scope::open(workspace, path) else { return Vec::new() };
    let mut sink = Window { skip, end: skip + take, context, ..Window::default() };
    if searcher.search_file(matcher, &file, &mut sink).is_err() || sink.binary {
        return Vec::new();
    }
    sink.lines
}

/// The second pass's sink: keeps the lines of the matches in its window and their context.
#[derive(Debug, Default)]
struct Window {
    skip: u64,
    end: u64,
    context: u64,
    /// Matches seen so far.
    seen: u64,
    /// The last match seen was in the window: the lines after it are its context.
    in_window: bool,
    /// Context lines waiting for a match: kept if it is in the window.
    pending: Vec<Line>,
    lines: Vec<Line>,
    binary: bool,
}

impl Sink for Window {
    type Error = io::Error;

    fn matched(&mut self, _: &Searcher, found: &SinkMatch<'_>) -> Result<bool, io::Error> {
        let index = self.seen;
        self.seen += 1;
        if index >= self.end {
            return Ok(false);
        }
        let number = found.line_number().unwrap_or(0);
        if index < self.skip {
            self.pending.clear();
            self.in_window = false;
            return Ok(true);
        }
        let context = self.context;
        let nearby = self.pending.drain(..).filter(|line| line.number + context >= number);
        self.lines.extend(nearby);
        self.lines.push(Line { number, is_match: true, text: line_text(found.bytes()) });
        self.in_window = true;
        Ok(true)
    }

    fn context(&mut self, _: &Searcher, line: &SinkContext<'_>) -> Result<bool, io::Error> {
        let number = line.line_number().unwrap_or(0);
        let line_ = Line { number, is_match: false, text: line_text(line.bytes()) };
        if self.in_window && matches!(line.kind(), SinkContextKind::After) {
            self.lines.push(line_);
        } else {
            self.pending.push(line_);
        }
        Ok(true)
    }

    fn context_break(&mut self, _: &Searcher) -> Result<bool, io::Error> {
        self.pending.clear();
        Ok(true)
    }

    fn binary_data(&mut self, _: &Searcher, _: u64) -> Result<bool, io::Error> {
        self.binary = true;
        Ok(false)
    }
}

/// A line's bytes as text, without its line ending; bytes that are not UTF-8 shown as `�`.
fn line_text(bytes: &[u8]) -> String {
    let bytes = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
    String::from_utf8_lossy(bytes).into_owned()
}

/// A count of results as an index (a page never holds more than fits).
fn to_index(count: u64) -> usize {
    usize::try_from(count).unwrap_or(usize::MAX)
}
