//! Control sequences (`ESC [ … final`): the cursor, editing and function keys with their
//! modifiers, keys in the forms that tell Shift+Enter from Enter — kitty's `CSI 13;2u` and xterm's
//! modifyOtherKeys `CSI 27;2;13~`, which tmux sends by default — the mouse, and the start of a
//! bracketed paste. Replies to queries and sequences keel does not know make no event.

use super::step::{Step, key};
use ratatui::crossterm::event::{
    Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseButton, MouseEvent, MouseEventKind,
};

/// The longest control sequence waited for; a longer one is noise and is dropped.
const MAX_SEQUENCE: usize = 256;
/// A legacy (X10) mouse report: `ESC [ M` and a byte each for the button, column and row.
const X10_MOUSE_LEN: usize = 6;
/// What X10 and rxvt mouse reports add to each value so that it is printable.
const MOUSE_OFFSET: u16 = 32;
/// `CSI 200~` starts a bracketed paste; `CSI 27;…~` is a modifyOtherKeys key.
const PASTE_START: u32 = 200;
const MODIFY_OTHER_KEYS: u32 = 27;

/// Kitty's codes for the keypad's keys, reported apart from the main keys'.
const KEYPAD: &[(u32, KeyCode)] = &[
    (57409, KeyCode::Char('.')),
    (57410, KeyCode::Char('/')),
    (57411, KeyCode::Char('*')),
    (57412, KeyCode::Char('-')),
    (57413, KeyCode::Char('+')),
    (57414, KeyCode::Enter),
    (57415, KeyCode::Char('=')),
    (57417, KeyCode::Left),
    (57418, KeyCode::Right),
    (57419, KeyCode::Up),
    (57420, KeyCode::Down),
    (57421, KeyCode::PageUp),
    (57422, KeyCode::PageDown),
    (57423, KeyCode::Home),
    (57424, KeyCode::End),
    (57425, KeyCode::Insert),
    (57426, KeyCode::Delete),
];
/// Kitty's keypad digits 0–9.
const KEYPAD_DIGITS: std::ops::RangeInclusive<u32> = 57399..=57408;
/// The Unicode private use area where kitty puts the keys that are not characters.
const KITTY_FUNCTIONAL: std::ops::RangeInclusive<u32> = 0xe000..=0xf8ff;

/// What the control sequence at the front of `bytes` (which starts `ESC [`) is.
pub(super) fn step(bytes: &[u8], more: bool) -> Step {
    match bytes {
        [_, _] if more => Step::Wait,
        // Alt+[ is Esc and `[` with nothing after them.
        [_, _] => key(KeyCode::Char('['), KeyModifiers::ALT, 2),
        [_, _, b'M', ..] if bytes.len() < X10_MOUSE_LEN => Step::Wait,
        [_, _, b'M', button, column, row, ..] => {
            let value = |byte: &u8| u16::from(*byte).saturating_sub(MOUSE_OFFSET);
            let (button, column, row) = (value(button), value(column), value(row));
            mouse_step(button, column, row, false, X10_MOUSE_LEN)
        }
        // The Linux console's F1–F5: `ESC [ [ A` to `ESC [ [ E`.
        [_, _, b'['] => Step::Wait,
        [_, _, b'[', letter @ b'A'..=b'E', ..] => {
            key(KeyCode::F(letter - b'A' + 1), KeyModifiers::NONE, 4)
        }
        [_, _, b'[', ..] => Step::Skip(4),
        _ => sequence_step(bytes),
    }
}

/// A sequence of parameter and intermediate bytes closed by a final byte.
fn sequence_step(bytes: &[u8]) -> Step {
    for (at, &byte) in bytes.iter().enumerate().take(MAX_SEQUENCE).skip(2) {
        match byte {
            0x20..=0x3f => {}
            0x40..=0x7e => {
                let params = String::from_utf8_lossy(&bytes[2..at]);
                return dispatch(&params, byte, at + 1);
            }
            // Not part of a sequence: drop what came before it, and decode it anew.
            _ => return Step::Skip(at),
        }
    }
    if bytes.len() >= MAX_SEQUENCE { Step::Skip(MAX_SEQUENCE) } else { Step::Wait }
}

