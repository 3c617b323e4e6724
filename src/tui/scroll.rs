//! Scrolling a long list of blocks whose heights are only known once they are laid out.
//!
//! The position is an anchor — the block and the line within it drawn at the top — not an absolute
//! line number, so the conversation and the history inspector never need the height of everything
//! above the view: a 10,000-entry transcript opens by laying out the few entries at its bottom.
//! Anchors also make "reading history is never yanked away" hold by construction: entries are only
//! ever appended, so new output changes nothing above the anchor. [`Scroll::Bottom`] follows the end.

/// The top line of the view: `line` of block `block`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Anchor {
    pub block: usize,
    pub line: usize,
}

/// Where a view is scrolled to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Scroll {
    /// Showing the end and following new output.
    #[default]
    Bottom,
    /// Held at an anchor; new output does not move it.
    At(Anchor),
}

/// A list of blocks that can say how tall each one is at the current width.
pub trait Heights {
    fn count(&self) -> usize;
    /// Height of block `index` in lines (laying it out if needed).
    fn height(&mut self, index: usize) -> usize;
}

/// The anchor that shows the last `viewport` lines.
pub fn bottom_anchor(blocks: &mut impl Heights, viewport: usize) -> Anchor {
    let mut remaining = viewport;
    let mut index = blocks.count();
    while index > 0 {
        index -= 1;
        let height = blocks.height(index);
        if height >= remaining {
            return Anchor { block: index, line: height - remaining };
        }
        remaining -= height;
    }
    Anchor::default()
}

/// Lines from `anchor` to the end, counting no further than `limit`.
fn lines_below(blocks: &mut impl Heights, anchor: Anchor, limit: usize) -> usize {
    let mut total = 0;
    let mut index = anchor.block;
    let mut skip = anchor.line;
    while index < blocks.count() && total <= limit {
        total += blocks.height(index).saturating_sub(skip);
        skip = 0;
        index += 1;
    }
    total
}

/// The anchor the view is drawn from: `Bottom` resolved, and an anchor so far down that the view
/// would end in empty space (after a resize, or a cleared transcript) pulled back to the bottom.
pub fn resolve(blocks: &mut impl Heights, scroll: Scroll, viewport: usize) -> Anchor {
    match scroll {
        Scroll::Bottom => bottom_anchor(blocks, viewport),
        Scroll::At(anchor) => {
            if anchor.block >= blocks.count() || lines_below(blocks, anchor, viewport) < viewport {
                bottom_anchor(blocks, viewport)
            } else {
                anchor
            }
        }
    }
}

/// `lines` lines further up; stops at the top.
pub fn up(blocks: &mut impl Heights, mut anchor: Anchor, mut lines: usize) -> Anchor {
    anchor.block = anchor.block.min(blocks.count());
    loop {
        if anchor.line >= lines {
            anchor.line -= lines;
            return anchor;
        }
        lines -= anchor.line;
        if anchor.block == 0 {
            anchor.line = 0;
            return anchor;
        }
        // Step onto the line just past the end of the previous block, then count down from it.
        anchor.block -= 1;
        anchor.line = blocks.height(anchor.block);
    }
}

/// `lines` lines further down; reaching the bottom turns following back on.
pub fn down(blocks: &mut impl Heights, scroll: Scroll, lines: usize, viewport: usize) -> Scroll {
    let Scroll::At(mut anchor) = scroll else {
        return Scroll::Bottom;
    };
    let mut lines = lines;
    while lines > 0 && anchor.block < blocks.count() {
        let left_in_block = blocks.height(anchor.block).saturating_sub(anchor.line);
        if lines < left_in_block {
            anchor.line += lines;
            lines = 0;
        } else {
            lines -= left_in_block;
            anchor = Anchor { block: anchor.block + 1, line: 0 };
        }
    }
    settle(blocks, anchor, viewport)
}

/// Holds the view at `anchor`, unless the view from there already reaches the end: then it
/// follows (scrolling up in a transcript shorter than the screen does not stop following).
pub fn settle(blocks: &mut impl Heights, anchor: Anchor, viewport: usize) -> Scroll {
    if lines_below(blocks, anchor, viewport) <= viewport {
        Scroll::Bottom
    } else {
        Scroll::At(anchor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Fixed(Vec<usize>);

    impl Heights for Fixed {
        fn count(&self) -> usize {
            self.0.len()
        }
        fn height(&mut self, index: usize) -> usize {
            self.0[index]
        }
    }

    #[test]
    fn bottom_shows_the_last_lines() {
        let mut blocks = Fixed(vec![3, 3, 3]);
        assert_eq!(bottom_anchor(&mut blocks, 4), Anchor { block: 1, line: 2 });
        assert_eq!(bottom_anchor(&mut blocks, 20), Anchor { block: 0, line: 0 });
    }

    #[test]
    fn up_crosses_blocks_and_stops_at_the_top() {
        let mut blocks = Fixed(vec![3, 3, 3]);
        let start = Anchor { block: 2, line: 1 };
        assert_eq!(up(&mut blocks, start, 1), Anchor { block: 2, line: 0 });
        assert_eq!(up(&mut blocks, start, 2), Anchor { block: 1, line: 2 });
        assert_eq!(up(&mut blocks, start, 100), Anchor { block: 0, line: 0 });
    }

    #[test]
    fn down_returns_to_following_at_the_end() {
        let mut blocks = Fixed(vec![3, 3, 3]);
        let top = Scroll::At(Anchor::default());
        assert_eq!(down(&mut blocks, top, 4, 3), Scroll::At(Anchor { block: 1, line: 1 }));
        assert_eq!(down(&mut blocks, top, 6, 3), Scroll::Bottom);
    }

    #[test]
    fn a_view_that_reaches_the_end_follows() {
        let mut blocks = Fixed(vec![2, 2]);
        assert_eq!(settle(&mut blocks, Anchor::default(), 5), Scroll::Bottom);
        assert_eq!(settle(&mut blocks, Anchor::default(), 3), Scroll::At(Anchor::default()));
    }

    #[test]
    fn an_anchor_past_the_content_falls_back_to_the_bottom() {
        let mut blocks = Fixed(vec![2, 2]);
        let far = Scroll::At(Anchor { block: 5, line: 0 });
        assert_eq!(resolve(&mut blocks, far, 3), Anchor { block: 0, line: 1 });
    }
}
