//! What keys, pastes and the mouse do to the `App`.
//!
//! A key goes to the first of these that is showing and takes it: the approval modal, an overlay
//! (history inspector, help), the focused board, then the main screen — global keys, conversation
//! scrolling, the composer's keys and finally the editor. Ctrl+C is handled before all of them so
//! the way out always works. Every binding lives in its component's table (see `keymap`).

use super::app::{App, Overlay, QUIT_WINDOW, source};
use super::commands::{self, Parsed, Slash};
use super::event::UiEvent;
use super::keymap::{Binding, HelpSection, KeySpec, hints, lookup};
use super::layout::Regions;
use super::view::conversation::{self, WHEEL_LINES};
use super::view::help_overlay::{self, HelpOverlay};
use super::view::history_overlay::{self, HistoryOverlay};
use super::view::{approval_modal, composer, todo_pane};
use crate::agent::Command;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, MouseEvent, MouseEventKind};
use ratatui::layout::{Position, Rect};
use std::time::Instant;

/// What a key does anywhere on the main screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    ClearOrQuit,
    QuitIfEmpty,
    History,
    Interrupt,
    Help,
}

/// Keys of the main screen that are not the composer's or the conversation's.
pub const KEYS: &[Binding<Action>] = &[
    Binding {
        keys: &[KeySpec::plain(KeyCode::Esc)],
        action: Action::Interrupt,
        help: "interrupt the running turn",
        hint: Some("interrupt"),
    },
    Binding {
        keys: &[KeySpec::ctrl('t'), KeySpec::plain(KeyCode::F(2))],
        action: Action::History,
        help: "inspect the raw history, as the provider receives it",
        hint: Some("history"),
    },
    Binding {
        keys: &[KeySpec::char('?')],
        action: Action::Help,
        help: "show this help (on an empty composer)",
        hint: Some("help"),
    },
    Binding {
        keys: &[KeySpec::ctrl('c')],
        action: Action::ClearOrQuit,
        help: "clear the composer; press twice within a second to quit",
        hint: None,
    },
    Binding {
        keys: &[KeySpec::ctrl('d')],
        action: Action::QuitIfEmpty,
        help: "quit (on an empty composer)",
        hint: None,
    },
];

/// Every key keel answers to, grouped for the help overlay.
pub fn help_sections() -> Vec<HelpSection> {
    let slash = HelpSection {
        title: "Slash commands (type in the composer, then Enter)",
        rows: commands::SLASH_COMMANDS
            .iter()
            .map(|(name, _, help)| ((*name).to_owned(), *help))
            .collect(),
    };
    vec![
        HelpSection::of("Anywhere", KEYS),
        HelpSection::of("Composer", composer::KEYS).with(composer::EDITING_HELP),
        HelpSection::of("Conversation", conversation::KEYS).with(conversation::MOUSE_HELP),
        slash,
        HelpSection::of("Board (after /todos)", todo_pane::KEYS),
        HelpSection::of("History inspector (Ctrl+T)", history_overlay::KEYS),
        HelpSection::of("Approval", approval_modal::KEYS),
        HelpSection::of("This help", help_overlay::KEYS),
    ]
}

impl App {
    /// Acts on one terminal event.
    pub fn handle_event(&mut self, event: UiEvent) {
        match event {
            UiEvent::Key(key) => self.handle_key(key),
            UiEvent::Paste(text) => self.handle_paste(&text),
            UiEvent::Mouse(mouse) => self.handle_mouse(mouse),
            UiEvent::Resize => {}
        }
    }

    pub fn handle_key(&mut self, key: KeyEvent) {
        self.handle_key_at(key, Instant::now());
    }

    /// Acts on a key pressed at `now` (the time matters only for the double Ctrl+C).
    pub fn handle_key_at(&mut self, key: KeyEvent, now: Instant) {
        if key.kind != KeyEventKind::Press {
            return;
        }
        if lookup(KEYS, &key) == Some(Action::ClearOrQuit) {
            self.clear_or_quit(now);
            return;
        }
        self.quit_armed_at = None;
        if let Some(request) = self.visible_approval() {
            let id = request.id.clone();
            self.approval_key(&id, &key);
            return;
        }
        match &mut self.overlay {
            Some(Overlay::History(history)) => {
                if history.is_typing() {
                    history.type_key(key);
                } else if let Some(action) = lookup(history_overlay::KEYS, &key) {
                    if !history.act(action) {
                        self.overlay = None;
                    }
                }
                return;
            }
            Some(Overlay::Help(help)) => {
                if let Some(action) = lookup(help_overlay::KEYS, &key) {
                    if !help.act(action) {
                        self.overlay = None;
                    }
                }
                return;
            }
            None => {}
        }
        if self.todo.focused {
            if let Some(action) = lookup(todo_pane::KEYS, &key) {
                self.todo.act(&self.snapshot.board, action);
            } else if lookup(KEYS, &key) == Some(Action::History) {
                self.open_history();
            }
            return;
        }
        self.main_key(key, now);
    }

    fn main_key(&mut self, key: KeyEvent, now: Instant) {
        match lookup(KEYS, &key) {
            Some(Action::Interrupt) => return self.send(Command::Cancel),
            Some(Action::History) => return self.open_history(),
            Some(Action::ClearOrQuit) => return self.clear_or_quit(now),
            Some(Action::Help) if self.composer.is_empty() => return self.open_help(),
            Some(Action::QuitIfEmpty) if self.composer.is_empty() => return self.quit(),
            _ => {}
        }
        if let Some(action) = lookup(conversation::KEYS, &key) {
            let source = source(&self.snapshot);
            self.conversation.act(&source, action);
            return;
        }
        match lookup(composer::KEYS, &key) {
            Some(composer::Action::Send) => self.submit(),
            Some(composer::Action::Newline) => self.composer.insert_newline(),
            Some(composer::Action::Older) if self.composer.older() => {}
            Some(composer::Action::Newer) if self.composer.newer() => {}
            _ => self.composer.input(key),
        }
    }

