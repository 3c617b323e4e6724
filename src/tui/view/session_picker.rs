//! The session picker (`/resume`): this workspace's saved sessions, the one written last first,
//! each with when it was last written, its board and its first prompt; ↑/↓ choose, Enter
//! switches to the chosen one, Esc closes.
//!
//! The list is the agent's answer to `Command::ListSessions` (the same list `keel sessions` and
//! `--resume` read), so the picker opens at once and fills in when the answer comes. Its keys
//! are single letters and Enter, and it fills in by itself, so it is guarded like the approval
//! box (see `type_ahead`): keys typed through its arrival go on to the composer.

use super::super::keymap::{Binding, KeySpec, Motion, hints, scroll_keys};
use super::super::layout::centered;
use super::super::stack::{Ctx, Effect, View};
use super::super::text::truncate;
use super::super::theme;
use super::pane;
use crate::agent::journal::SessionInfo;
use crate::agent::{Command, SessionList, Snapshot};
use crate::visible::one_line;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::KeyCode;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Widget};
use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

/// The picker's widest box.
const MAX_WIDTH: u16 = 100;
/// Cells kept free around the box.
const MARGIN: u16 = 1;
/// Rows the box adds to its list: borders and the key line.
const CHROME_ROWS: u16 = 3;
/// `2026-12-02 09:41`: the part of an RFC 3339 time shown.
const TIME_CHARS: usize = 16;
/// Below this many columns a row shows `12-02 09:41` and no board, to leave the prompt room.
const NARROW: usize = 56;
/// The year and its dash, left out on a narrow screen.
const YEAR_CHARS: usize = 5;
/// The mark of the session open now.
const OPEN_MARK: &str = " (open)";

/// What a key does in the picker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Choose(Motion),
    Switch,
    Close,
}

/// The picker's keys.
pub const KEYS: &[Binding<Action>] = &[
    Binding {
        keys: scroll_keys::DOWN,
        action: Action::Choose(Motion::Down),
        help: "the session below",
        hint: Some("choose"),
    },
    Binding {
        keys: scroll_keys::UP,
        action: Action::Choose(Motion::Up),
        help: "the session above",
        hint: Some("choose"),
    },
    Binding {
        keys: &[KeySpec::plain(KeyCode::Enter)],
        action: Action::Switch,
        help: "switch to the chosen session (between turns)",
        hint: Some("switch"),
    },
    Binding {
        keys: &[KeySpec::plain(KeyCode::Esc), KeySpec::char('q')],
        action: Action::Close,
        help: "close the list, staying in this session",
        hint: Some("close"),
    },
];

/// The open picker.
#[derive(Debug, Clone)]
pub struct SessionPicker {
    /// The listing the picker was opened after: an older one is not its answer.
    after: u64,
    /// The answer, once it came.
    list: Option<Arc<SessionList>>,
    selected: usize,
    /// First row shown.
    offset: usize,
    /// Rows of the list at the last frame.
    page: usize,
    closed: bool,
}

impl SessionPicker {
    /// A picker waiting for the listing that follows `snapshot`'s.
    pub fn open(snapshot: &Snapshot) -> Self {
        let after = snapshot.sessions.as_ref().map_or(0, |list| list.listed);
        Self { after, list: None, selected: 0, offset: 0, page: 1, closed: false }
    }

    /// Takes in the agent's newest state; returns whether the list arrived with it.
    pub fn update(&mut self, snapshot: &Snapshot) -> bool {
        match &snapshot.sessions {
            Some(list) if self.list.is_none() && list.listed > self.after => {
                self.list = Some(Arc::clone(list));
                true
            }
            _ => false,
        }
    }

    fn sessions(&self) -> &[SessionInfo] {
        self.list.as_deref().map_or(&[], |list| list.sessions.as_slice())
    }

    /// Keeps the chosen session in view in the frame about to be drawn at `screen`.
    pub fn prepare(&mut self, screen: Rect) {
        self.page = list_rows(self.area(screen));
        self.offset = visible_offset(self.offset, self.selected, self.page);
    }

    fn area(&self, screen: Rect) -> Rect {
        let rows = u16::try_from(self.sessions().len().max(1)).unwrap_or(u16::MAX);
        centered(screen, MAX_WIDTH, rows.saturating_add(CHROME_ROWS), MARGIN)
    }

