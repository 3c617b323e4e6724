//! Every colour and text style the TUI uses, in one place.
//!
//! Only the sixteen basic ANSI colours are used, so keel looks right in any terminal theme and
//! over SSH; emphasis comes from modifiers (bold, dim, italic) rather than from many hues.
//! Secondary text is the terminal's own foreground, dimmed — never "bright black" (dark grey) or
//! grey, which some themes draw in their background's colour (Solarized Dark's bright black is
//! its background; Solarized Light's grey is nearly its background).

use ratatui::style::{Color, Modifier, Style};

/// Pane borders at rest.
pub const BORDER: Style = Style::new().add_modifier(Modifier::DIM);
/// The border of the pane that has the keyboard.
pub const BORDER_FOCUSED: Style = Style::new().fg(Color::Cyan);
/// Pane titles.
pub const TITLE: Style = Style::new().add_modifier(Modifier::BOLD);
/// Secondary text: hints, counts, notices.
pub const DIM: Style = Style::new().add_modifier(Modifier::DIM);

/// The marker before what the person typed.
pub const USER_MARKER: Style = Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD);
/// What the person typed.
pub const USER_TEXT: Style = Style::new().add_modifier(Modifier::BOLD);
/// A prompt waiting for the running turn to end.
pub const QUEUED: Style = Style::new().add_modifier(Modifier::DIM).add_modifier(Modifier::ITALIC);
/// A compact tool-call line in the conversation.
pub const TOOL_CALL: Style = Style::new().fg(Color::Blue);
/// The tool's name inside that line.
pub const TOOL_NAME: Style = Style::new().fg(Color::Blue).add_modifier(Modifier::BOLD);
/// The model's reasoning: dimmed, never mistaken for its answer.
pub const THINKING: Style = Style::new().add_modifier(Modifier::DIM).add_modifier(Modifier::ITALIC);
/// keel's reminder to the model: a system note, never the person's words.
pub const REMINDER: Style = Style::new().add_modifier(Modifier::DIM).add_modifier(Modifier::ITALIC);
/// Errors.
pub const ERROR: Style = Style::new().fg(Color::Red);
/// Neutral notes from keel.
pub const NOTICE: Style = Style::new().add_modifier(Modifier::DIM);
/// The first-run and demo introduction.
pub const INTRO: Style = Style::new().fg(Color::Cyan);

/// Markdown headings.
pub const HEADING: Style = Style::new().fg(Color::Magenta).add_modifier(Modifier::BOLD);
/// Inline `code`.
pub const INLINE_CODE: Style = Style::new().fg(Color::Yellow);
/// The body of a fenced code block.
pub const CODE_BLOCK: Style = Style::new().fg(Color::Yellow);
/// The gutter drawn before code-block and quote lines, and list bullets.
pub const GUTTER: Style = Style::new().add_modifier(Modifier::DIM);
/// Link text.
pub const LINK: Style = Style::new().fg(Color::Blue).add_modifier(Modifier::UNDERLINED);

/// A board item not started yet.
pub const TODO_PENDING: Style = Style::new();
/// The board item being worked on.
pub const TODO_IN_PROGRESS: Style = Style::new().fg(Color::Yellow).add_modifier(Modifier::BOLD);
/// What the item in progress is doing right now.
pub const TODO_ACTIVE_FORM: Style = Style::new().fg(Color::Yellow).add_modifier(Modifier::ITALIC);
/// A finished board item.
pub const TODO_DONE: Style = Style::new().fg(Color::Green).add_modifier(Modifier::DIM);
/// An item waiting for open blockers: dimmed, not grey — palette colour 8 is the background in
/// some themes (Solarized Dark).
pub const TODO_BLOCKED: Style = Style::new().add_modifier(Modifier::DIM);
/// A board item's child agent at work: what it runs now and has spent.
pub const CHILD_AT_WORK: Style = Style::new().fg(Color::Cyan);
/// The mark on an item in progress that has stood still too long.
pub const TODO_STALE: Style = Style::new().fg(Color::Red).add_modifier(Modifier::BOLD);
/// The `PLAN` badge of plan mode, on the board and in the status bar.
pub const PLAN_BADGE: Style =
    Style::new().fg(Color::Black).bg(Color::Magenta).add_modifier(Modifier::BOLD);
/// The filled part of the progress gauge.
pub const GAUGE_FILLED: Style = Style::new().fg(Color::Green);
/// The empty part of the progress gauge.
pub const GAUGE_EMPTY: Style = Style::new().add_modifier(Modifier::DIM);

/// A tool call still running.
pub const RUN_RUNNING: Style = Style::new().fg(Color::Yellow);
/// A tool call that succeeded.
pub const RUN_OK: Style = Style::new().fg(Color::Green);
/// A tool call that failed.
pub const RUN_FAILED: Style = Style::new().fg(Color::Red);
/// A tool call declined by the person or interrupted.
pub const RUN_STOPPED: Style = Style::new().add_modifier(Modifier::DIM);
/// The tail of a tool's output.
pub const RUN_OUTPUT: Style = Style::new();

/// Added lines of a diff.
pub const DIFF_ADDED: Style = Style::new().fg(Color::Green);
/// Removed lines of a diff.
pub const DIFF_REMOVED: Style = Style::new().fg(Color::Red);
/// Hunk headers of a diff.
pub const DIFF_HUNK: Style = Style::new().fg(Color::Cyan);
/// File headers of a diff.
pub const DIFF_FILE: Style = Style::new().add_modifier(Modifier::BOLD);

/// The status bar's background line.
pub const STATUS_BAR: Style = Style::new().bg(Color::Black).fg(Color::Gray);
/// The agent's state in the status bar while it works.
pub const STATUS_BUSY: Style = Style::new().fg(Color::Yellow);
/// The agent's state in the status bar while it waits for the person.
pub const STATUS_ATTENTION: Style = Style::new().fg(Color::Magenta).add_modifier(Modifier::BOLD);
/// The chosen row of the composer's completion menu.
pub const MENU_SELECTED: Style = Style::new().add_modifier(Modifier::REVERSED);
/// A key in a hint.
pub const KEY: Style = Style::new().fg(Color::Cyan);

/// A message header in the history inspector.
pub const JSON_HEADER: Style = Style::new().fg(Color::Magenta).add_modifier(Modifier::BOLD);
/// A JSON object key in the history inspector.
pub const JSON_KEY: Style = Style::new().fg(Color::Cyan);
/// Every search hit in the history inspector.
pub const SEARCH_HIT: Style = Style::new().bg(Color::Yellow).fg(Color::Black);
/// The search hit the inspector jumped to.
pub const SEARCH_CURRENT: Style =
    Style::new().bg(Color::Magenta).fg(Color::Black).add_modifier(Modifier::BOLD);

/// Takes every colour out of `buf` for `NO_COLOR`, keeping bold, dim, italic and the rest. A
/// cell that stood out by its background (a search hit, the status bar) is drawn reversed, so
/// it still stands out.
pub fn strip_colours(buf: &mut ratatui::buffer::Buffer) {
    for cell in &mut buf.content {
        if cell.bg != Color::Reset {
            cell.modifier.insert(Modifier::REVERSED);
        }
        cell.fg = Color::Reset;
        cell.bg = Color::Reset;
        cell.underline_color = Color::Reset;
    }
}
