//! The view stack: every key, paste, wheel notch and status-bar hint walks one ordered stack of
//! views from the top (the order is written once, in `layers`), and the first view that takes it
//! keeps it.
//!
//! Each view answers from its own key table (see `keymap`), in the spirit of gitui's components:
//! a view that has the keyboard takes every key (keys it does not bind do nothing), one that does
//! not passes keys on down. Views never reach into the app: they change themselves and ask for
//! the rest through [`Effect`]s, which the app applies once the walk is over.

use super::keymap::{Binding, hints, lookup};
use super::layout::Regions;
use crate::agent::{Command, Decision, Snapshot};
use ratatui::crossterm::event::KeyEvent;
use ratatui::layout::Position;

/// What a view asks of the app.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// Send this to the agent.
    Send(Command),
    /// The person answered the approval request `id`.
    Answer {
        id: String,
        decision: Decision,
    },
    OpenInspector,
    /// Open the pager on the newest tool call's output.
    OpenOutput,
    /// Ask the agent for the last prompt's changes (`/diff`); the pager shows them.
    OpenTurnDiff,
    OpenHelp,
    /// Open the session picker and ask the agent for the saved sessions (`/resume`).
    OpenSessions,
    /// Give the board the keyboard (`/todos`).
    FocusBoard,
    /// Open the child agents' view (`/agents`), on the child of this board item if one is
    /// given and has one.
    OpenAgents {
        item: Option<String>,
    },
    /// Open the pager on the last check of this board item.
    OpenCheck {
        item: String,
    },
    /// Open the inspector on child agent `id`'s last request.
    InspectChild(String),
    /// Put this text in the composer and give it the keyboard (the board's edit and add keys).
    Compose(String),
    Quit,
}

/// What a view may read while it handles input, and where it puts its effects.
#[derive(Debug)]
pub struct Ctx<'a> {
    pub snapshot: &'a Snapshot,
    /// Where each pane is on screen now (for the mouse).
    pub regions: Regions,
    /// A turn is running.
    pub busy: bool,
    pub effects: Vec<Effect>,
}

impl Ctx<'_> {
    pub fn effect(&mut self, effect: Effect) {
        self.effects.push(effect);
    }
}

/// The status-bar hints: (keys, short label).
pub type Hints = Vec<(String, &'static str)>;

/// One view of the stack, with its own key table.
pub trait View {
    /// What a key of this view does.
    type Action: Copy + 'static;

    /// The view's keys: what dispatches them here, and what its hints and help are written from.
    const KEYS: &'static [Binding<Self::Action>];

    /// Does what a key of the table asks.
    fn act(&mut self, action: Self::Action, ctx: &mut Ctx<'_>);

    /// Whether the view has the keyboard now. One that has it takes every key and gives the hints;
    /// one that has not lets keys and the hints question pass down the stack.
    fn has_keyboard(&self) -> bool {
        true
    }

    /// Whether a line the view holds open (a search) takes every key, as text (`typed`).
    fn typing(&self) -> bool {
        false
    }

    /// A key: typed text while the view is `typing`, else the table's action, or else typed
    /// text.
    fn key(&mut self, key: &KeyEvent, ctx: &mut Ctx<'_>) {
        match lookup(Self::KEYS, key).filter(|_| !self.typing()) {
            Some(action) => self.act(action, ctx),
            None => self.typed(key, ctx),
        }
    }

    /// A key the table does not hold (text for an editor or a search line).
    fn typed(&mut self, _key: &KeyEvent, _ctx: &mut Ctx<'_>) {}

    /// A bracketed paste; returns whether the view took it.
    fn paste(&mut self, _text: &str, _ctx: &mut Ctx<'_>) -> bool {
        false
    }

    /// A wheel notch at `at`; returns whether the view took it.
    fn wheel(&mut self, _up: bool, _at: Position, _ctx: &mut Ctx<'_>) -> bool {
        false
    }

    /// The status-bar hints while the view has the keyboard.
    fn hints(&self, _ctx: &Ctx<'_>) -> Hints {
        hints(Self::KEYS)
    }

    /// Whether the view is finished and leaves the stack.
    fn is_done(&self) -> bool {
        false
    }
}

/// A view as the stack walks it, whatever its actions.
pub trait Layer {
    /// Returns whether the key stops here.
    fn key(&mut self, key: &KeyEvent, ctx: &mut Ctx<'_>) -> bool;
    fn paste(&mut self, text: &str, ctx: &mut Ctx<'_>) -> bool;
    fn wheel(&mut self, up: bool, at: Position, ctx: &mut Ctx<'_>) -> bool;
    /// The hints, if this view has the keyboard.
    fn hints(&self, ctx: &Ctx<'_>) -> Option<Hints>;
}

impl<V: View> Layer for V {
    fn key(&mut self, key: &KeyEvent, ctx: &mut Ctx<'_>) -> bool {
        if !self.has_keyboard() {
            return false;
        }
        View::key(self, key, ctx);
        true
    }

    fn paste(&mut self, text: &str, ctx: &mut Ctx<'_>) -> bool {
        View::paste(self, text, ctx)
    }

    fn wheel(&mut self, up: bool, at: Position, ctx: &mut Ctx<'_>) -> bool {
        View::wheel(self, up, at, ctx)
    }

    fn hints(&self, ctx: &Ctx<'_>) -> Option<Hints> {
        self.has_keyboard().then(|| View::hints(self, ctx))
    }
}
