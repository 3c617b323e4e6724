//! The TUI without a terminal: an `App` fed keys and snapshots, drawn into ratatui's
//! `TestBackend`, and the commands it sends read back from its channel. Render tests build on
//! these instead of keeping copies of their own.

use keel::agent::{Command, Snapshot};
use keel::tui::{App, TuiOptions, render};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};

/// An app with `options`, and the receiving end of the commands it sends.
pub fn new_app(options: TuiOptions) -> (App, UnboundedReceiver<Command>) {
    let (tx, rx) = unbounded_channel();
    (App::new(tx, options), rx)
}

/// An app with the default options.
pub fn app() -> (App, UnboundedReceiver<Command>) {
    new_app(TuiOptions::default())
}

/// An app that has received `snapshot` from the agent.
pub fn app_with(snapshot: Snapshot) -> (App, UnboundedReceiver<Command>) {
    let (mut app, rx) = app();
    app.apply_snapshot(snapshot);
    (app, rx)
}

/// The commands the app has sent since the last call.
pub fn sent(rx: &mut UnboundedReceiver<Command>) -> Vec<Command> {
    let mut out = Vec::new();
    while let Ok(command) = rx.try_recv() {
        out.push(command);
    }
    out
}

/// A key pressed without modifiers.
pub fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

/// Ctrl and a character.
pub fn ctrl(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)
}

/// Presses `code` in the app.
pub fn press(app: &mut App, code: KeyCode) {
    app.handle_key(key(code));
}

/// Types `text` key by key, with Shift on capitals as a terminal sends them.
pub fn type_text(app: &mut App, text: &str) {
    for c in text.chars() {
        let modifiers =
            if c.is_ascii_uppercase() { KeyModifiers::SHIFT } else { KeyModifiers::NONE };
        app.handle_key(KeyEvent::new(KeyCode::Char(c), modifiers));
    }
}

/// Draws one frame of `(width, height)`.
pub fn draw(app: &mut App, (width, height): (u16, u16)) -> Terminal<TestBackend> {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    app.prepare(Rect::new(0, 0, width, height));
    terminal.draw(|frame| render(app, frame)).unwrap();
    terminal
}

/// A drawn frame as text, a line per row.
pub fn screen_text(terminal: &Terminal<TestBackend>) -> String {
    buffer_text(terminal.backend().buffer())
}

/// A buffer as text, a line per row.
pub fn buffer_text(buffer: &Buffer) -> String {
    let mut out = String::new();
    for y in 0..buffer.area.height {
        for x in 0..buffer.area.width {
            out.push_str(buffer[(x, y)].symbol());
        }
        out.push('\n');
    }
    out
}
