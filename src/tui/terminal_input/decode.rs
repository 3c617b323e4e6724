//! The byte stream a terminal sends, cut into events: plain keys and control keys, Alt as an Esc
//! prefix, UTF-8 characters, SS3 keys, control sequences (read in `csi`) and bracketed pastes.
//!
//! The [`Decoder`] is fed whatever each read returned and keeps what is not whole yet: a sequence
//! or a character cut between two reads, and a paste until its end marker. It never fails: bytes
//! that make no event it knows are dropped, and decoding goes on with the next byte.

use super::csi;
use super::step::{Step, key};
use ratatui::crossterm::event::{Event, KeyCode, KeyModifiers};

const ESC: u8 = 0x1b;
/// What ends a bracketed paste.
const PASTE_END: &[u8] = b"\x1b[201~";

/// Decodes a terminal's input, read by read.
#[derive(Debug, Default)]
pub struct Decoder {
    /// Bytes of a sequence or character that is not whole yet.
    pending: Vec<u8>,
    /// The text of a bracketed paste whose end has not arrived yet.
    paste: Option<Vec<u8>>,
}

impl Decoder {
    /// Decodes `bytes`, the next read from the terminal, into `events`. `more` says that more
    /// input may be waiting already (the read filled its buffer): a lone Esc at the end is then
    /// kept as the start of a sequence rather than taken for the Esc key.
    pub fn feed(&mut self, bytes: &[u8], more: bool, events: &mut Vec<Event>) {
        self.pending.extend_from_slice(bytes);
        let mut at = 0;
        while at < self.pending.len() {
            if let Some(paste) = &mut self.paste {
                let (used, ended) = take_paste(&self.pending[at..], paste);
                at += used;
                if !ended {
                    break;
                }
                let text = String::from_utf8_lossy(paste).into_owned();
                events.push(Event::Paste(text));
                self.paste = None;
                continue;
            }
            match step(&self.pending[at..], more) {
                Step::Event(event, used) => {
                    events.push(event);
                    at += used;
                }
                Step::Skip(used) => at += used,
                Step::PasteStart(used) => {
                    self.paste = Some(Vec::new());
                    at += used;
                }
                Step::Wait => break,
            }
        }
        self.pending.drain(..at);
    }
}

/// Moves the paste's text from `bytes` into `paste`, up to its end marker. Returns how many
/// bytes it took, and whether the end marker was among them; if not, the last bytes, which may
/// be the start of the end marker, are left for the next read.
fn take_paste(bytes: &[u8], paste: &mut Vec<u8>) -> (usize, bool) {
    if let Some(end) = bytes.windows(PASTE_END.len()).position(|window| window == PASTE_END) {
        paste.extend_from_slice(&bytes[..end]);
        return (end + PASTE_END.len(), true);
    }
    let text = bytes.len().saturating_sub(PASTE_END.len() - 1);
    paste.extend_from_slice(&bytes[..text]);
    (text, false)
}

/// What the bytes at the front of `bytes` (never empty) are.
fn step(bytes: &[u8], more: bool) -> Step {
    match bytes {
        [] => Step::Wait,
        [ESC] if more => Step::Wait,
        [ESC] => key(KeyCode::Esc, KeyModifiers::NONE, 1),
        [ESC, b'[', ..] => csi::step(bytes, more),
        [ESC, b'O'] if more => Step::Wait,
        [ESC, b'O', final_byte, ..] => match ss3_key(*final_byte) {
            Some(code) => key(code, KeyModifiers::NONE, 3),
            None => Step::Skip(3),
        },
        // Esc twice: the first is the Esc key, the second starts whatever follows.
        [ESC, ESC, ..] => key(KeyCode::Esc, KeyModifiers::NONE, 1),
        // Esc before a key is how terminals send Alt with it.
        [ESC, rest @ ..] => match plain_step(rest) {
            Step::Event(Event::Key(mut event), used) => {
                event.modifiers |= KeyModifiers::ALT;
                Step::Event(Event::Key(event), used + 1)
            }
            Step::Skip(used) => Step::Skip(used + 1),
            other => other,
        },
        _ => plain_step(bytes),
    }
}

/// A key that is not a sequence: a control character or a UTF-8 character.
fn plain_step(bytes: &[u8]) -> Step {
    let Some(&first) = bytes.first() else {
        return Step::Wait;
    };
    match first {
        b'\r' => key(KeyCode::Enter, KeyModifiers::NONE, 1),
        b'\t' => key(KeyCode::Tab, KeyModifiers::NONE, 1),
        0x7f => key(KeyCode::Backspace, KeyModifiers::NONE, 1),
        // In raw mode Enter sends `\r`; `\n` is Ctrl+J, as are all of 0x01..=0x1a Ctrl+letter.
        0x01..=0x1a => {
            key(KeyCode::Char(char::from(first - 0x01 + b'a')), KeyModifiers::CONTROL, 1)
        }
        0x1c..=0x1f => {
            key(KeyCode::Char(char::from(first - 0x1c + b'4')), KeyModifiers::CONTROL, 1)
        }
        0x00 => key(KeyCode::Char(' '), KeyModifiers::CONTROL, 1),
        _ => utf8_step(bytes),
    }
}

/// One UTF-8 character; an uppercase letter carries Shift, as crossterm reports it.
fn utf8_step(bytes: &[u8]) -> Step {
    let width = match bytes[0] {
        0x00..=0x7f => 1,
        0xc2..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf4 => 4,
        _ => return Step::Skip(1),
    };
    if bytes.len() < width {
        // A character cut between reads; one that can never be completed is dropped.
        let continues = bytes[1..].iter().all(|byte| byte & 0xc0 == 0x80);
        return if continues { Step::Wait } else { Step::Skip(1) };
    }
    match std::str::from_utf8(&bytes[..width]).ok().and_then(|text| text.chars().next()) {
        Some(character) => {
            let modifiers =
                if character.is_uppercase() { KeyModifiers::SHIFT } else { KeyModifiers::NONE };
            key(KeyCode::Char(character), modifiers, width)
        }
        None => Step::Skip(1),
    }
}

/// The key an SS3 sequence (`ESC O x`) ends with: the letters of the cursor and F1–F4 keys that
/// `CSI x` has too, and the keypad's Enter.
fn ss3_key(final_byte: u8) -> Option<KeyCode> {
    const KEYPAD_ENTER: u8 = b'M';
    if final_byte == KEYPAD_ENTER { Some(KeyCode::Enter) } else { csi::letter_key(final_byte) }
}
