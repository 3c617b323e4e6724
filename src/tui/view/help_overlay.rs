//! The help overlay: every key keel answers to, grouped by the component that handles it.
//!
//! The sections are built from the components' own binding tables (see `keymap`), the same tables
//! that dispatch the keys, so this list cannot drift from what the keys do.

use super::super::keymap::{Binding, HelpSection, KeySpec, Motion, ScrollRows, scrolling_keys};
use super::super::layout::centered;
use super::super::stack::{Ctx, View};
use super::super::text::width as text_width;
use super::super::theme;
use super::super::wrap::{Prefix, wrap};
use super::conversation::WHEEL_LINES;
use super::pane;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::KeyCode;
use ratatui::layout::{Position, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Widget};

/// The overlay's widest box.
const MAX_WIDTH: u16 = 96;
/// Cells kept free around the box.
const MARGIN: u16 = 1;
/// The key column never takes more than this many cells; longer labels get their own line.
const MAX_KEY_COLUMN: usize = 24;
/// Nor more than this fraction (1/n) of the box's width.
const KEY_COLUMN_SHARE: usize = 3;

/// What a key does to the help overlay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Scroll(Motion),
    Close,
}

/// The help overlay's keys.
pub const KEYS: &[Binding<Action>] = scrolling_keys![
    Action::Scroll,
    ScrollRows::ends("top", "bottom");
    Binding {
        keys: &[KeySpec::plain(KeyCode::Esc), KeySpec::char('q'), KeySpec::char('?')],
        action: Action::Close,
        help: "close the help",
        hint: Some("close"),
    },
];

/// The open help overlay.
#[derive(Debug, Clone)]
pub struct HelpOverlay {
    sections: Vec<HelpSection>,
    offset: usize,
    /// Inner height at the last frame, for paging.
    page: usize,
    closed: bool,
}

impl HelpOverlay {
    pub fn new(sections: Vec<HelpSection>) -> Self {
        Self { sections, offset: 0, page: 1, closed: false }
    }

    /// Scrolls by mouse-wheel lines.
    pub fn scroll(&mut self, up: bool, amount: usize) {
        self.offset = if up {
            self.offset.saturating_sub(amount)
        } else {
            self.offset.saturating_add(amount)
        };
    }

    /// Clamps the offset to what the next frame at `screen` will show.
    pub fn prepare(&mut self, screen: Rect) {
        let inner = inner_area(screen);
        self.page = usize::from(inner.height);
        let total = self.lines(usize::from(inner.width)).len();
        self.offset = self.offset.min(total.saturating_sub(self.page));
    }

    fn lines(&self, width: usize) -> Vec<Line<'static>> {
        let key_column = self
            .sections
            .iter()
            .flat_map(|section| section.rows.iter())
            .map(|(keys, _)| text_width(keys))
            .max()
            .unwrap_or(0)
            .min(MAX_KEY_COLUMN)
            .min(width / KEY_COLUMN_SHARE)
            + 2;
        let mut out = Vec::new();
        for section in &self.sections {
            if !out.is_empty() {
                out.push(Line::default());
            }
            out.push(Line::styled(section.title, theme::TITLE));
            let indent = vec![Span::raw(" ".repeat(key_column))];
            for (keys, help) in &section.rows {
                let key = Span::styled(keys.clone(), theme::KEY);
                let prefix = if text_width(keys) + 1 < key_column {
                    let pad = " ".repeat(key_column - text_width(keys));
                    Prefix { first: vec![key, Span::raw(pad)], rest: indent.clone() }
                } else {
                    // Too long for the column: the keys get a line of their own.
                    out.push(Line::from(key));
                    Prefix::uniform(indent.clone())
                };
                out.extend(wrap(&[Span::raw(*help)], width, &prefix));
            }
        }
        out
    }

    /// Draws the overlay over `screen`.
    pub fn render(&self, screen: Rect, buf: &mut Buffer) {
        let area = outer_area(screen);
        Clear.render(area, buf);
        let block = pane(Line::styled(" Keys ", theme::TITLE), true)
            .title_bottom(Line::styled(" Esc close · j/k scroll ", theme::DIM).right_aligned());
        let inner = block.inner(area);
        block.render(area, buf);
        let lines = self.lines(usize::from(inner.width));
        let offset = self.offset.min(lines.len().saturating_sub(usize::from(inner.height)));
        for (row, line) in lines.iter().skip(offset).take(usize::from(inner.height)).enumerate() {
            let y = inner.y + u16::try_from(row).unwrap_or(u16::MAX);
            buf.set_line(inner.x, y, line, inner.width);
        }
    }
}

impl View for HelpOverlay {
    type Action = Action;
    const KEYS: &'static [Binding<Action>] = KEYS;

    fn act(&mut self, action: Action, _ctx: &mut Ctx<'_>) {
        match action {
            Action::Scroll(motion) => self.offset = motion.from(self.offset, self.page.max(1)),
            Action::Close => self.closed = true,
        }
    }

    fn wheel(&mut self, up: bool, _at: Position, _ctx: &mut Ctx<'_>) -> bool {
        self.scroll(up, WHEEL_LINES);
        true
    }

    fn is_done(&self) -> bool {
        self.closed
    }
}

fn outer_area(screen: Rect) -> Rect {
    centered(screen, MAX_WIDTH, screen.height, MARGIN)
}

fn inner_area(screen: Rect) -> Rect {
    pane(Line::default(), true).inner(outer_area(screen))
}
