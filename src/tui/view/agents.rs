//! The child agents' view (`/agents`, or `o` on a board item a child works on): one child's
//! conversation drawn as the main conversation is — the same widget over the child's own
//! transcript — with a line of every child of the session above it (id, how it stands, label)
//! and, in its frame's title, what it runs now and has spent. Tab steps to the next child; the
//! inspector opens on the child's last request.

use super::super::keymap::{Binding, KeySpec, scroll_keys};
use super::super::stack::{Ctx, Effect, View};
use super::super::text::{clean_line, compact_count, truncate};
use super::super::theme;
use super::conversation::{self, Conversation, Source, WHEEL_LINES};
use super::pane;
use crate::agent::{ChildAgent, ChildStatus, Snapshot};
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::KeyCode;
use ratatui::layout::{Position, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Widget};
use std::sync::Arc;

/// Rows the line of children takes above the conversation.
const LIST_ROWS: u16 = 1;
/// Lines one arrow key scrolls.
const LINE_STEP: usize = 1;

/// What a key does in the view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Next,
    Previous,
    Up,
    Down,
    Scroll(conversation::Action),
    Inspect,
    Close,
}

/// The view's keys.
pub const KEYS: &[Binding<Action>] = &[
    Binding {
        keys: &[KeySpec::plain(KeyCode::Esc), KeySpec::char('q')],
        action: Action::Close,
        help: "close the child agents' view",
        hint: Some("close"),
    },
    Binding {
        keys: &[KeySpec::plain(KeyCode::Tab), KeySpec::plain(KeyCode::Right)],
        action: Action::Next,
        help: "the next child agent",
        hint: Some("next agent"),
    },
    Binding {
        keys: &[
            KeySpec::plain(KeyCode::BackTab),
            KeySpec::shift(KeyCode::BackTab),
            KeySpec::plain(KeyCode::Left),
        ],
        action: Action::Previous,
        help: "the child agent before",
        hint: None,
    },
    Binding {
        keys: &[KeySpec::ctrl('t'), KeySpec::plain(KeyCode::F(2))],
        action: Action::Inspect,
        help: "the child's last request, as sent, in the inspector",
        hint: Some("request"),
    },
    Binding { keys: scroll_keys::DOWN, action: Action::Down, help: "scroll down", hint: None },
    Binding { keys: scroll_keys::UP, action: Action::Up, help: "scroll up", hint: None },
    Binding {
        keys: &[KeySpec::plain(KeyCode::PageUp)],
        action: Action::Scroll(conversation::Action::PageUp),
        help: "up a page",
        hint: None,
    },
    Binding {
        keys: &[KeySpec::plain(KeyCode::PageDown)],
        action: Action::Scroll(conversation::Action::PageDown),
        help: "down a page",
        hint: None,
    },
    Binding {
        keys: &[KeySpec::plain(KeyCode::Home)],
        action: Action::Scroll(conversation::Action::Top),
        help: "the child's first words",
        hint: None,
    },
    Binding {
        keys: &[KeySpec::plain(KeyCode::End)],
        action: Action::Scroll(conversation::Action::Bottom),
        help: "the child's newest words, followed as they come",
        hint: None,
    },
];

/// The open view: which child it shows, and that child's conversation laid out.
#[derive(Debug)]
pub struct AgentsView {
    /// The id of the child shown.
    shown: Option<Arc<str>>,
    conversation: Conversation,
    closed: bool,
}

/// The snapshot of `child`'s conversation, or an empty one until it shows one.
fn view_of(child: Option<&ChildAgent>) -> Snapshot {
    child.and_then(|child| child.view.as_deref().cloned()).unwrap_or_default()
}

impl AgentsView {
    /// Opens on the newest child of board item `item` when one is given and has a child; else
    /// on the newest child running, else the newest.
    pub fn open(snapshot: &Snapshot, item: Option<&str>) -> Self {
        let children = &snapshot.children;
        let of_item = item.and_then(|item| {
            children.iter().rev().find(|child| child.item.as_deref() == Some(item))
        });
        let shown = of_item
            .or_else(|| children.iter().rev().find(|child| child.is_running()))
            .or_else(|| children.last())
            .map(|child| Arc::clone(&child.id));
        let mut view = Self { shown, conversation: Conversation::default(), closed: false };
        view.update(snapshot);
        view
    }

    /// The id of the child shown.
    pub fn shown(&self) -> Option<&str> {
        self.shown.as_deref()
    }

