//! The terminal events the UI acts on, filtered from the terminal's input.
//!
//! Only key presses are kept: terminals that report key releases and repeats (kitty's protocol,
//! Windows) would otherwise type every character twice. Focus changes are dropped.

use ratatui::crossterm::event::{Event, KeyEvent, KeyEventKind, MouseEvent};

/// Something the person did at the terminal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UiEvent {
    Key(KeyEvent),
    /// A bracketed paste, whole.
    Paste(String),
    Mouse(MouseEvent),
    /// The terminal changed size; the next frame lays out again.
    Resize,
}

impl UiEvent {
    /// The event worth acting on, if `event` is one.
    pub fn from_terminal(event: Event) -> Option<Self> {
        match event {
            Event::Key(key) if key.kind == KeyEventKind::Press => Some(Self::Key(key)),
            Event::Key(_) | Event::FocusGained | Event::FocusLost => None,
            Event::Paste(text) => Some(Self::Paste(text)),
            Event::Mouse(mouse) => Some(Self::Mouse(mouse)),
            Event::Resize(_, _) => Some(Self::Resize),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::crossterm::event::{KeyCode, KeyEventState, KeyModifiers};

    #[test]
    fn only_presses_are_kept() {
        let key = |kind| {
            Event::Key(KeyEvent {
                code: KeyCode::Char('a'),
                modifiers: KeyModifiers::NONE,
                kind,
                state: KeyEventState::NONE,
            })
        };
        assert!(UiEvent::from_terminal(key(KeyEventKind::Press)).is_some());
        assert!(UiEvent::from_terminal(key(KeyEventKind::Release)).is_none());
        assert!(UiEvent::from_terminal(key(KeyEventKind::Repeat)).is_none());
        assert_eq!(
            UiEvent::from_terminal(Event::Paste("x".into())),
            Some(UiEvent::Paste("x".into()))
        );
    }
}