    fn approval_key(&mut self, id: &str, key: &KeyEvent) {
        match lookup(approval_modal::KEYS, key) {
            Some(approval_modal::Action::Answer(decision)) => {
                self.answered = Some(id.to_owned());
                self.send(Command::Approve { id: id.to_owned(), decision });
            }
            Some(action) => self.approval.scroll(action),
            None => {}
        }
    }

    fn clear_or_quit(&mut self, now: Instant) {
        let armed = self
            .quit_armed_at
            .is_some_and(|armed| now.saturating_duration_since(armed) <= QUIT_WINDOW);
        if armed {
            self.quit();
        } else {
            self.composer.clear();
            self.quit_armed_at = Some(now);
        }
    }

    /// Tells the agent to stop and leaves.
    pub(super) fn quit(&mut self) {
        if !self.quit {
            self.send(Command::Quit);
            self.quit = true;
        }
    }

    fn open_history(&mut self) {
        self.overlay = Some(Overlay::History(Box::new(HistoryOverlay::open(&self.snapshot))));
    }

    fn open_help(&mut self) {
        self.overlay = Some(Overlay::Help(HelpOverlay::new(help_sections())));
    }

    /// Enter: a slash command runs here, anything else goes to the agent (queued if it is busy).
    fn submit(&mut self) {
        let text = self.composer.text();
        if text.trim().is_empty() {
            return;
        }
        match commands::parse(&text) {
            Parsed::Prompt => {
                let prompt = self.composer.take();
                self.send(Command::Submit(prompt.trim_end().to_owned()));
                let source = source(&self.snapshot);
                self.conversation.act(&source, conversation::Action::Bottom);
            }
            Parsed::Command(command) => {
                self.composer.take();
                self.run_command(command);
            }
            Parsed::Unknown(name) => {
                self.composer.take();
                self.conversation
                    .push_note(format!("Unknown command {name}. Commands: {}", commands::names()));
                let source = source(&self.snapshot);
                self.conversation.act(&source, conversation::Action::Bottom);
            }
        }
    }

    fn run_command(&mut self, command: Slash) {
        match command {
            Slash::Clear => self.send(Command::Clear),
            Slash::Undo => self.send(Command::Undo),
            Slash::Demo => self.send(Command::StartDemo),
            Slash::Quit => self.quit(),
            Slash::Help => self.open_help(),
            Slash::Todos => self.todo.focus(),
        }
    }

    /// A bracketed paste goes into the composer whole, wherever the focus is.
    pub fn handle_paste(&mut self, text: &str) {
        if let Some(Overlay::History(history)) = &mut self.overlay {
            if history.is_typing() {
                for c in text.chars().filter(|c| !c.is_control()) {
                    history.type_key(KeyEvent::from(KeyCode::Char(c)));
                }
                return;
            }
        }
        self.composer.paste(text);
    }

    /// The wheel scrolls whatever is under the pointer.
    pub fn handle_mouse(&mut self, mouse: MouseEvent) {
        let up = match mouse.kind {
            MouseEventKind::ScrollUp => true,
            MouseEventKind::ScrollDown => false,
            _ => return,
        };
        match &mut self.overlay {
            Some(Overlay::History(history)) => return history.wheel(up, WHEEL_LINES),
            Some(Overlay::Help(help)) => return help.wheel(up, WHEEL_LINES),
            None => {}
        }
        if self.visible_approval().is_some() {
            let action = if up { approval_modal::Action::Up } else { approval_modal::Action::Down };
            return self.approval.scroll(action);
        }
        let at = Position::new(mouse.column, mouse.row);
        let Regions { conversation, todos, .. } = self.regions(self.screen);
        if todos.contains(at) {
            self.todo.wheel(&self.snapshot.board, up, WHEEL_LINES);
        } else if conversation.contains(at) || self.screen == Rect::default() {
            let source = source(&self.snapshot);
            if up {
                self.conversation.scroll_up(&source, WHEEL_LINES);
            } else {
                self.conversation.scroll_down(&source, WHEEL_LINES);
            }
        }
    }

    /// The status-bar hints for what has the keyboard now, and a flash message if one is due.
    pub fn hints(&self) -> Vec<(String, &'static str)> {
        if self.visible_approval().is_some() {
            return hints(approval_modal::KEYS);
        }
        match &self.overlay {
            Some(Overlay::History(history)) if history.is_typing() => {
                return vec![("Enter".to_owned(), "find"), ("Esc".to_owned(), "cancel")];
            }
            Some(Overlay::History(_)) => return hints(history_overlay::KEYS),
            Some(Overlay::Help(_)) => return hints(help_overlay::KEYS),
            None => {}
        }
        if self.todo.focused {
            return hints(todo_pane::KEYS);
        }
        // Esc is worth a hint only while there is something to interrupt.
        let busy = self.is_busy();
        let global: Vec<_> = KEYS
            .iter()
            .filter(|binding| busy || binding.action != Action::Interrupt)
            .copied()
            .collect();
        let mut all = hints(composer::KEYS);
        all.extend(hints(&global));
        all
    }

    /// The message that takes the hints' place, if any.
    pub fn flash(&self) -> Option<&'static str> {
        self.quit_armed_at.map(|_| "Press Ctrl+C again to quit")
    }
}
