//! The conversation pane: the transcript as the person reads it, laid out lazily and cached.
//!
//! The pane is a list of blocks — the introduction, the transcript's entries with keel's own local
//! notes among them, then the volatile tail (the text streaming in and the queued prompts). Entries
//! never change once in the transcript, so each block's wrapped lines are kept per width by a
//! `LazyList` and only the blocks on screen (or passed while scrolling) are ever laid out; how
//! each entry is drawn is `entry_lines`'s.

use super::super::keymap::{Binding, KeySpec};
use super::super::lazy_list::{LazyList, is_extension};
use super::super::theme;
use super::entry_lines::{Fold, MARGIN};
use super::pane;
use super::streaming_lines::StreamingLines;
use crate::agent::{CallMark, Entry, StreamingText};
use crate::runtime::change::FileDiff;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::KeyCode;
use ratatui::layout::{Position, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Widget};
use std::sync::Arc;

mod blocks;

use blocks::{Item, Laying};

/// Lines moved by one mouse-wheel notch.
pub const WHEEL_LINES: usize = 3;
/// Lines of overlap kept between pages, so the eye finds its place.
const PAGE_OVERLAP: usize = 2;
/// Rows of a file's diff unfolded under its call (Ctrl+O); the pager (Ctrl+G) shows it whole.
const UNFOLDED_DIFF_ROWS: usize = 40;
/// The indent of a diff unfolded under its call.
const DIFF_MARGIN: &str = "    ";

/// What a key does to the conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    PageUp,
    PageDown,
    Top,
    Bottom,
    ToggleThinking,
}

/// The conversation's keys (they work whatever has the composer's focus).
pub const KEYS: &[Binding<Action>] = &[
    Binding {
        keys: &[KeySpec::plain(KeyCode::PageUp)],
        action: Action::PageUp,
        help: "scroll the conversation up a page (stops following new output)",
        hint: None,
    },
    Binding {
        keys: &[KeySpec::plain(KeyCode::PageDown)],
        action: Action::PageDown,
        help: "scroll down a page",
        hint: None,
    },
    Binding {
        keys: &[KeySpec::plain(KeyCode::Home)],
        action: Action::Top,
        help: "jump to the start of the conversation",
        hint: None,
    },
    Binding {
        keys: &[KeySpec::plain(KeyCode::End)],
        action: Action::Bottom,
        help: "jump to the end and follow new output again",
        hint: None,
    },
    Binding {
        keys: &[KeySpec::ctrl('o')],
        action: Action::ToggleThinking,
        help: "unfold or fold the model's thinking and the diffs of the files it changed",
        hint: None,
    },
];

/// Input that is not a key chord, for the help overlay.
pub const MOUSE_HELP: &[(&str, &str)] = &[
    ("Mouse wheel", "scroll the pane under the pointer"),
    ("Click on a changed file's line", "unfold or fold its diff"),
];

/// The agent's side of what the pane shows: borrowed from the newest snapshot.
#[derive(Debug, Clone, Copy)]
pub struct Source<'a> {
    pub transcript: &'a imbl::Vector<Entry>,
    pub streaming: Option<&'a StreamingText>,
    pub queued: &'a imbl::Vector<String>,
}

/// One block of the pane, in display order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BlockRef {
    Intro,
    Entry(usize),
    Note(usize),
}

/// What the pane holds, apart from how it is laid out and scrolled.
#[derive(Debug, Default)]
struct Content {
    intro: Vec<Line<'static>>,
    /// The intro of a new conversation (after `/clear`).
    later_intro: Vec<Line<'static>>,
    blocks: Vec<BlockRef>,
    notes: Vec<String>,
    /// The transcript the blocks were built from, to tell an append from a replacement.
    seen: imbl::Vector<Entry>,
    /// The streaming text laid out, kept as it grows.
    streaming: StreamingLines,
    /// Whether the model's thinking is drawn whole.
    thinking: Fold,
    /// How the calls that did not succeed ended (see `Snapshot::call_marks`).
    marks: imbl::HashMap<String, CallMark>,
    /// What applied writes and edits changed (see `Snapshot::call_diffs`).
    diffs: imbl::HashMap<String, Arc<FileDiff>>,
    /// The calls whose diff a click turned the other way from Ctrl+O's fold.
    flipped: std::collections::HashSet<String>,
    /// What the searches found (see `Snapshot::call_tallies`).
    tallies: imbl::HashMap<String, Arc<str>>,
}

