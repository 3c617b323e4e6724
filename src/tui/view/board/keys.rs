//! The board's keys while it has the focus, and which of them a state gives a meaning: Enter
//! approves a waiting plan, else shows the selected item's last check; `o` opens the child
//! agent's conversation of the item, else its last check. The key walk and the status-bar hints
//! both go through [`active`], so the hints say what a key does now (as gitui's components do).

use super::approvable;
use crate::agent::Snapshot;
use crate::tui::keymap::{Binding, KeySpec, Motion, scroll_keys};
use ratatui::crossterm::event::KeyCode;

/// What a key does to the focused board.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Select(Motion),
    ToggleDone,
    Remove,
    MoveUp,
    MoveDown,
    Edit,
    Add,
    Approve,
    OpenChild,
    /// Open the selected item's last check in the pager.
    ShowCheck,
    Leave,
}

/// Enter and `o`, each bound twice: which binding holds depends on the selected item.
const ENTER: &[KeySpec] = &[KeySpec::plain(KeyCode::Enter)];
const O: &[KeySpec] = &[KeySpec::char('o')];

/// The board's keys while it has the focus.
pub const KEYS: &[Binding<Action>] = &[
    Binding {
        keys: scroll_keys::DOWN,
        action: Action::Select(Motion::Down),
        help: "select the next item",
        hint: Some("select"),
    },
    Binding {
        keys: scroll_keys::UP,
        action: Action::Select(Motion::Up),
        help: "select the item before",
        hint: Some("select"),
    },
    Binding {
        keys: &[KeySpec::char(' '), KeySpec::char('x')],
        action: Action::ToggleDone,
        help: "mark the selected item completed, or pending again",
        hint: Some("done"),
    },
    Binding {
        keys: &[KeySpec::char('J'), KeySpec::alt(KeyCode::Down)],
        action: Action::MoveDown,
        help: "move the selected item down",
        hint: Some("move"),
    },
    Binding {
        keys: &[KeySpec::char('K'), KeySpec::alt(KeyCode::Up)],
        action: Action::MoveUp,
        help: "move the selected item up",
        hint: Some("move"),
    },
    Binding {
        keys: &[KeySpec::char('e')],
        action: Action::Edit,
        help: "edit the selected item's text in the prompt (/todo edit N TEXT)",
        hint: Some("edit"),
    },
    Binding {
        keys: &[KeySpec::char('a')],
        action: Action::Add,
        help: "add an item, typed in the prompt (/todo add TEXT)",
        hint: Some("add"),
    },
    Binding {
        keys: &[KeySpec::char('d'), KeySpec::plain(KeyCode::Delete)],
        action: Action::Remove,
        help: "remove the selected item (press twice: the first press asks)",
        hint: Some("remove"),
    },
    // Enter and `o` mean what the state makes of them: see `active`.
    Binding {
        keys: ENTER,
        action: Action::Approve,
        help: "approve the plan (plan mode): the model carries it out",
        hint: Some("approve plan"),
    },
    Binding {
        keys: O,
        action: Action::OpenChild,
        help: "open the conversation of the child agent that works (or worked) on the selected item",
        hint: Some("child agent"),
    },
    Binding {
        keys: ENTER,
        action: Action::ShowCheck,
        help: "show the selected item's last check: its command, how it ended, its output \
               (while no plan waits for approval)",
        hint: Some("check"),
    },
    Binding {
        keys: O,
        action: Action::ShowCheck,
        help: "show the selected item's last check, on an item no child agent did",
        hint: Some("check"),
    },
    Binding {
        keys: scroll_keys::PAGE_UP,
        action: Action::Select(Motion::PageUp),
        help: "up a page",
        hint: None,
    },
    // Space marks an item done here.
    Binding {
        keys: &[KeySpec::plain(KeyCode::PageDown)],
        action: Action::Select(Motion::PageDown),
        help: "down a page",
        hint: None,
    },
    Binding {
        keys: scroll_keys::TOP,
        action: Action::Select(Motion::Top),
        help: "first item",
        hint: None,
    },
    Binding {
        keys: scroll_keys::BOTTOM,
        action: Action::Select(Motion::Bottom),
        help: "last item",
        hint: None,
    },
    Binding {
        keys: &[KeySpec::plain(KeyCode::Esc), KeySpec::char('q')],
        action: Action::Leave,
        help: "give the keyboard back to the composer",
        hint: Some("back"),
    },
];

/// Whether `binding` means something with item `selected` of `snapshot` selected. An Enter
/// with no plan and no check still asks for the approval (the agent says why there is none).
pub fn active(binding: &Binding<Action>, snapshot: &Snapshot, selected: usize) -> bool {
    let items = snapshot.board.items();
    // The item the key acts on: the selection, kept within a board that shrank.
    let item = items.get(selected.min(items.len().saturating_sub(1)));
    let has_check = item.is_some_and(|item| snapshot.checks.contains_key(&item.id));
    let has_child = item.is_some_and(|item| {
        snapshot.children.iter().any(|child| child.item.as_deref() == Some(item.id.as_str()))
    });
    match binding.action {
        Action::Approve => approvable(snapshot) || !has_check,
        Action::OpenChild => has_child || !has_check,
        Action::ShowCheck if binding.keys == ENTER => has_check && !approvable(snapshot),
        Action::ShowCheck => has_check && !has_child,
        _ => true,
    }
}