fn dispatch(params: &str, final_byte: u8, used: usize) -> Step {
    if let Some(mouse) = params.strip_prefix('<') {
        return sgr_mouse(mouse, final_byte == b'm', used);
    }
    // Replies to queries (`CSI ? … u`, `CSI ? … c`) and private sequences: nothing typed.
    if params.starts_with(['?', '>', '=']) {
        return Step::Skip(used);
    }
    let fields: Vec<&str> = params.split(';').collect();
    let code = |field: usize| fields.get(field).and_then(|field| number(field.split(':').next()));
    let modifiers = fields.get(1).copied();
    match final_byte {
        b'~' => match code(0) {
            Some(PASTE_START) => Step::PasteStart(used),
            Some(MODIFY_OTHER_KEYS) => match code(2).and_then(codepoint_key) {
                Some(key_code) => press(key_code, modifiers, used),
                None => Step::Skip(used),
            },
            Some(number) => match tilde_key(number) {
                Some(key_code) => press(key_code, modifiers, used),
                None => Step::Skip(used),
            },
            None => Step::Skip(used),
        },
        b'u' => match code(0).and_then(codepoint_key) {
            Some(key_code) => press(key_code, modifiers, used),
            None => Step::Skip(used),
        },
        b'Z' => key(KeyCode::BackTab, KeyModifiers::SHIFT, used),
        b'I' => Step::Event(Event::FocusGained, used),
        b'O' => Step::Event(Event::FocusLost, used),
        // rxvt's mouse report: `CSI button;column;row M`, each value offset as in X10's.
        b'M' if fields.len() == 3 => match (code(0), code(1), code(2)) {
            (Some(button), Some(column), Some(row)) => {
                let value = |value: u32| u16::try_from(value).unwrap_or(u16::MAX);
                let button = value(button).saturating_sub(MOUSE_OFFSET);
                mouse_step(button, value(column), value(row), false, used)
            }
            _ => Step::Skip(used),
        },
        // `CSI row;column R` is a cursor position report; `CSI 1;2R` is Shift+F3.
        b'R' if code(0).is_some_and(|first| first != 1) => Step::Skip(used),
        letter => match letter_key(letter) {
            Some(key_code) => press(key_code, modifiers, used),
            None => Step::Skip(used),
        },
    }
}

/// A key press (or repeat or release) with its `modifiers` field: `mask[:kind]`, the mask being
/// one more than the sum of Shift 1, Alt 2, Ctrl 4, Super 8, Hyper 16 and Meta 32.
fn press(code: KeyCode, field: Option<&str>, used: usize) -> Step {
    let mut parts = field.unwrap_or_default().split(':');
    let mask = number(parts.next()).map_or(0, |mask| mask.saturating_sub(1));
    let kind = match number(parts.next()) {
        Some(2) => KeyEventKind::Repeat,
        Some(3) => KeyEventKind::Release,
        _ => KeyEventKind::Press,
    };
    let mut modifiers = KeyModifiers::NONE;
    for (bit, modifier) in [
        (1, KeyModifiers::SHIFT),
        (2, KeyModifiers::ALT),
        (4, KeyModifiers::CONTROL),
        (8, KeyModifiers::SUPER),
        (16, KeyModifiers::HYPER),
        (32, KeyModifiers::META),
    ] {
        if mask & bit != 0 {
            modifiers |= modifier;
        }
    }
    // Shift+Tab is BackTab, as the plain `CSI Z` says it.
    let code = if code == KeyCode::Tab && modifiers.contains(KeyModifiers::SHIFT) {
        KeyCode::BackTab
    } else {
        code
    };
    Step::Event(Event::Key(KeyEvent::new_with_kind(code, modifiers, kind)), used)
}

