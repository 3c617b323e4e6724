//! The decoder against the byte forms terminals and tmux send, whole and cut between reads.

use super::Decoder;
use proptest::prelude::*;
use ratatui::crossterm::event::{
    Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseButton, MouseEvent, MouseEventKind,
};

const NONE: KeyModifiers = KeyModifiers::NONE;
const SHIFT: KeyModifiers = KeyModifiers::SHIFT;
const CTRL: KeyModifiers = KeyModifiers::CONTROL;
const ALT: KeyModifiers = KeyModifiers::ALT;

fn decode(bytes: &[u8]) -> Vec<Event> {
    let mut events = Vec::new();
    Decoder::default().feed(bytes, false, &mut events);
    events
}

fn key(code: KeyCode, modifiers: KeyModifiers) -> Event {
    Event::Key(KeyEvent::new(code, modifiers))
}

/// Keys pressed with no modifier.
fn plain(codes: &[KeyCode]) -> Vec<Event> {
    codes.iter().map(|code| key(*code, NONE)).collect()
}

fn mouse(kind: MouseEventKind, column: u16, row: u16, modifiers: KeyModifiers) -> Event {
    Event::Mouse(MouseEvent { kind, column, row, modifiers })
}

/// Asserts every case decodes, on its own, to exactly its events. A key's kind and state are
/// compared too, which `KeyEvent`'s own equality leaves out.
fn check(cases: &[(&[u8], Vec<Event>)]) {
    for (bytes, expected) in cases {
        let decoded = decode(bytes);
        assert_eq!(format!("{decoded:?}"), format!("{expected:?}"), "decoding {bytes:?}");
    }
}

#[test]
fn characters_and_control_keys() {
    check(&[
        (b"a", vec![key(KeyCode::Char('a'), NONE)]),
        (b"A", vec![key(KeyCode::Char('A'), SHIFT)]),
        (
            "é日🦀".as_bytes(),
            plain(&[KeyCode::Char('é'), KeyCode::Char('日'), KeyCode::Char('🦀')]),
        ),
        (b"\r", vec![key(KeyCode::Enter, NONE)]),
        (b"\t", vec![key(KeyCode::Tab, NONE)]),
        (b"\x7f", vec![key(KeyCode::Backspace, NONE)]),
        // In raw mode `\n` is Ctrl+J, keel's other new-line key.
        (b"\n", vec![key(KeyCode::Char('j'), CTRL)]),
        (
            b"\x03\x15\x01",
            vec![
                key(KeyCode::Char('c'), CTRL),
                key(KeyCode::Char('u'), CTRL),
                key(KeyCode::Char('a'), CTRL),
            ],
        ),
        (b"\x00", vec![key(KeyCode::Char(' '), CTRL)]),
        (b"\x1c\x1f", vec![key(KeyCode::Char('4'), CTRL), key(KeyCode::Char('7'), CTRL)]),
    ]);
}

#[test]
fn esc_alone_and_as_alt() {
    check(&[
        (b"\x1b", vec![key(KeyCode::Esc, NONE)]),
        (b"\x1ba", vec![key(KeyCode::Char('a'), ALT)]),
        (b"\x1b\r", vec![key(KeyCode::Enter, ALT)]),
        (b"\x1b\x1b", vec![key(KeyCode::Esc, NONE), key(KeyCode::Esc, NONE)]),
        (b"\x1b\x1b[A", vec![key(KeyCode::Esc, NONE), key(KeyCode::Up, NONE)]),
        (b"\x1b[", vec![key(KeyCode::Char('['), ALT)]),
        (b"\x1bO", vec![key(KeyCode::Char('O'), SHIFT | ALT)]),
    ]);
}

#[test]
fn cursor_editing_and_function_keys_with_modifiers() {
    check(&[
        (
            b"\x1b[A\x1b[B\x1b[C\x1b[D",
            plain(&[KeyCode::Up, KeyCode::Down, KeyCode::Right, KeyCode::Left]),
        ),
        (
            b"\x1bOA\x1bOH\x1bOP\x1bOS",
            plain(&[KeyCode::Up, KeyCode::Home, KeyCode::F(1), KeyCode::F(4)]),
        ),
        // The keypad's Enter in application mode.
        (b"\x1bOM", vec![key(KeyCode::Enter, NONE)]),
        (b"\x1b[1;5C", vec![key(KeyCode::Right, CTRL)]),
        (b"\x1b[1;2A", vec![key(KeyCode::Up, SHIFT)]),
        (b"\x1b[1;7D", vec![key(KeyCode::Left, CTRL | ALT)]),
        (
            b"\x1b[H\x1b[F\x1b[1~\x1b[4~",
            plain(&[KeyCode::Home, KeyCode::End, KeyCode::Home, KeyCode::End]),
        ),
        (
            b"\x1b[2~\x1b[3~\x1b[3;5~",
            vec![
                key(KeyCode::Insert, NONE),
                key(KeyCode::Delete, NONE),
                key(KeyCode::Delete, CTRL),
            ],
        ),
        (b"\x1b[5~\x1b[6~", vec![key(KeyCode::PageUp, NONE), key(KeyCode::PageDown, NONE)]),
        (
            b"\x1b[15~\x1b[24~\x1b[1;2Q",
            vec![key(KeyCode::F(5), NONE), key(KeyCode::F(12), NONE), key(KeyCode::F(2), SHIFT)],
        ),
        (b"\x1b[[A\x1b[[E", vec![key(KeyCode::F(1), NONE), key(KeyCode::F(5), NONE)]),
        (b"\x1b[Z", vec![key(KeyCode::BackTab, SHIFT)]),
    ]);
}

