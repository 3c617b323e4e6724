//! The conversation pane: the transcript as the person reads it, laid out lazily and cached.
//!
//! The pane is a list of blocks — the introduction, the transcript's entries with keel's own local
//! notes among them, then the volatile tail (the text streaming in and the queued prompts). Entries
//! never change once in the transcript, so each block's wrapped lines are kept per width by a
//! `LazyList` and only the blocks on screen (or passed while scrolling) are ever laid out; how
//! each entry is drawn is `entry_lines`'s.

use super::super::keymap::{Binding, KeySpec};
use super::super::lazy_list::{Blocks, LazyList, is_extension};
use super::super::markdown;
use super::super::text::width as text_width;
use super::super::text::{first_line, truncate};
use super::super::theme;
use super::super::wrap::{Prefix, wrap};
use super::entry_lines::{Fold, MARGIN, call_mark, layout_entry, one_line, prose};
use super::pane;
use super::streaming_lines::StreamingLines;
use crate::agent::{CallMark, Entry, StreamingText};
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::KeyCode;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Widget};

/// Lines moved by one mouse-wheel notch.
pub const WHEEL_LINES: usize = 3;
/// Lines of overlap kept between pages, so the eye finds its place.
const PAGE_OVERLAP: usize = 2;
/// The width a call's mark keeps however narrow the line (` ✗ failed · no network`).
const MARK_MIN: usize = 24;

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
        help: "unfold or fold the model's thinking",
        hint: None,
    },
];

/// Input that is not a key chord, for the help overlay.
pub const MOUSE_HELP: &[(&str, &str)] = &[("Mouse wheel", "scroll the pane under the pointer")];

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

/// A block's content, resolved for layout.
#[derive(Debug, Clone, Copy)]
enum Item<'a> {
    Intro(&'a [Line<'static>]),
    Entry(&'a Entry),
    Note(&'a str),
    Streaming(&'a StreamingText),
    Queued(&'a str),
}

impl Item<'_> {
    /// One-line items sit together without a blank line between them.
    fn is_compact(&self) -> bool {
        matches!(
            self,
            Item::Entry(Entry::ToolCall { .. } | Entry::Reminder { .. }) | Item::Queued(_)
        )
    }
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

    /// Takes in how calls ended: the lines of calls newly marked are laid out again.
    pub fn sync_marks(&mut self, marks: &imbl::HashMap<String, CallMark>, source: &Source<'_>) {
        let content = &mut self.content;
        if marks.len() == content.marks.len() {
            return;
        }
        let new: Vec<&String> =
            marks.keys().filter(|id| !content.marks.contains_key(*id)).collect();
        let first = content.blocks.iter().position(|block| match block {
            BlockRef::Entry(index) => matches!(
                source.transcript.get(*index),
                Some(Entry::ToolCall { id, .. }) if new.contains(&id)
            ),
            _ => false,
        });
        content.marks = marks.clone();
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
        let block = self.frame();
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

/// The pane's blocks as a `LazyList` lays them out: the content with the snapshot's tail.
struct Laying<'a> {
    content: &'a Content,
    source: &'a Source<'a>,
}

impl Laying<'_> {
    fn item(&self, index: usize) -> Option<Item<'_>> {
        let content = self.content;
        if let Some(block) = content.blocks.get(index) {
            return match *block {
                BlockRef::Intro => Some(Item::Intro(&content.intro)),
                BlockRef::Entry(entry) => self.source.transcript.get(entry).map(Item::Entry),
                BlockRef::Note(note) => content.notes.get(note).map(|text| Item::Note(text)),
            };
        }
        let mut tail = index - content.blocks.len();
        if let Some(text) = self.source.streaming {
            if tail == 0 {
                return Some(Item::Streaming(text));
            }
            tail -= 1;
        }
        self.source.queued.get(tail).map(|text| Item::Queued(text))
    }
}

impl Blocks for Laying<'_> {
    type Laid = Vec<Line<'static>>;

    fn count(&self) -> usize {
        self.content.blocks.len()
            + usize::from(self.source.streaming.is_some())
            + self.source.queued.len()
    }

    fn lay_out(&self, index: usize, width: usize) -> Vec<Line<'static>> {
        let Some(item) = self.item(index) else {
            return Vec::new();
        };
        let previous_compact = index
            .checked_sub(1)
            .and_then(|previous| self.item(previous))
            .is_some_and(|previous| previous.is_compact());
        let mut lines = Vec::new();
        if index > 0 && !(item.is_compact() && previous_compact) {
            lines.push(Line::default());
        }
        match item {
            Item::Streaming(_) if self.content.streaming.width() == width => {
                lines.extend(self.content.streaming.lines().iter().cloned());
            }
            _ => lines.extend(layout_item(item, width, self.content)),
        }
        lines
    }

    fn rows(laid: &Vec<Line<'static>>) -> usize {
        laid.len()
    }

    fn is_stable(&self, index: usize) -> bool {
        index < self.content.blocks.len()
    }
}

fn layout_item(item: Item<'_>, width: usize, content: &Content) -> Vec<Line<'static>> {
    let thinking = content.thinking;
    match item {
        Item::Intro(lines) => {
            lines.iter().flat_map(|line| wrap(&line.spans, width, &Prefix::default())).collect()
        }
        Item::Entry(entry @ Entry::ToolCall { id, name, .. }) if content.marks.contains_key(id) => {
            let (mark, style) =
                content.marks.get(id).map_or((String::new(), Style::new()), |s| call_mark(name, s));
            // Laid out narrower by the mark, which then ends its line; a long mark (a board's
            // reason) takes the room the call leaves, and at least half the line.
            let call = layout_entry(entry, width, thinking).first().map_or(0, Line::width);
            let room = (width / 2).max(width.saturating_sub(call)).max(MARK_MIN.min(width));
            let mark = truncate(&mark, room).into_owned();
            let mut lines = layout_entry(entry, width.saturating_sub(text_width(&mark)), thinking);
            if let Some(first) = lines.first_mut() {
                first.spans.push(Span::styled(mark, style));
            }
            lines
        }
        Item::Entry(entry) => layout_entry(entry, width, thinking),
        Item::Note(text) => prose(text, width, "· ", theme::NOTICE),
        Item::Streaming(text) => markdown::render(&text.to_string(), width, MARGIN),
        Item::Queued(text) => vec![one_line(
            vec![Span::styled("⧗ queued  ", theme::QUEUED)],
            &first_line(text),
            theme::QUEUED,
            width,
        )],
    }
}
