//! The view stack's order, written once. [`ORDER`] lists the layers topmost first, and the key
//! walk, the status-bar hints and the drawing all go through it — the walk and the hints from the
//! top down, the drawing from the bottom up — so the view drawn on top is the one that gets the
//! keys first. [`Views`] holds the views, one a layer; `App::is_open` says which layers are open.

use super::app::App;
use super::main_view::MainView;
use super::stack::{Layer, View};
use super::view::agents::AgentsView;
use super::view::approval_modal::ApprovalModal;
use super::view::board::BoardPane;
use super::view::help_overlay::HelpOverlay;
use super::view::inspector::Inspector;
use super::view::pager::Pager;
use super::view::session_picker::SessionPicker;

/// One place in the view stack.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slot {
    /// The approval box, with the keyboard.
    Approval,
    /// The session picker (`/resume`).
    Sessions,
    /// The output pager (Ctrl+G, `/diff`).
    Output,
    /// The request inspector (Ctrl+T).
    History,
    /// The approval box the inspector was opened over: it waits under it.
    CoveredApproval,
    /// The child agents' view (`/agents`).
    Agents,
    Help,
    /// The composer's menu (slash commands, `@` paths); the main view answers its keys.
    Completion,
    /// The board, which has the keyboard after `/todos`.
    Board,
    /// The conversation, the tool log, the composer and the status bar.
    Main,
}

/// The view stack, topmost first.
pub const ORDER: [Slot; 10] = [
    Slot::Approval,
    Slot::Sessions,
    Slot::Output,
    Slot::History,
    Slot::CoveredApproval,
    Slot::Agents,
    Slot::Help,
    Slot::Completion,
    Slot::Board,
    Slot::Main,
];

/// Which overlay is open, for callers that only need to know.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OverlayKind {
    History,
    /// The output pager.
    Output,
    Help,
    /// The session picker (`/resume`).
    Sessions,
    /// The child agents' view (`/agents`).
    Agents,
}

impl Slot {
    /// Whether the layer appears, or fills in, by itself and acts on single keys: a key typed
    /// through its arrival passes it by (see `type_ahead`).
    pub fn guarded(self) -> bool {
        matches!(self, Self::Approval | Self::CoveredApproval | Self::Sessions)
    }

    /// The overlay this layer is, if it is one that covers the panes.
    fn overlay(self) -> Option<OverlayKind> {
        match self {
            Self::Sessions => Some(OverlayKind::Sessions),
            Self::Output => Some(OverlayKind::Output),
            Self::History => Some(OverlayKind::History),
            Self::Agents => Some(OverlayKind::Agents),
            Self::Help => Some(OverlayKind::Help),
            _ => None,
        }
    }
}

/// The views of the stack, each in its layer; an overlay is `None` while closed.
#[derive(Debug)]
pub struct Views {
    /// Shown while the snapshot holds a request not answered yet.
    pub approval: ApprovalModal,
    pub picker: Option<Box<SessionPicker>>,
    pub pager: Option<Box<Pager>>,
    pub inspector: Option<Box<Inspector>>,
    pub agents: Option<Box<AgentsView>>,
    pub help: Option<HelpOverlay>,
    pub board: BoardPane,
    pub main: MainView,
}

impl Views {
    /// The view of `slot` as the walk and the hints see it; `None` for a closed overlay and for
    /// the composer's menu (the main view, under it, answers its keys).
    pub fn layer(&self, slot: Slot) -> Option<&dyn Layer> {
        match slot {
            Slot::Approval | Slot::CoveredApproval => Some(&self.approval),
            Slot::Sessions => self.picker.as_deref().map(|view| view as &dyn Layer),
            Slot::Output => self.pager.as_deref().map(|view| view as &dyn Layer),
            Slot::History => self.inspector.as_deref().map(|view| view as &dyn Layer),
            Slot::Agents => self.agents.as_deref().map(|view| view as &dyn Layer),
            Slot::Help => self.help.as_ref().map(|view| view as &dyn Layer),
            Slot::Completion => None,
            Slot::Board => Some(&self.board),
            Slot::Main => Some(&self.main),
        }
    }