#[test]
fn shift_enter_in_every_form_terminals_send_it() {
    check(&[
        // kitty's keyboard protocol, and tmux's `extended-keys-format csi-u`.
        (b"\x1b[13;2u", vec![key(KeyCode::Enter, SHIFT)]),
        // xterm's modifyOtherKeys, tmux's default `extended-keys-format xterm`.
        (b"\x1b[27;2;13~", vec![key(KeyCode::Enter, SHIFT)]),
        (b"\x1b[27;5;13~", vec![key(KeyCode::Enter, CTRL)]),
        (b"\x1b[27;3;13~", vec![key(KeyCode::Enter, ALT)]),
        (
            b"\x1b[27;2;9~\x1b[9;2u",
            vec![key(KeyCode::BackTab, SHIFT), key(KeyCode::BackTab, SHIFT)],
        ),
        (
            b"\x1b[27;5;97~\x1b[97;5u",
            vec![key(KeyCode::Char('a'), CTRL), key(KeyCode::Char('a'), CTRL)],
        ),
        (b"\x1b[27;6;65~", vec![key(KeyCode::Char('A'), CTRL | SHIFT)]),
        (
            b"\x1b[27u\x1b[127u\x1b[13u",
            vec![key(KeyCode::Esc, NONE), key(KeyCode::Backspace, NONE), key(KeyCode::Enter, NONE)],
        ),
        // kitty reports the keypad's keys apart.
        (
            b"\x1b[57414u\x1b[57399u\x1b[57417u",
            plain(&[KeyCode::Enter, KeyCode::Char('0'), KeyCode::Left]),
        ),
        (
            b"\x1b[97;1:3u",
            vec![Event::Key(KeyEvent::new_with_kind(
                KeyCode::Char('a'),
                NONE,
                KeyEventKind::Release,
            ))],
        ),
        (
            b"\x1b[97;1:2u",
            vec![Event::Key(KeyEvent::new_with_kind(
                KeyCode::Char('a'),
                NONE,
                KeyEventKind::Repeat,
            ))],
        ),
    ]);
}

#[test]
fn the_mouse_in_its_three_report_forms() {
    check(&[
        (b"\x1b[<64;10;5M", vec![mouse(MouseEventKind::ScrollUp, 9, 4, NONE)]),
        (b"\x1b[<65;1;1M", vec![mouse(MouseEventKind::ScrollDown, 0, 0, NONE)]),
        (
            b"\x1b[<0;3;4M\x1b[<0;3;4m",
            vec![
                mouse(MouseEventKind::Down(MouseButton::Left), 2, 3, NONE),
                mouse(MouseEventKind::Up(MouseButton::Left), 2, 3, NONE),
            ],
        ),
        (b"\x1b[<2;1;1M", vec![mouse(MouseEventKind::Down(MouseButton::Right), 0, 0, NONE)]),
        (
            b"\x1b[<32;3;4M\x1b[<35;3;4M",
            vec![
                mouse(MouseEventKind::Drag(MouseButton::Left), 2, 3, NONE),
                mouse(MouseEventKind::Moved, 2, 3, NONE),
            ],
        ),
        (
            b"\x1b[<16;1;1M\x1b[<68;1;1M",
            vec![
                mouse(MouseEventKind::Down(MouseButton::Left), 0, 0, CTRL),
                mouse(MouseEventKind::ScrollUp, 0, 0, SHIFT),
            ],
        ),
        // X10: each value as a byte, offset by 32.
        (
            b"\x1b[M`!!\x1b[Ma*%",
            vec![
                mouse(MouseEventKind::ScrollUp, 0, 0, NONE),
                mouse(MouseEventKind::ScrollDown, 9, 4, NONE),
            ],
        ),
        (b"\x1b[M#!!", vec![mouse(MouseEventKind::Up(MouseButton::Left), 0, 0, NONE)]),
        // rxvt: decimal, the button offset by 32.
        (b"\x1b[96;10;5M", vec![mouse(MouseEventKind::ScrollUp, 9, 4, NONE)]),
    ]);
}

