//! A long list of blocks laid out only where it is looked at: the conversation and the history
//! inspector are both one.
//!
//! Each block is laid out at the current width when it is first on screen (or scrolled past) and
//! kept until the width changes; blocks never seen are never laid out, so a 10,000-entry
//! transcript opens by laying out the few at its bottom. The position is a `scroll::Anchor` (see
//! there for why). `prepare` (from the event loop, with `&mut`) fills the cache for the next
//! frame; drawing only reads it, laying out on the fly — without keeping — anything `prepare`
//! did not cover.

use super::keymap::Motion;
use super::scroll::{self, Anchor, Heights, Scroll};
use std::borrow::Cow;

/// The blocks a [`LazyList`] shows, and how to lay one out.
pub trait Blocks {
    /// One block laid out at a width: lines, or rows to draw.
    type Laid: Clone;

    fn count(&self) -> usize;
    /// Lays out block `index` at `width`.
    fn lay_out(&self, index: usize, width: usize) -> Self::Laid;
    /// How many screen rows a laid-out block takes.
    fn rows(laid: &Self::Laid) -> usize;
    /// Whether block `index` may be kept once laid out (blocks that still change — text
    /// streaming in — are laid out afresh every time).
    fn is_stable(&self, _index: usize) -> bool {
        true
    }
}

/// The cache of laid-out blocks and where the view is scrolled.
#[derive(Debug, Clone)]
pub struct LazyList<L> {
    width: usize,
    cache: Vec<Option<L>>,
    scroll: Scroll,
    /// The inner size at the last layout, for paging.
    viewport: (usize, usize),
}

impl<L> Default for LazyList<L> {
    fn default() -> Self {
        Self { width: 0, cache: Vec::new(), scroll: Scroll::Bottom, viewport: (80, 20) }
    }
}

impl<L: Clone> LazyList<L> {
    /// Forgets every block laid out from `keep` on (they changed), and follows the end again
    /// unless only new blocks were added after the kept ones.
    pub fn invalidate_from(&mut self, keep: usize, appended: bool) {
        self.cache.truncate(keep);
        if !appended {
            self.scroll = Scroll::Bottom;
        }
    }

    /// Whether the view follows new output (is at the bottom).
    pub fn is_following(&self) -> bool {
        self.scroll == Scroll::Bottom
    }

    /// How many blocks are laid out: those on screen or scrolled past, not all of them.
    pub fn laid_out(&self) -> usize {
        self.cache.iter().filter(|laid| laid.is_some()).count()
    }

    /// The inner size of the last layout.
    pub fn viewport(&self) -> (usize, usize) {
        self.viewport
    }

    /// Block `index` as laid out at the current width, if it is.
    pub fn cached(&self, index: usize) -> Option<&L> {
        self.cache.get(index).and_then(Option::as_ref)
    }

    /// Lays out what the next frame at this inner size shows.
    pub fn prepare<B: Blocks<Laid = L>>(&mut self, blocks: &B, width: usize, height: usize) {
        self.viewport = (width, height);
        self.set_width(width);
        let current = self.scroll;
        let mut filler = Filler { list: self, blocks };
        let anchor = scroll::resolve(&mut filler, current, height);
        let mut rows = 0;
        let mut index = anchor.block;
        while rows < height + anchor.line && index < filler.count() {
            rows += filler.height(index);
            index += 1;
        }
    }

    /// Moves the view up by `lines`; the view stops following.
    pub fn scroll_up<B: Blocks<Laid = L>>(&mut self, blocks: &B, lines: usize) {
        let (width, height) = self.viewport;
        self.set_width(width);
        let current = self.scroll;
        let mut filler = Filler { list: self, blocks };
        let top = scroll::resolve(&mut filler, current, height);
        let anchor = scroll::up(&mut filler, top, lines);
        self.scroll = scroll::settle(&mut filler, anchor, height);
    }

    /// Moves the view down by `lines`; reaching the end resumes following.
    pub fn scroll_down<B: Blocks<Laid = L>>(&mut self, blocks: &B, lines: usize) {
        let (width, height) = self.viewport;
        self.set_width(width);
        let current = self.scroll;
        self.scroll = scroll::down(&mut Filler { list: self, blocks }, current, lines, height);
    }

    /// Shows the first block.
    pub fn top<B: Blocks<Laid = L>>(&mut self, blocks: &B) {
        let height = self.viewport.1;
        self.scroll = scroll::settle(&mut Filler { list: self, blocks }, Anchor::default(), height);
    }

    /// Shows the end and follows new output.
    pub fn bottom(&mut self) {
        self.scroll = Scroll::Bottom;
    }

    /// Moves the view as a scroll key asks; a page keeps one line of the one before in view.
    pub fn go<B: Blocks<Laid = L>>(&mut self, blocks: &B, motion: Motion) {
        let page = self.viewport.1.saturating_sub(1).max(1);
        match motion {
            Motion::Up => self.scroll_up(blocks, 1),
            Motion::Down => self.scroll_down(blocks, 1),
            Motion::PageUp => self.scroll_up(blocks, page),
            Motion::PageDown => self.scroll_down(blocks, page),
            Motion::Top => self.top(blocks),
            Motion::Bottom => self.bottom(),
        }
    }

    /// Holds the view with `lines` rows of context above row `row` of block `block`.
    pub fn show<B: Blocks<Laid = L>>(
        &mut self,
        blocks: &B,
        block: usize,
        row: usize,
        lines: usize,
    ) {
        let anchor =
            scroll::up(&mut Filler { list: self, blocks }, Anchor { block, line: row }, lines);
        self.scroll = Scroll::At(anchor);
    }

