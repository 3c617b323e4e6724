//! The conversation pane: the transcript as the person reads it, laid out lazily and cached.
//!
//! The pane is a list of blocks — the introduction, the transcript's entries with keel's own local
//! notes among them, then the volatile tail (the text streaming in and the queued prompts). Entries
//! never change once in the transcript, so each block's wrapped lines are cached per width and only
//! the blocks on screen (or passed while scrolling) are ever laid out; see `scroll` for why the
//! position is an anchor. `prepare` fills the cache from the event loop; `render` only reads it
//! (and lays out on the fly, without caching, anything `prepare` did not cover).

use super::super::keymap::{Binding, KeySpec};
use super::super::markdown;
use super::super::scroll::{self, Anchor, Heights, Scroll};
use super::super::text::{clean_line, clean_lines, first_line, truncate};
use super::super::theme;
use super::super::wrap::{Prefix, wrap};
use super::pane;
use crate::agent::Entry;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::KeyCode;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Widget};
use std::borrow::Cow;
use std::sync::Arc;

/// Lines moved by one mouse-wheel notch.
pub const WHEEL_LINES: usize = 3;
/// Lines of overlap kept between pages, so the eye finds its place.
const PAGE_OVERLAP: usize = 2;
/// A prompt longer than this is shown cut, with a note; a 5 MB paste would otherwise be laid out
/// line by line into the conversation.
const USER_MAX_LINES: usize = 200;
const USER_MAX_BYTES: usize = 16 * 1024;
/// Left margin of assistant text, lining it up with the text after the user marker.
const MARGIN: &str = "  ";

/// What a key does to the conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    PageUp,
    PageDown,
    Top,
    Bottom,
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
];

/// Input that is not a key chord, for the help overlay.
pub const MOUSE_HELP: &[(&str, &str)] = &[("Mouse wheel", "scroll the pane under the pointer")];