/// The key a Unicode code point names in `CSI code u` and `CSI 27;mods;code ~`.
fn codepoint_key(code: u32) -> Option<KeyCode> {
    Some(match code {
        13 => KeyCode::Enter,
        9 => KeyCode::Tab,
        27 => KeyCode::Esc,
        8 | 127 => KeyCode::Backspace,
        _ if KEYPAD_DIGITS.contains(&code) => {
            KeyCode::Char(char::from_digit(code - KEYPAD_DIGITS.start(), 10)?)
        }
        _ if KITTY_FUNCTIONAL.contains(&code) => {
            KEYPAD.iter().find(|(keypad, _)| *keypad == code).map(|(_, key)| *key)?
        }
        _ => KeyCode::Char(char::from_u32(code).filter(|character| !character.is_control())?),
    })
}

/// The key `CSI number ~` names.
fn tilde_key(number: u32) -> Option<KeyCode> {
    let function = |n: u32| u8::try_from(n).ok().map(KeyCode::F);
    match number {
        1 | 7 => Some(KeyCode::Home),
        2 => Some(KeyCode::Insert),
        3 => Some(KeyCode::Delete),
        4 | 8 => Some(KeyCode::End),
        5 => Some(KeyCode::PageUp),
        6 => Some(KeyCode::PageDown),
        11..=15 => function(number - 10),
        17..=21 => function(number - 11),
        23..=26 => function(number - 12),
        28..=29 => function(number - 15),
        31..=34 => function(number - 17),
        _ => None,
    }
}

/// The key `CSI letter` (or `CSI 1;mods letter`, or SS3's `ESC O letter`) names.
pub(super) fn letter_key(letter: u8) -> Option<KeyCode> {
    Some(match letter {
        b'A' => KeyCode::Up,
        b'B' => KeyCode::Down,
        b'C' => KeyCode::Right,
        b'D' => KeyCode::Left,
        b'H' => KeyCode::Home,
        b'F' => KeyCode::End,
        b'P'..=b'S' => KeyCode::F(letter - b'P' + 1),
        _ => return None,
    })
}

/// An SGR mouse report: `CSI < button;column;row M` (`m` for a release), counted from 1.
fn sgr_mouse(params: &str, release: bool, used: usize) -> Step {
    let values: Vec<Option<u16>> =
        params.split(';').map(|value| value.parse::<u16>().ok()).collect();
    match values.as_slice() {
        [Some(button), Some(column), Some(row)] => {
            mouse_step(*button, *column, *row, release, used)
        }
        _ => Step::Skip(used),
    }
}

/// A mouse event from its button byte (less any offset) and its 1-based position.
fn mouse_step(button: u16, column: u16, row: u16, release: bool, used: usize) -> Step {
    const SHIFT: u16 = 4;
    const ALT: u16 = 8;
    const CONTROL: u16 = 16;
    const MOTION: u16 = 32;
    const WHEEL: u16 = 64;
    const NO_BUTTON: u16 = 3;
    let pressed = match button & 0b11 {
        0 => MouseButton::Left,
        1 => MouseButton::Middle,
        _ => MouseButton::Right,
    };
    let kind = if button & WHEEL != 0 {
        match button & 0b11 {
            0 => MouseEventKind::ScrollUp,
            1 => MouseEventKind::ScrollDown,
            2 => MouseEventKind::ScrollLeft,
            _ => MouseEventKind::ScrollRight,
        }
    } else if button & MOTION != 0 {
        if button & 0b11 == NO_BUTTON {
            MouseEventKind::Moved
        } else {
            MouseEventKind::Drag(pressed)
        }
    } else if release || button & 0b11 == NO_BUTTON {
        // X10 reports every release as "no button": which one went up is not known.
        MouseEventKind::Up(if button & 0b11 == NO_BUTTON { MouseButton::Left } else { pressed })
    } else {
        MouseEventKind::Down(pressed)
    };
    let mut modifiers = KeyModifiers::NONE;
    for (bit, modifier) in
        [(SHIFT, KeyModifiers::SHIFT), (ALT, KeyModifiers::ALT), (CONTROL, KeyModifiers::CONTROL)]
    {
        if button & bit != 0 {
            modifiers |= modifier;
        }
    }
    let event = MouseEvent {
        kind,
        column: column.saturating_sub(1),
        row: row.saturating_sub(1),
        modifiers,
    };
    Step::Event(Event::Mouse(event), used)
}

fn number(text: Option<&str>) -> Option<u32> {
    text.and_then(|text| text.parse().ok())
}