    /// Draws the picker over `screen`; `holding` while typing that began before it goes on.
    pub fn render(&self, screen: Rect, buf: &mut Buffer, holding: bool) {
        let area = self.area(screen);
        Clear.render(area, buf);
        let block = pane(Line::styled(" Saved sessions of this workspace ", theme::TITLE), true);
        let inner = block.inner(area);
        block.render(area, buf);
        if inner.is_empty() {
            return;
        }
        let width = usize::from(inner.width);
        let list_rows = list_rows(area);
        let lines: Vec<Line<'static>> = match self.list.as_deref() {
            None => vec![Line::styled("Reading the saved sessions…", theme::DIM)],
            Some(SessionList { error: Some(error), .. }) => {
                vec![Line::styled(truncate(error, width).into_owned(), theme::ERROR)]
            }
            Some(list) if list.sessions.is_empty() => {
                vec![Line::styled("No saved sessions for this workspace yet.", theme::DIM)]
            }
            Some(list) => {
                let offset = visible_offset(self.offset, self.selected, list_rows);
                list.sessions
                    .iter()
                    .enumerate()
                    .skip(offset)
                    .take(list_rows)
                    .map(|(index, info)| {
                        let open = list.current.as_deref() == Some(info.id.as_str());
                        row(info, index == self.selected, open, width)
                    })
                    .collect()
            }
        };
        for (index, line) in lines.iter().take(list_rows).enumerate() {
            let y = inner.y + u16::try_from(index).unwrap_or(u16::MAX);
            buf.set_line(inner.x, y, line, inner.width);
        }
        let keys = if holding {
            Line::styled(
                truncate("typing goes to the composer · pause, then choose", width).into_owned(),
                theme::STATUS_ATTENTION,
            )
        } else {
            let text = hints(KEYS)
                .iter()
                .map(|(keys, label)| format!("{keys} {label}"))
                .collect::<Vec<_>>()
                .join(" · ");
            Line::styled(truncate(&text, width).into_owned(), theme::DIM)
        };
        buf.set_line(inner.x, inner.bottom() - 1, &keys, inner.width);
    }
}

/// Rows of the list in the box at `area`: its inside less the key line.
fn list_rows(area: Rect) -> usize {
    usize::from(pane(Line::default(), true).inner(area).height.saturating_sub(1))
}

/// The first row to show so that row `selected` is in view, nearest `offset`.
fn visible_offset(offset: usize, selected: usize, rows: usize) -> usize {
    if selected < offset {
        selected
    } else if rows > 0 && selected >= offset + rows {
        selected + 1 - rows
    } else {
        offset
    }
}

/// `› 2026-12-02 09:41    2/5  Fix the parser (open)` — `(open in keel 4242)` for one another
/// keel holds — cut to `width`; narrower than
/// [`NARROW`], `› 12-02 09:41  Fix the parser (open)`.
fn row(info: &SessionInfo, selected: bool, open: bool, width: usize) -> Line<'static> {
    let written = info.modified.duration_since(UNIX_EPOCH).unwrap_or(Duration::ZERO);
    let time = humantime::format_rfc3339_seconds(UNIX_EPOCH + written).to_string();
    let time: String = time.replacen('T', " ", 1).chars().take(TIME_CHARS).collect();
    let prompt = match one_line(&info.first_prompt) {
        prompt if prompt.is_empty() => "(no prompt)".to_owned(),
        prompt => prompt,
    };
    let gutter = if selected { "› " } else { "  " };
    let lead = if width < NARROW {
        format!("{}  ", time.get(YEAR_CHARS..).unwrap_or(&time))
    } else if info.total == 0 {
        format!("{time}         ")
    } else {
        format!("{time}  {:>5}  ", format!("{}/{}", info.done, info.total))
    };
    let tail = match (open, info.held_by) {
        (true, _) => OPEN_MARK.to_owned(),
        (false, Some(0)) => " (open in another keel)".to_owned(),
        (false, Some(pid)) => format!(" (open in keel {pid})"),
        (false, None) => String::new(),
    };
    let room = width.saturating_sub(gutter.len() + lead.chars().count() + tail.chars().count());
    let style = if selected { theme::TITLE } else { ratatui::style::Style::new() };
    Line::from(vec![
        Span::styled(gutter, theme::KEY),
        Span::styled(lead, style),
        Span::styled(truncate(&prompt, room).into_owned(), style),
        Span::styled(tail, theme::DIM),
    ])
}

impl View for SessionPicker {
    type Action = Action;
    const KEYS: &'static [Binding<Action>] = KEYS;

    fn act(&mut self, action: Action, ctx: &mut Ctx<'_>) {
        let count = self.sessions().len();
        match action {
            Action::Choose(motion) => {
                self.selected = motion.from(self.selected, self.page).min(count.saturating_sub(1));
            }
            Action::Close => self.closed = true,
            Action::Switch => {
                let Some(info) = self.sessions().get(self.selected) else { return };
                ctx.effect(Effect::Send(Command::Resume(info.id.clone())));
                self.closed = true;
            }
        }
        self.offset = visible_offset(self.offset, self.selected, self.page);
    }

    fn is_done(&self) -> bool {
        self.closed
    }
}
