//! The reader thread itself, fed through a pipe as the terminal would feed it: a key sequence
//! cut by the end of a full read must still come out as one key, never as a stray Esc (which
//! would interrupt the turn), and a lone Esc at the end of a short read is an Esc.

use super::{READ_BUFFER, read_until_stopped};
use ratatui::crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use std::fs::File;
use std::io::{self, Write};
use std::os::fd::OwnedFd;
use std::time::Duration;
use tokio::sync::mpsc::unbounded_channel;

/// How long the reader may take to read what was written before the next write.
const SETTLE: Duration = Duration::from_millis(100);

/// The events the reader thread decodes from `writes`, written one after another into the
/// pipe it reads, a moment apart.
fn read_through_a_pipe(writes: &[&[u8]]) -> Vec<Event> {
    let (terminal_end, mut typist) = io::pipe().unwrap();
    let tty = File::from(OwnedFd::from(terminal_end));
    let (wake, stop) = io::pipe().unwrap();
    let (sender, mut events) = unbounded_channel();
    let reader = std::thread::spawn(move || read_until_stopped(tty, &wake, &sender));
    for bytes in writes {
        typist.write_all(bytes).unwrap();
        std::thread::sleep(SETTLE);
    }
    // The input ends: the reader returns after decoding everything.
    drop(typist);
    reader.join().unwrap();
    drop(stop);
    std::iter::from_fn(|| events.try_recv().ok()).map(Result::unwrap).collect()
}

fn keys(events: &[Event]) -> Vec<KeyCode> {
    events
        .iter()
        .map(|event| match event {
            Event::Key(KeyEvent { code, .. }) => *code,
            other => panic!("not a key: {other:?}"),
        })
        .collect()
}

#[test]
fn a_sequence_cut_by_the_end_of_a_full_read_is_one_key() {
    // The full read ends on ESC alone, then on ESC and `[`: the rest comes in the next read.
    for cut in [1, 2] {
        let sequence = b"\x1b[A";
        let mut first = vec![b'a'; READ_BUFFER - cut];
        first.extend_from_slice(&sequence[..cut]);
        assert_eq!(first.len(), READ_BUFFER, "the first read fills the buffer");
        let events = read_through_a_pipe(&[&first, &sequence[cut..]]);
        let codes = keys(&events);
        assert_eq!(codes.len(), READ_BUFFER - cut + 1, "cut after {cut}: {:?}", &codes[1000..]);
        assert!(codes[..READ_BUFFER - cut].iter().all(|code| *code == KeyCode::Char('a')));
        assert_eq!(codes.last(), Some(&KeyCode::Up), "cut after {cut}");
        assert!(!codes.contains(&KeyCode::Esc), "a stray Esc came out (cut after {cut})");
    }
}

#[test]
fn a_shift_enter_cut_by_a_full_read_is_one_key() {
    let sequence = b"\x1b[27;2;13~";
    let mut first = vec![b'x'; READ_BUFFER - 4];
    first.extend_from_slice(&sequence[..4]);
    let events = read_through_a_pipe(&[&first, &sequence[4..]]);
    let last = events.last().unwrap();
    assert_eq!(
        format!("{last:?}"),
        format!("{:?}", Event::Key(KeyEvent::new(KeyCode::Enter, KeyModifiers::SHIFT)))
    );
    assert!(!keys(&events).contains(&KeyCode::Esc));
}

#[test]
fn a_lone_esc_at_the_end_of_a_short_read_is_esc() {
    let events = read_through_a_pipe(&[b"ab\x1b"]);
    assert_eq!(keys(&events), [KeyCode::Char('a'), KeyCode::Char('b'), KeyCode::Esc]);
}