/// The agent's side of what the pane shows: borrowed from the newest snapshot.
#[derive(Debug, Clone, Copy)]
pub struct Source<'a> {
    pub transcript: &'a imbl::Vector<Entry>,
    pub streaming: Option<&'a Arc<str>>,
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
    Streaming(&'a str),
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

/// The pane's state: its blocks, their cached layout and where it is scrolled.
#[derive(Debug, Default)]
pub struct Conversation {
    intro: Vec<Line<'static>>,
    blocks: Vec<BlockRef>,
    notes: Vec<String>,
    /// The transcript the blocks were built from, to tell an append from a replacement.
    seen: imbl::Vector<Entry>,
    cache_width: usize,
    cache: Vec<Option<Vec<Line<'static>>>>,
    streaming_cache: Option<(Arc<str>, usize, Vec<Line<'static>>)>,
    scroll: Scroll,
    viewport: (usize, usize),
    /// Whether output arrived below the view while it was held.
    unseen_below: bool,
}

impl Conversation {
    /// A pane that starts with `intro` (the first-run help or the demo banner) when it has lines.
    pub fn new(intro: Vec<Line<'static>>) -> Self {
        let blocks = if intro.is_empty() { Vec::new() } else { vec![BlockRef::Intro] };
        Self {
            cache: vec![None; blocks.len()],
            intro,
            blocks,
            viewport: (80, 20),
            ..Self::default()
        }
    }

    /// Takes in a new transcript: appended entries become blocks; anything else (a cleared
    /// conversation) rebuilds the pane and returns to following.
    pub fn sync(&mut self, transcript: &imbl::Vector<Entry>) {
        if !is_extension(&self.seen, transcript) {
            self.blocks.retain(|block| *block == BlockRef::Intro);
            self.cache = vec![None; self.blocks.len()];
            self.notes.clear();
            self.streaming_cache = None;
            self.scroll = Scroll::Bottom;
            self.unseen_below = false;
            self.seen = imbl::Vector::new();
        }
        let added = transcript.len() - self.seen.len();
        if added > 0 && self.scroll != Scroll::Bottom {
            self.unseen_below = true;
        }
        for index in self.seen.len()..transcript.len() {
            self.blocks.push(BlockRef::Entry(index));
            self.cache.push(None);
        }
        self.seen = transcript.clone();
    }

    /// Adds a note from keel itself (an unknown command), after what is there now.
    pub fn push_note(&mut self, text: impl Into<String>) {
        self.notes.push(text.into());
        self.blocks.push(BlockRef::Note(self.notes.len() - 1));
        self.cache.push(None);
    }

    pub fn is_following(&self) -> bool {
        self.scroll == Scroll::Bottom
    }

    /// How many blocks have been laid out (are in the cache): what was on screen or scrolled
    /// past, never the whole transcript at once.
    pub fn laid_out(&self) -> usize {
        self.cache.iter().filter(|lines| lines.is_some()).count()
    }

    /// Lays out what the next frame will show, at this inner size, into the cache.
    pub fn prepare(&mut self, source: &Source<'_>, width: usize, height: usize) {
        self.viewport = (width, height);
        self.set_width(width);
        if let Some(text) = source.streaming {
            let fresh = self.streaming_cache.as_ref().is_none_or(|(cached, cached_width, _)| {
                !Arc::ptr_eq(cached, text) || *cached_width != width
            });
            if fresh {
                let lines = markdown::render(text, width, MARGIN);
                self.streaming_cache = Some((Arc::clone(text), width, lines));
            }
        } else {
            self.streaming_cache = None;
        }
        let current = self.scroll;
        let mut filler = Filler { conversation: self, source };
        let anchor = scroll::resolve(&mut filler, current, height);
        let mut rows = 0;
        let mut index = anchor.block;
        while rows < height + anchor.line && index < filler.count() {
            rows += filler.height(index);
            index += 1;
        }
        if self.scroll == Scroll::Bottom {
            self.unseen_below = false;
        }
    }

    /// Applies a scrolling key.
    pub fn act(&mut self, source: &Source<'_>, action: Action) {
        let page = self.viewport.1.saturating_sub(PAGE_OVERLAP).max(1);
        match action {
            Action::PageUp => self.scroll_up(source, page),
            Action::PageDown => self.scroll_down(source, page),
            Action::Top => {
                let height = self.viewport.1;
                let mut filler = Filler { conversation: self, source };
                self.scroll = scroll::settle(&mut filler, Anchor::default(), height);
            }
            Action::Bottom => {
                self.scroll = Scroll::Bottom;
                self.unseen_below = false;
            }
        }
    }

    /// Moves the view up; the view stops following.
    pub fn scroll_up(&mut self, source: &Source<'_>, lines: usize) {
        let (width, height) = self.viewport;
        self.set_width(width);
        let current = self.scroll;
        let mut filler = Filler { conversation: self, source };
        let current = scroll::resolve(&mut filler, current, height);
        let anchor = scroll::up(&mut filler, current, lines);
        self.scroll = scroll::settle(&mut filler, anchor, height);
    }

    /// Moves the view down; reaching the end resumes following.
    pub fn scroll_down(&mut self, source: &Source<'_>, lines: usize) {
        let (width, height) = self.viewport;
        self.set_width(width);
        let current = self.scroll;
        let mut filler = Filler { conversation: self, source };
        self.scroll = scroll::down(&mut filler, current, lines, height);
        if self.scroll == Scroll::Bottom {
            self.unseen_below = false;
        }
    }

    fn set_width(&mut self, width: usize) {
        if self.cache_width != width {
            self.cache_width = width;
            self.cache.iter_mut().for_each(|lines| *lines = None);
        }
    }

    fn count(&self, source: &Source<'_>) -> usize {
        self.blocks.len() + usize::from(source.streaming.is_some()) + source.queued.len()
    }

    fn item<'a>(&'a self, source: &Source<'a>, index: usize) -> Option<Item<'a>> {
        if let Some(block) = self.blocks.get(index) {
            return match *block {
                BlockRef::Intro => Some(Item::Intro(&self.intro)),
                BlockRef::Entry(entry) => source.transcript.get(entry).map(Item::Entry),
                BlockRef::Note(note) => self.notes.get(note).map(|text| Item::Note(text)),
            };
        }
        let mut tail = index - self.blocks.len();
        if let Some(text) = source.streaming {
            if tail == 0 {
                return Some(Item::Streaming(text));
            }
            tail -= 1;
        }
        source.queued.get(tail).map(|text| Item::Queued(text))
    }

    fn layout(&self, source: &Source<'_>, index: usize, width: usize) -> Vec<Line<'static>> {
        let Some(item) = self.item(source, index) else {
            return Vec::new();
        };
        let previous_compact = index
            .checked_sub(1)
            .and_then(|previous| self.item(source, previous))
            .is_some_and(|previous| previous.is_compact());
        let mut lines = Vec::new();
        if index > 0 && !(item.is_compact() && previous_compact) {
            lines.push(Line::default());
        }
        match item {
            Item::Streaming(_) => match &self.streaming_cache {
                Some((_, cached_width, cached)) if *cached_width == width => {
                    lines.extend(cached.iter().cloned())
                }
                _ => lines.extend(layout_item(item, width)),
            },
            _ => lines.extend(layout_item(item, width)),
        }
        lines
    }

    /// The lines of block `index` at `width`: cached when `prepare` covered it.
    fn lines<'a>(
        &'a self,
        source: &Source<'_>,
        index: usize,
        width: usize,
    ) -> Cow<'a, [Line<'static>]> {
        if self.cache_width == width {
            if let Some(Some(lines)) = self.cache.get(index) {
                return Cow::Borrowed(lines);
            }
        }
        Cow::Owned(self.layout(source, index, width))
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
        let width = usize::from(inner.width);
        let height = usize::from(inner.height);
        let mut reader = Reader { conversation: self, source, width };
        let anchor = scroll::resolve(&mut reader, self.scroll, height);
        let mut y = inner.y;
        let mut skip = anchor.line;
        for index in anchor.block..self.count(source) {
            let lines = self.lines(source, index, width);
            for line in lines.iter().skip(skip) {
                if y >= inner.bottom() {
                    return;
                }
                buf.set_line(inner.x, y, line, inner.width);
                y += 1;
            }
            skip = 0;
        }
    }
}

/// Heights that fill the cache as they are asked for.
struct Filler<'c, 's> {
    conversation: &'c mut Conversation,
    source: &'c Source<'s>,
}

impl Heights for Filler<'_, '_> {
    fn count(&self) -> usize {
        self.conversation.count(self.source)
    }

    fn height(&mut self, index: usize) -> usize {
        let width = self.conversation.cache_width;
        if index >= self.conversation.blocks.len() {
            return self.conversation.layout(self.source, index, width).len();
        }
        if self.conversation.cache[index].is_none() {
            let lines = self.conversation.layout(self.source, index, width);
            self.conversation.cache[index] = Some(lines);
        }
        self.conversation.cache[index].as_ref().map_or(0, Vec::len)
    }
}

/// Heights read from the cache, laid out on the fly where it has none (nothing is stored).
struct Reader<'c, 's> {
    conversation: &'c Conversation,
    source: &'c Source<'s>,
    width: usize,
}

impl Heights for Reader<'_, '_> {
    fn count(&self) -> usize {
        self.conversation.count(self.source)
    }

    fn height(&mut self, index: usize) -> usize {
        self.conversation.lines(self.source, index, self.width).len()
    }
}

/// Whether `new` is `old` with entries appended. Checked by length and by sampling the first, the
/// middle and the last old entry: a cleared transcript differs at its start, and comparing every
/// entry on every snapshot would cost as much as the transcript is long.
pub fn is_extension<T: Clone + PartialEq>(old: &imbl::Vector<T>, new: &imbl::Vector<T>) -> bool {
    if new.len() < old.len() {
        return false;
    }
    if old.is_empty() {
        return true;
    }
    [0, old.len() / 2, old.len() - 1].into_iter().all(|index| old.get(index) == new.get(index))
}

fn layout_item(item: Item<'_>, width: usize) -> Vec<Line<'static>> {
    match item {
        Item::Intro(lines) => {
            lines.iter().flat_map(|line| wrap(&line.spans, width, &Prefix::default())).collect()
        }
        Item::Entry(entry) => layout_entry(entry, width),
        Item::Note(text) => prose(text, width, "· ", theme::NOTICE),
        Item::Streaming(text) => markdown::render(text, width, MARGIN),
        Item::Queued(text) => vec![one_line(
            vec![Span::styled("⧗ queued  ", theme::QUEUED)],
            &first_line(text),
            theme::QUEUED,
            width,
        )],
    }
}

fn layout_entry(entry: &Entry, width: usize) -> Vec<Line<'static>> {
    match entry {
        Entry::User { text } => {
            let prefix = Prefix {
                first: vec![Span::styled("› ", theme::USER_MARKER)],
                rest: vec![Span::raw(MARGIN)],
            };
            let (shown, hidden) = clip(text.trim_end(), USER_MAX_LINES, USER_MAX_BYTES);
            let mut lines = Vec::new();
            for (index, line) in clean_lines(shown).enumerate() {
                let prefix =
                    if index == 0 { prefix.clone() } else { Prefix::uniform(prefix.rest.clone()) };
                let spans = [Span::styled(line.into_owned(), theme::USER_TEXT)];
                lines.extend(wrap(&spans, width, &prefix));
            }
            if hidden > 0 {
                let note = format!("{MARGIN}… {hidden} more lines (all of it was sent)");
                lines.push(Line::styled(truncate(&note, width).into_owned(), theme::DIM));
            }
            lines
        }
        Entry::Assistant { text } => {
            let lines = markdown::render(text, width, MARGIN);
            if lines.is_empty() { vec![Line::from(MARGIN)] } else { lines }
        }
        Entry::ToolCall { name, summary, .. } => vec![one_line(
            vec![
                Span::styled(format!("{MARGIN}▸ "), theme::TOOL_CALL),
                Span::styled(clean_line(name).into_owned(), theme::TOOL_NAME),
                Span::raw(" "),
            ],
            &first_line(summary),
            theme::TOOL_CALL,
            width,
        )],
        Entry::Reminder { text } => vec![one_line(
            vec![Span::styled(format!("{MARGIN}↻ reminder: "), theme::REMINDER)],
            &first_line(strip_tags(text)),
            theme::REMINDER,
            width,
        )],
        Entry::Error { text } => prose(text, width, "✗ ", theme::ERROR),
        Entry::Notice { text } => prose(text, width, "· ", theme::NOTICE),
    }
}

/// Multi-line plain text after a marker, wrapped, every line in `style`.
fn prose(
    text: &str,
    width: usize,
    marker: &str,
    style: ratatui::style::Style,
) -> Vec<Line<'static>> {
    let first = Prefix {
        first: vec![Span::styled(format!("{MARGIN}{marker}"), style)],
        rest: vec![Span::raw(" ".repeat(MARGIN.len() + marker.chars().count()))],
    };
    let rest = Prefix::uniform(first.rest.clone());
    let mut lines = Vec::new();
    for (index, line) in clean_lines(text.trim_end()).enumerate() {
        let spans = [Span::styled(line.into_owned(), style)];
        lines.extend(wrap(&spans, width, if index == 0 { &first } else { &rest }));
    }
    lines
}

