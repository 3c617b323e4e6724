//! The terminal's input, read and decoded by keel itself.
//!
//! crossterm's reader drops key sequences it does not know, and one of them is the form tmux
//! sends modified keys in by default (`CSI 27;2;13~`, xterm's modifyOtherKeys): Shift+Enter
//! vanished there. So a thread of its own reads the terminal, `decode` cuts the bytes into
//! crossterm's event types, and nothing past this module knows the difference. The window's
//! size changes come from SIGWINCH, as they do in crossterm.
//!
//! The thread waits in `select` on the terminal and on a pipe (`select`, not `poll`: macOS's
//! `poll` does not wait on terminal devices); dropping [`TerminalInput`] closes the pipe, and the
//! thread stops before it reads another byte, so nothing typed after keel gives the terminal
//! back is eaten.

mod csi;
mod decode;
#[cfg(test)]
mod reader_tests;
mod step;
#[cfg(test)]
mod tests;

pub use decode::Decoder;

use nix::errno::Errno;
use nix::sys::select::{FD_SETSIZE, FdSet, select};
use ratatui::crossterm::event::Event;
use std::fs::File;
use std::io::{self, IsTerminal, PipeReader, PipeWriter, Read};
use std::os::fd::{AsFd, AsRawFd};
use std::thread::JoinHandle;
use tokio::signal::unix::{Signal, SignalKind, signal};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

/// How much one read takes. A read that fills it says more input may be waiting, which is how
/// a lone Esc is told from the start of a sequence cut by the buffer's end.
const READ_BUFFER: usize = 1024;
/// The terminal keel reads when its standard input is not one.
const CONTROLLING_TERMINAL: &str = "/dev/tty";

/// The person's keys, pastes, mouse and window size changes, as events.
#[derive(Debug)]
pub struct TerminalInput {
    events: UnboundedReceiver<io::Result<Event>>,
    resized: Signal,
    /// Closed on drop, which wakes the reader thread to stop.
    stop: Option<PipeWriter>,
    reader: Option<JoinHandle<()>>,
}

impl TerminalInput {
    /// Starts reading the terminal: standard input if it is one, else the controlling terminal.
    /// Whether there is a terminal to read keys from: stdin, or else the controlling terminal.
    pub fn available() -> bool {
        io::stdin().is_terminal() || File::open(CONTROLLING_TERMINAL).is_ok()
    }

    pub fn open() -> io::Result<Self> {
        let stdin = io::stdin();
        // A duplicate of the descriptor reads unbuffered, so `poll` sees every byte not read yet.
        let tty = if stdin.is_terminal() {
            File::from(stdin.as_fd().try_clone_to_owned()?)
        } else {
            File::open(CONTROLLING_TERMINAL)?
        };
        let (wake, stop) = io::pipe()?;
        let resized = signal(SignalKind::window_change())?;
        let (sender, events) = unbounded_channel();
        let reader = std::thread::Builder::new()
            .name("keel-terminal-input".into())
            .spawn(move || read_until_stopped(tty, &wake, &sender))?;
        Ok(Self { events, resized, stop: Some(stop), reader: Some(reader) })
    }

    /// The next event; `None` once the terminal's input has ended.
    pub async fn next(&mut self) -> Option<io::Result<Event>> {
        tokio::select! {
            event = self.events.recv() => event,
            _ = self.resized.recv() => {
                Some(ratatui::crossterm::terminal::size().map(|(width, height)| Event::Resize(width, height)))
            }
        }
    }
}

impl Drop for TerminalInput {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(reader) = self.reader.take() {
            let _ = reader.join();
        }
    }
}

/// Reads and decodes the terminal until `wake`'s other end is closed, the input ends, or nobody
/// listens any more.
fn read_until_stopped(
    mut tty: File,
    wake: &PipeReader,
    events: &UnboundedSender<io::Result<Event>>,
) {
    let too_high = |fd: i32| usize::try_from(fd).map_or(true, |fd| fd >= FD_SETSIZE);
    if too_high(tty.as_raw_fd()) || too_high(wake.as_raw_fd()) {
        let _ = events
            .send(Err(io::Error::other("too many files are open to wait on the terminal's input")));
        return;
    }
    let mut decoder = Decoder::default();
    let mut buffer = [0_u8; READ_BUFFER];
    let mut decoded = Vec::new();
    loop {
        let mut ready = FdSet::new();
        ready.insert(tty.as_fd());
        ready.insert(wake.as_fd());
        match select(None, &mut ready, None, None, None) {
            Ok(_) => {}
            Err(Errno::EINTR) => continue,
            Err(error) => {
                let _ = events.send(Err(error.into()));
                return;
            }
        }
        if ready.contains(wake.as_fd()) {
            return;
        }
        if !ready.contains(tty.as_fd()) {
            continue;
        }
        let read = match tty.read(&mut buffer) {
            Ok(0) => return,
            Ok(read) => read,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
            Err(error) => {
                let _ = events.send(Err(error));
                return;
            }
        };
        decoder.feed(&buffer[..read], read == buffer.len(), &mut decoded);
        for event in decoded.drain(..) {
            if events.send(Ok(event)).is_err() {
                return;
            }
        }
    }
}