/// The pane's state: its blocks, their cached layout and where it is scrolled.
#[derive(Debug, Default)]
pub struct Conversation {
    content: Content,
    list: LazyList<Vec<Line<'static>>>,
    /// Whether output arrived below the view while it was held.
    unseen_below: bool,
}

impl Conversation {
    /// A pane that starts with `intro` (the first-run help or the demo banner) when it has lines;
    /// a new conversation starts with `later_intro` instead.
    pub fn new(intro: Vec<Line<'static>>, later_intro: Vec<Line<'static>>) -> Self {
        let blocks = if intro.is_empty() { Vec::new() } else { vec![BlockRef::Intro] };
        let content = Content { intro, later_intro, blocks, ..Content::default() };
        Self { content, ..Self::default() }
    }

    /// Takes in how calls ended and what searches found: the lines of calls newly marked are
    /// laid out again.
    pub fn sync_marks(
        &mut self,
        marks: &imbl::HashMap<String, CallMark>,
        tallies: &imbl::HashMap<String, Arc<str>>,
        source: &Source<'_>,
    ) {
        let content = &mut self.content;
        if marks.len() == content.marks.len() && tallies.len() == content.tallies.len() {
            return;
        }
        let new: Vec<&String> = marks
            .keys()
            .filter(|id| !content.marks.contains_key(*id))
            .chain(tallies.keys().filter(|id| !content.tallies.contains_key(*id)))
            .collect();
        let first = content.blocks.iter().position(|block| match block {
            BlockRef::Entry(index) => matches!(
                source.transcript.get(*index),
                Some(Entry::ToolCall { id, .. }) if new.contains(&id)
            ),
            _ => false,
        });
        content.marks = marks.clone();
        content.tallies = tallies.clone();
        self.list.invalidate_from(first.unwrap_or(0), true);
    }

    /// Takes in the changes of applied writes and edits: the lines of calls newly given one
    /// are laid out again.
    pub fn sync_diffs(
        &mut self,
        diffs: &imbl::HashMap<String, Arc<FileDiff>>,
        source: &Source<'_>,
    ) {
        let content = &mut self.content;
        if diffs.len() == content.diffs.len() {
            return;
        }
        let first = content.blocks.iter().position(|block| match block {
            BlockRef::Entry(index) => matches!(
                source.transcript.get(*index),
                Some(Entry::ToolCall { id, .. }) if diffs.contains_key(id) && !content.diffs.contains_key(id)
            ),
            _ => false,
        });
        content.diffs = diffs.clone();
        self.list.invalidate_from(first.unwrap_or(0), true);
    }

    /// Takes in a new transcript: appended entries become blocks; anything else (a cleared
    /// conversation) rebuilds the pane and returns to following.
    pub fn sync(&mut self, transcript: &imbl::Vector<Entry>) {
        let content = &mut self.content;
        if !is_extension(&content.seen, transcript) {
            content.intro = content.later_intro.clone();
            content.blocks =
                if content.intro.is_empty() { Vec::new() } else { vec![BlockRef::Intro] };
            content.notes.clear();
            content.streaming.clear();
            // Another conversation's marks (a session switched to): taken in again afresh.
            content.marks = imbl::HashMap::new();
            content.diffs = imbl::HashMap::new();
            content.flipped.clear();
            content.tallies = imbl::HashMap::new();
            content.seen = imbl::Vector::new();
            self.list.invalidate_from(0, false);
            self.unseen_below = false;
        }
        if transcript.len() > content.seen.len() && !self.list.is_following() {
            self.unseen_below = true;
        }
        for index in content.seen.len()..transcript.len() {
            content.blocks.push(BlockRef::Entry(index));
        }
        content.seen = transcript.clone();
    }

    /// Adds a note from keel itself (an unknown command), after what is there now.
    pub fn push_note(&mut self, text: impl Into<String>) {
        self.content.notes.push(text.into());
        self.content.blocks.push(BlockRef::Note(self.content.notes.len() - 1));
    }

    pub fn is_following(&self) -> bool {
        self.list.is_following()
    }

    /// How many blocks have been laid out (are in the cache): what was on screen or scrolled
    /// past, never the whole transcript at once.
    pub fn laid_out(&self) -> usize {
        self.list.laid_out()
    }

