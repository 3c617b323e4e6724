//! The widgets, one a file. Each draws from state it is handed and keeps no clock of its own:
//! animation comes from the frame counter in `App`, durations from the snapshot, so a frame is a
//! pure function of the state it was given.

pub mod agents;
pub mod approval_modal;
pub mod board;
mod command_wrap;
pub mod completion;
pub mod composer;
pub mod conversation;
mod diff_lines;
mod entry_lines;
pub mod help_overlay;
pub mod inspector;
pub mod pager;
mod paste_tokens;
pub(super) mod plan_hint;
mod raw_json;
pub mod session_picker;
pub mod status_bar;
mod streaming_lines;
pub mod tool_log;
mod word_delete;

pub use super::keymap::Motion;
use super::theme;
use ratatui::text::Line;
use ratatui::widgets::{Block, BorderType, Padding};

/// The spinner's frames, one per tick.
const SPINNER: [char; 10] = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/// The spinner character for animation frame `frame`.
pub fn spinner(frame: u64) -> char {
    let index = usize::try_from(frame % SPINNER.len() as u64).unwrap_or(0);
    SPINNER[index]
}

/// Cells a pane's border takes across: one on each side.
pub const BORDER_CELLS: usize = 2;

/// The inside of a pane drawn over `area`.
pub fn pane_inner(area: ratatui::layout::Rect) -> ratatui::layout::Rect {
    pane(Line::default(), false).inner(area)
}

/// The rounded, titled frame every pane is drawn in, with a column of padding on each side.
pub fn pane(title: impl Into<Line<'static>>, focused: bool) -> Block<'static> {
    Block::bordered()
        .border_type(BorderType::Rounded)
        .border_style(if focused { theme::BORDER_FOCUSED } else { theme::BORDER })
        .padding(Padding::horizontal(1))
        .title(title.into())
}
