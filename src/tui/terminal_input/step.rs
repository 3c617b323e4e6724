//! What the bytes at the front of the decoder's buffer turned out to be: the one answer the
//! plain-key and the control-sequence decoders both give.

use ratatui::crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};

/// What the bytes at the front of the buffer are.
#[derive(Debug, PartialEq)]
pub(super) enum Step {
    /// An event, made of this many bytes.
    Event(Event, usize),
    /// This many bytes that make no event.
    Skip(usize),
    /// A bracketed paste starts after this many bytes.
    PasteStart(usize),
    /// The bytes are the start of something longer: wait for the next read.
    Wait,
}

/// A key press made of `used` bytes.
pub(super) fn key(code: KeyCode, modifiers: KeyModifiers, used: usize) -> Step {
    Step::Event(Event::Key(KeyEvent::new(code, modifiers)), used)
}