    /// The block drawn at the top of the view now.
    pub fn top_block<B: Blocks<Laid = L>>(&mut self, blocks: &B) -> usize {
        let (current, height) = (self.scroll, self.viewport.1);
        scroll::resolve(&mut Filler { list: self, blocks }, current, height).block
    }

    /// Block `index` laid out, caching it (for callers that need its rows, e.g. to find a row).
    pub fn laid<B: Blocks<Laid = L>>(&mut self, blocks: &B, index: usize) -> Option<&L> {
        Filler { list: self, blocks }.height(index);
        self.cached(index)
    }

    /// The blocks to draw into a view of `width` × `height`, top first, each with how many of its
    /// rows are scrolled off above. Reads the cache; lays out afresh whatever it lacks.
    pub fn visible<'a, B: Blocks<Laid = L>>(
        &'a self,
        blocks: &B,
        width: usize,
        height: usize,
    ) -> Vec<(usize, Cow<'a, L>, usize)> {
        let mut reader = Reader { list: self, blocks, width };
        let anchor = scroll::resolve(&mut reader, self.scroll, height);
        let mut out = Vec::new();
        let mut shown = 0;
        let mut skip = anchor.line;
        for index in anchor.block..blocks.count() {
            if shown >= height {
                break;
            }
            let laid = self.get(blocks, index, width);
            shown += B::rows(&laid).saturating_sub(skip);
            out.push((index, laid, skip));
            skip = 0;
        }
        out
    }

    fn set_width(&mut self, width: usize) {
        if self.width != width {
            self.width = width;
            self.cache.iter_mut().for_each(|laid| *laid = None);
        }
    }

    fn get<'a, B: Blocks<Laid = L>>(
        &'a self,
        blocks: &B,
        index: usize,
        width: usize,
    ) -> Cow<'a, L> {
        match self.cache.get(index) {
            Some(Some(laid)) if self.width == width && blocks.is_stable(index) => {
                Cow::Borrowed(laid)
            }
            _ => Cow::Owned(blocks.lay_out(index, width)),
        }
    }
}

/// Heights that fill the cache as they are asked for.
struct Filler<'a, B: Blocks> {
    list: &'a mut LazyList<B::Laid>,
    blocks: &'a B,
}

impl<B: Blocks> Heights for Filler<'_, B> {
    fn count(&self) -> usize {
        self.blocks.count()
    }

    fn height(&mut self, index: usize) -> usize {
        let width = self.list.width;
        if !self.blocks.is_stable(index) {
            return B::rows(&self.blocks.lay_out(index, width));
        }
        if self.list.cache.len() <= index {
            self.list.cache.resize(index + 1, None);
        }
        let slot = &mut self.list.cache[index];
        B::rows(slot.get_or_insert_with(|| self.blocks.lay_out(index, width)))
    }
}

/// Heights read from the cache, laid out on the fly where it has none (nothing is kept).
struct Reader<'a, B: Blocks> {
    list: &'a LazyList<B::Laid>,
    blocks: &'a B,
    width: usize,
}

impl<B: Blocks> Heights for Reader<'_, B> {
    fn count(&self) -> usize {
        self.blocks.count()
    }

    fn height(&mut self, index: usize) -> usize {
        B::rows(&self.list.get(self.blocks, index, self.width))
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

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

    /// Blocks of fixed heights that count how often they are laid out.
    struct Fixed {
        heights: Vec<usize>,
        laid: Cell<usize>,
    }

    impl Blocks for Fixed {
        type Laid = usize;
        fn count(&self) -> usize {
            self.heights.len()
        }
        fn lay_out(&self, index: usize, _width: usize) -> usize {
            self.laid.set(self.laid.get() + 1);
            self.heights[index]
        }
        fn rows(laid: &usize) -> usize {
            *laid
        }
        fn is_stable(&self, index: usize) -> bool {
            index + 1 < self.heights.len()
        }
    }

    fn fixed(count: usize) -> Fixed {
        Fixed { heights: vec![3; count], laid: Cell::new(0) }
    }

    #[test]
    fn only_what_is_on_screen_is_laid_out_and_drawing_lays_out_nothing_more() {
        let blocks = fixed(10_000);
        let mut list = LazyList::default();
        list.prepare(&blocks, 80, 9);
        assert!(list.laid_out() <= 4, "{}", list.laid_out());
        let before = blocks.laid.get();
        let visible = list.visible(&blocks, 80, 9);
        assert_eq!(visible.first().map(|(index, _, skip)| (*index, *skip)), Some((9_997, 0)));
        // Only the last (unstable) block is laid out again when drawn: for its height, then its
        // rows.
        assert!(blocks.laid.get() - before <= 2, "{} layouts", blocks.laid.get() - before);
    }

    #[test]
    fn scrolling_holds_the_view_and_the_end_follows_again() {
        let blocks = fixed(100);
        let mut list = LazyList::default();
        list.prepare(&blocks, 80, 9);
        list.scroll_up(&blocks, 4);
        assert!(!list.is_following());
        list.scroll_down(&blocks, 4);
        assert!(list.is_following());
        list.top(&blocks);
        assert_eq!(list.top_block(&blocks), 0);
        list.bottom();
        assert!(list.is_following());
    }

    #[test]
    fn a_new_width_lays_out_again() {
        let blocks = fixed(10);
        let mut list = LazyList::default();
        list.prepare(&blocks, 80, 30);
        let first = blocks.laid.get();
        list.prepare(&blocks, 80, 30);
        assert!(blocks.laid.get() - first <= 2, "only the unstable block again");
        list.prepare(&blocks, 40, 30);
        assert!(blocks.laid.get() >= first * 2);
    }
}