    /// The child shown, as `snapshot` has it.
    fn child<'a>(&self, snapshot: &'a Snapshot) -> Option<&'a ChildAgent> {
        let shown = self.shown.as_deref()?;
        snapshot.children.iter().find(|child| &*child.id == shown).map(|child| &**child)
    }

    /// Takes in a newer snapshot: the shown child's conversation as it now stands.
    pub fn update(&mut self, snapshot: &Snapshot) {
        let view = view_of(self.child(snapshot));
        self.conversation.sync(&view.transcript);
        self.conversation.sync_marks(&view.call_marks, &view.call_tallies, &source(&view));
        self.conversation.sync_diffs(&view.call_diffs, &source(&view));
    }

    /// Lays out what the next frame at `screen` shows.
    pub fn prepare(&mut self, snapshot: &Snapshot, screen: Rect) {
        let view = view_of(self.child(snapshot));
        let inner = Conversation::inner_area(body_area(screen));
        self.conversation.prepare(
            &source(&view),
            usize::from(inner.width),
            usize::from(inner.height),
        );
    }

    /// Shows the child `step` places after (or before) the one shown.
    fn step(&mut self, snapshot: &Snapshot, forward: bool) {
        let children = &snapshot.children;
        if children.is_empty() {
            return;
        }
        let at = self
            .shown
            .as_deref()
            .and_then(|shown| children.iter().position(|child| &*child.id == shown))
            .unwrap_or(0);
        let next = if forward {
            (at + 1) % children.len()
        } else {
            at.checked_sub(1).unwrap_or(children.len() - 1)
        };
        self.shown = Some(Arc::clone(&children[next].id));
        // Another child's conversation: laid out afresh.
        self.conversation = Conversation::default();
        self.update(snapshot);
    }

    /// Draws the view over `screen`.
    pub fn render(&self, snapshot: &Snapshot, screen: Rect, buf: &mut Buffer) {
        Clear.render(screen, buf);
        let list = Rect { height: LIST_ROWS.min(screen.height), ..screen };
        buf.set_line(list.x, list.y, &children_line(snapshot, self.shown()), list.width);
        let body = body_area(screen);
        let child = self.child(snapshot);
        let view = view_of(child);
        let hints = Line::styled(" Tab next · Ctrl+T request · Esc close ", theme::DIM);
        let frame =
            pane(title(child, usize::from(body.width)), true).title_bottom(hints.right_aligned());
        if child.is_some() {
            self.conversation.render_framed(frame, &source(&view), body, buf);
            return;
        }
        let inner = frame.inner(body);
        frame.render(body, buf);
        let note = "No child agents yet: the model starts one with the task tool.";
        buf.set_line(inner.x, inner.y, &Line::styled(note, theme::DIM), inner.width);
    }
}

/// Where the child's conversation goes, under the line of children.
fn body_area(screen: Rect) -> Rect {
    Rect {
        y: screen.y + LIST_ROWS.min(screen.height),
        height: screen.height.saturating_sub(LIST_ROWS),
        ..screen
    }
}

/// The parts of a child's snapshot the conversation pane reads.
fn source(view: &Snapshot) -> Source<'_> {
    super::super::main_view::source(view)
}

/// ` a1 ✓ Count · a2 ⠋ Run the tests `: every child, the shown one marked.
fn children_line(snapshot: &Snapshot, shown: Option<&str>) -> Line<'static> {
    let mut spans = vec![Span::styled(" agents: ", theme::TITLE)];
    for (index, child) in snapshot.children.iter().enumerate() {
        if index > 0 {
            spans.push(Span::styled(" · ", theme::DIM));
        }
        let style = if Some(&*child.id) == shown { theme::KEY } else { theme::DIM };
        spans.push(Span::styled(
            format!("{} {} {}", child.id, mark(child.status), clean_line(&child.label)),
            style,
        ));
    }
    Line::from(spans)
}

/// How a child stands, in one character.
fn mark(status: ChildStatus) -> &'static str {
    match status {
        ChildStatus::Running => "…",
        ChildStatus::Done => "✓",
        ChildStatus::Failed => "✗",
        ChildStatus::Stopped => "■",
        ChildStatus::Interrupted => "⊘",
    }
}

/// ` child a2 · Run the tests · item #3 — running · bash cargo test · 3 rounds · 12.3k tok `.
fn title(child: Option<&ChildAgent>, width: usize) -> Line<'static> {
    let Some(child) = child else {
        return Line::styled(" Child agents ", theme::TITLE);
    };
    let mut text = format!(" {} — {}", clean_line(&child.describe()), child.status.as_str());
    if let Some(tool) = &child.tool {
        text.push_str(&format!(" · {}", clean_line(tool)));
    }
    text.push_str(&format!(
        " · {} · {} tok ",
        super::board::lines::rounds_text(child.rounds),
        compact_count(child.usage.input_tokens)
    ));
    Line::styled(truncate(&text, width.saturating_sub(2)).into_owned(), theme::TITLE)
}

impl View for AgentsView {
    type Action = Action;
    const KEYS: &'static [Binding<Action>] = KEYS;

    fn act(&mut self, action: Action, ctx: &mut Ctx<'_>) {
        let view = view_of(self.child(ctx.snapshot));
        let source = source(&view);
        match action {
            Action::Close => self.closed = true,
            Action::Next => self.step(ctx.snapshot, true),
            Action::Previous => self.step(ctx.snapshot, false),
            Action::Up => self.conversation.scroll_up(&source, LINE_STEP),
            Action::Down => self.conversation.scroll_down(&source, LINE_STEP),
            Action::Scroll(action) => self.conversation.act(&source, action),
            Action::Inspect => {
                if let Some(shown) = &self.shown {
                    ctx.effect(Effect::InspectChild(shown.to_string()));
                }
            }
        }
    }

    fn wheel(&mut self, up: bool, _at: Position, ctx: &mut Ctx<'_>) -> bool {
        let view = view_of(self.child(ctx.snapshot));
        let source = source(&view);
        if up {
            self.conversation.scroll_up(&source, WHEEL_LINES);
        } else {
            self.conversation.scroll_down(&source, WHEEL_LINES);
        }
        true
    }

    fn is_done(&self) -> bool {
        self.closed
    }
}