#[test]
fn a_bracketed_paste_is_one_event_with_its_bytes_as_they_came() {
    check(&[
        (b"\x1b[200~hello\r\nworld\x1b[201~", vec![Event::Paste("hello\r\nworld".into())]),
        // Keys inside a paste are its text, not keys.
        (
            b"\x1b[200~a\x1b[Ab\x03\x1b[201~x",
            vec![Event::Paste("a\x1b[Ab\x03".into()), key(KeyCode::Char('x'), NONE)],
        ),
        (b"\x1b[200~\x1b[201~", vec![Event::Paste(String::new())]),
        ("\x1b[200~日本\x1b[201~".as_bytes(), vec![Event::Paste("日本".into())]),
    ]);
}

#[test]
fn a_big_paste_cut_into_many_reads_arrives_whole() {
    let text: String = (1..=2_000).map(|n| format!("line {n} of a big paste\n")).collect();
    // Cut anywhere after its start marker, the end marker too, and each read not full.
    let bytes = [text.as_bytes(), b"\x1b[201~"].concat();
    for chunk in [1, 5, 6, 7, 1024] {
        let mut decoder = Decoder::default();
        let mut events = Vec::new();
        decoder.feed(b"\x1b[200~", false, &mut events);
        for piece in bytes.chunks(chunk) {
            decoder.feed(piece, false, &mut events);
        }
        assert_eq!(events, vec![Event::Paste(text.clone())], "in reads of {chunk} bytes");
    }
}

#[test]
fn replies_to_queries_and_unknown_sequences_type_nothing() {
    check(&[
        (b"\x1b[?1u\x1b[?62;22cx", vec![key(KeyCode::Char('x'), NONE)]),
        (b"\x1b[5X\x1b[99~\x1b[12;40Ry", vec![key(KeyCode::Char('y'), NONE)]),
        (b"\x1b[201~z", vec![key(KeyCode::Char('z'), NONE)]),
        (b"\x1b[I\x1b[O", vec![Event::FocusGained, Event::FocusLost]),
        // A byte that cannot be in a sequence ends it; it is decoded as what it is.
        (b"\x1b[1;\x07", vec![key(KeyCode::Char('g'), CTRL)]),
        (b"\xff\xc3(", vec![key(KeyCode::Char('('), NONE)]),
    ]);
    let endless = [b"\x1b[".as_slice(), &[b'1'; 300], b"~q"].concat();
    assert_eq!(decode(&endless).last(), Some(&key(KeyCode::Char('q'), NONE)));
}

#[test]
fn a_sequence_cut_where_a_full_read_ended_waits_for_its_rest() {
    let mut decoder = Decoder::default();
    let mut events = Vec::new();
    decoder.feed(b"\x1b", true, &mut events);
    decoder.feed(b"[27;2", true, &mut events);
    assert!(events.is_empty(), "nothing yet: {events:?}");
    decoder.feed(b";13~", false, &mut events);
    assert_eq!(events, vec![key(KeyCode::Enter, SHIFT)]);
    decoder.feed("日".as_bytes().get(..1).unwrap_or_default(), false, &mut events);
    decoder.feed("日".as_bytes().get(1..).unwrap_or_default(), false, &mut events);
    assert_eq!(events.last(), Some(&key(KeyCode::Char('日'), NONE)));
}

proptest! {
    /// Whatever the bytes and however the reads cut them (each read but the last one full), the
    /// events are the ones the bytes make read at once.
    #[test]
    fn reads_cut_anywhere_decode_as_one(
        bytes in proptest::collection::vec(
            prop_oneof![
                Just(0x1b_u8), Just(b'['), Just(b';'), Just(b'~'), Just(b'u'), Just(b'<'),
                Just(b'M'), Just(b'O'), b'0'..=b'9', any::<u8>(),
            ],
            0..64,
        ),
        cuts in proptest::collection::vec(0_usize..64, 0..6),
    ) {
        let whole = decode(&bytes);
        let mut cuts: Vec<usize> = cuts.into_iter().filter(|cut| *cut < bytes.len()).collect();
        cuts.sort_unstable();
        cuts.dedup();
        let mut decoder = Decoder::default();
        let mut events = Vec::new();
        let mut start = 0;
        for cut in cuts {
            decoder.feed(&bytes[start..cut], true, &mut events);
            start = cut;
        }
        decoder.feed(&bytes[start..], false, &mut events);
        prop_assert_eq!(format!("{events:?}"), format!("{whole:?}"));
    }
}