    /// Lays out what the next frame will show, at this inner size, into the cache.
    pub fn prepare(&mut self, source: &Source<'_>, width: usize, height: usize) {
        match source.streaming {
            Some(text) => self.content.streaming.update(text, width, MARGIN),
            None => self.content.streaming.clear(),
        }
        self.list.prepare(&Laying { content: &self.content, source }, width, height);
        if self.list.is_following() {
            self.unseen_below = false;
        }
    }

    /// Applies a scrolling key.
    pub fn act(&mut self, source: &Source<'_>, action: Action) {
        let page = self.list.viewport().1.saturating_sub(PAGE_OVERLAP).max(1);
        match action {
            Action::PageUp => self.scroll_up(source, page),
            Action::PageDown => self.scroll_down(source, page),
            Action::Top => self.list.top(&Laying { content: &self.content, source }),
            Action::Bottom => {
                self.list.bottom();
                self.unseen_below = false;
            }
            Action::ToggleThinking => {
                self.content.thinking = self.content.thinking.toggled();
                // Every block may hold thinking: lay them out again, staying where the view is.
                self.list.invalidate_from(0, true);
            }
        }
    }

    /// A click at `at` in the pane at `area`: on the line of a call that changed a file, its
    /// diff unfolds (or folds again). Returns whether it did.
    pub fn click(&mut self, source: &Source<'_>, at: Position, area: Rect) -> bool {
        let inner = Self::inner_area(area);
        if !inner.contains(at) {
            return false;
        }
        let (width, height) = (usize::from(inner.width), usize::from(inner.height));
        let row = usize::from(at.y - inner.y);
        let laying = Laying { content: &self.content, source };
        let mut top = 0;
        let mut clicked = None;
        for (index, lines, skip) in self.list.visible(&laying, width, height) {
            let shown = lines.len().saturating_sub(skip);
            if row < top + shown {
                clicked = Some(index);
                break;
            }
            top += shown;
        }
        let Some(index) = clicked else { return false };
        let id = match laying.item(index) {
            Some(Item::Entry(Entry::ToolCall { id, .. }))
                if self.content.diffs.contains_key(id) =>
            {
                id.clone()
            }
            _ => return false,
        };
        if !self.content.flipped.remove(&id) {
            self.content.flipped.insert(id);
        }
        self.list.invalidate_from(index, true);
        true
    }

    /// Moves the view up; the view stops following.
    pub fn scroll_up(&mut self, source: &Source<'_>, lines: usize) {
        self.list.scroll_up(&Laying { content: &self.content, source }, lines);
    }

    /// Moves the view down; reaching the end resumes following.
    pub fn scroll_down(&mut self, source: &Source<'_>, lines: usize) {
        self.list.scroll_down(&Laying { content: &self.content, source }, lines);
        if self.list.is_following() {
            self.unseen_below = false;
        }
    }

    /// The frame of the pane, with a note at the bottom while it is held away from the end.
    fn frame(&self) -> Block<'static> {
        let block = pane(Span::styled(" Conversation ", theme::TITLE), false);
        if self.is_following() {
            return block;
        }
        let note = if self.unseen_below {
            " new output below · End to follow "
        } else {
            " scrolled · End to follow "
        };
        block.title_bottom(Line::styled(note, theme::STATUS_BUSY).right_aligned())
    }

    /// Where the pane's text goes inside `area`.
    pub fn inner_area(area: Rect) -> Rect {
        pane(Line::default(), false).inner(area)
    }

    /// Draws the pane into `area` (borders included).
    pub fn render(&self, source: &Source<'_>, area: Rect, buf: &mut Buffer) {
        self.render_framed(self.frame(), source, area, buf);
    }

    /// Draws the lines into `area` inside `block` (another conversation's frame: a child
    /// agent's, titled with the child).
    pub fn render_framed(
        &self,
        block: Block<'static>,
        source: &Source<'_>,
        area: Rect,
        buf: &mut Buffer,
    ) {
        let inner = block.inner(area);
        block.render(area, buf);
        if inner.is_empty() {
            return;
        }
        let (width, height) = (usize::from(inner.width), usize::from(inner.height));
        let laying = Laying { content: &self.content, source };
        let mut y = inner.y;
        for (_, lines, skip) in self.list.visible(&laying, width, height) {
            for line in lines.iter().skip(skip) {
                if y >= inner.bottom() {
                    return;
                }
                buf.set_line(inner.x, y, line, inner.width);
                y += 1;
            }
        }
    }
}