    /// [`Views::layer`], to hand an input to.
    pub fn layer_mut(&mut self, slot: Slot) -> Option<&mut dyn Layer> {
        match slot {
            Slot::Approval | Slot::CoveredApproval => Some(&mut self.approval),
            Slot::Sessions => self.picker.as_deref_mut().map(|view| view as &mut dyn Layer),
            Slot::Output => self.pager.as_deref_mut().map(|view| view as &mut dyn Layer),
            Slot::History => self.inspector.as_deref_mut().map(|view| view as &mut dyn Layer),
            Slot::Agents => self.agents.as_deref_mut().map(|view| view as &mut dyn Layer),
            Slot::Help => self.help.as_mut().map(|view| view as &mut dyn Layer),
            Slot::Completion => None,
            Slot::Board => Some(&mut self.board),
            Slot::Main => Some(&mut self.main),
        }
    }

    /// Closes the help, the inspector and the pager: one of them is open at a time, and the
    /// session picker and the child agents' view open over none of them.
    pub fn close_readers(&mut self) {
        self.help = None;
        self.inspector = None;
        self.pager = None;
    }

    /// Drops the overlays that are done; returns whether the inspector was one.
    pub fn drop_done(&mut self) -> bool {
        let inspector_done = self.inspector.as_deref().is_some_and(View::is_done);
        if inspector_done {
            self.inspector = None;
        }
        if self.agents.as_deref().is_some_and(View::is_done) {
            self.agents = None;
        }
        if self.pager.as_deref().is_some_and(View::is_done) {
            self.pager = None;
        }
        if self.help.as_ref().is_some_and(View::is_done) {
            self.help = None;
        }
        if self.picker.as_deref().is_some_and(View::is_done) {
            self.picker = None;
        }
        inspector_done
    }
}

impl App {
    /// Whether the layer `slot` is on screen now.
    pub(super) fn is_open(&self, slot: Slot) -> bool {
        let views = &self.views;
        match slot {
            Slot::Approval => self.approval_on_top(),
            Slot::CoveredApproval => self.visible_approval().is_some() && !self.approval_on_top(),
            Slot::Sessions => views.picker.is_some(),
            Slot::Output => views.pager.is_some(),
            Slot::History => views.inspector.is_some(),
            Slot::Agents => views.agents.is_some(),
            Slot::Help => views.help.is_some(),
            Slot::Completion => views.main.completer.menu.is_some() && self.main_focused(),
            Slot::Board | Slot::Main => true,
        }
    }

    /// The layers open now, topmost first; the guarded ones only if `to_guarded` (a key typed
    /// through their arrival passes them by).
    pub(super) fn open_layers(&self, to_guarded: bool) -> Vec<Slot> {
        ORDER
            .into_iter()
            .filter(|slot| (to_guarded || !slot.guarded()) && self.is_open(*slot))
            .collect()
    }

    /// The overlay on top, if one is open.
    pub fn overlay(&self) -> Option<OverlayKind> {
        ORDER
            .into_iter()
            .filter_map(|slot| Some((slot, slot.overlay()?)))
            .find_map(|(slot, kind)| self.is_open(slot).then_some(kind))
    }

    /// Whether the main screen has the focus: no overlay over it, and the board without the
    /// keyboard (an approval box waits over it without taking it).
    pub(super) fn main_focused(&self) -> bool {
        self.overlay().is_none() && !self.views.board.focused
    }

    /// Whether the approval box is shown and has the keyboard (no inspector opened over it).
    pub(super) fn approval_on_top(&self) -> bool {
        self.visible_approval().is_some()
            && !(self.views.inspector.is_some() && self.inspector_over_approval)
    }

    /// Whether a view that acts on single keys and appears or fills in by itself has the
    /// keyboard: the approval box, or the session picker. Type-ahead is kept from it (see
    /// `type_ahead`).
    pub(super) fn guarded_on_top(&self) -> bool {
        self.approval_on_top() || self.views.picker.is_some()
    }
}

#[cfg(test)]
mod tests;