/// The start of `text`: at most `max_lines` lines and about `max_bytes` bytes (cut at a line
/// end when there is one), and how many lines were left out.
fn clip(text: &str, max_lines: usize, max_bytes: usize) -> (&str, usize) {
    let mut end = text
        .match_indices('\n')
        .nth(max_lines.saturating_sub(1))
        .map_or(text.len(), |(index, _)| index);
    if end > max_bytes {
        let mut cut = max_bytes;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        end = text[..cut].rfind('\n').unwrap_or(cut);
    }
    let hidden =
        if end < text.len() { text[end..].trim_start_matches('\n').lines().count() } else { 0 };
    (&text[..end], hidden)
}

/// `lead` then `text` on one line, cut to `width`.
fn one_line(
    mut lead: Vec<Span<'static>>,
    text: &str,
    style: ratatui::style::Style,
    width: usize,
) -> Line<'static> {
    let used: usize = lead.iter().map(Span::width).sum();
    let room = width.saturating_sub(used);
    lead.push(Span::styled(truncate(text, room).into_owned(), style));
    Line::from(lead)
}

/// `<reminder>text</reminder>` shown as `text`.
fn strip_tags(text: &str) -> &str {
    let trimmed = text.trim();
    if let (Some(open_end), Some(close_start)) = (trimmed.find('>'), trimmed.rfind("</")) {
        if trimmed.starts_with('<') && open_end < close_start {
            return &trimmed[open_end + 1..close_start];
        }
    }
    trimmed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extensions_are_told_from_replacements() {
        let old: imbl::Vector<u32> = (0..10).collect();
        let mut longer = old.clone();
        longer.push_back(10);
        assert!(is_extension(&old, &longer));
        assert!(!is_extension(&longer, &old));
        let replaced: imbl::Vector<u32> = (100..120).collect();
        assert!(!is_extension(&old, &replaced));
        assert!(is_extension(&imbl::Vector::new(), &old));
    }

    #[test]
    fn long_prompts_are_clipped_at_a_line_end() {
        let text = "a\nb\nc\nd";
        assert_eq!(clip(text, 2, 1000), ("a\nb", 2));
        assert_eq!(clip(text, 10, 1000), (text, 0));
        assert_eq!(clip("abcdef\nxyz", 10, 4), ("abcd", 2));
        assert_eq!(clip("ab\ncdef\nxyz", 10, 5), ("ab", 2));
    }

    #[test]
    fn reminder_tags_are_stripped() {
        assert_eq!(strip_tags("<reminder>Update your todos.</reminder>"), "Update your todos.");
        assert_eq!(strip_tags("plain"), "plain");
    }
}
