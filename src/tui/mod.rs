//! The full-screen front end: draws the agent's snapshots and turns keys into `Command`s.
//!
//! One task runs the UI: a `select!` over the terminal's events, the agent's snapshots (drained in
//! batches, only the newest kept), a tick for animation and the termination signals. It redraws
//! only when something changed, at most [`MAX_FPS`] times a second, inside a synchronized update so
//! the terminal never shows half a frame. It never waits on the network or a tool: those belong to
//! the agent task. Module map: `app` (state), `stack` (the view stack every input walks), `layers` (its order) and
//! `input` (the event handlers that walk it), `main_view` (the main screen as a view), `render`
//! (a pure function of the state), `view/` (one widget a file), `lazy_list` (the long lists of
//! the conversation and the inspector), `terminal` (setup and restore), `terminal_input`
//! (reading and decoding the terminal's bytes).

mod app;
mod commands;
mod edits_in_flight;
mod event;
mod input;
mod keymap;
mod layers;
mod layout;
mod lazy_list;
mod main_view;
mod markdown;
mod mention_paths;
mod plan_words;
mod render;
mod scroll;
mod stack;
mod terminal;
mod terminal_input;
mod text;
mod theme;
pub mod type_ahead;
pub mod view;
mod wrap;

pub use app::App;
pub use event::UiEvent;
pub use layers::OverlayKind;
pub use render::render;

use crate::agent::{AgentHandle, Snapshot};
use ratatui::crossterm::terminal::{BeginSynchronizedUpdate, EndSynchronizedUpdate};
use ratatui::crossterm::{execute, queue};
use ratatui::layout::Rect;
use std::time::Duration;
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::mpsc::UnboundedReceiver;
use tokio::time::{Instant, MissedTickBehavior};

/// The most frames drawn in a second.
pub const MAX_FPS: u32 = 60;
/// How often the spinner and countdowns advance.
const TICK: Duration = Duration::from_millis(100);
/// Snapshots taken from the channel at once; only the newest of them is drawn.
const SNAPSHOT_BATCH: usize = 256;
/// How long to let the agent wind down (stop a running command) after `Quit`.
const AGENT_SHUTDOWN_GRACE: Duration = Duration::from_secs(3);

/// What the front end is told at start.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TuiOptions {
    /// Set when no API key is configured: the text that says how to configure one.
    pub first_run_help: Option<String>,
    /// The agent was started on the demo, working there.
    pub demo: Option<crate::llm::scripted::DemoPlace>,
    /// What the person must know about how keel was set up (settings it ignored, a session it
    /// could not open), one thing per line.
    pub notice: Option<String>,
    /// What keel did with the project's AGENTS.md or CLAUDE.md, if there is one.
    pub instructions_note: Option<String>,
    /// Draw without colours (`NO_COLOR`); bold, dim and the like stay.
    pub no_color: bool,
    /// Model prices for the status bar's cost (keel's own table unless configured).
    pub prices: crate::pricing::Prices,
    /// The workspace, whose files `@` completes.
    pub workspace: Option<std::path::PathBuf>,
    /// The paths hidden from the model, which `@` never lists.
    pub hidden: crate::runtime::sandbox::hidden::Hidden,
    /// The person's clock, for the times the screen shows in local time (UTC by default).
    pub clock: view::board::marks::Clock,
}

/// Whether `NO_COLOR` (its value, if set) asks for no colours: any non-empty value does
/// (<https://no-color.org>).
pub fn no_color_requested(value: Option<&std::ffi::OsStr>) -> bool {
    value.is_some_and(|value| !value.is_empty())
}

/// Whether keel's screen can run here: it draws on stdout and reads keys from a terminal.
pub fn has_terminal() -> bool {
    std::io::IsTerminal::is_terminal(&std::io::stdout())
        && terminal_input::TerminalInput::available()
}

/// Runs the TUI until the person quits, the terminal's input ends, or SIGTERM, SIGHUP or SIGINT
/// arrives. The terminal is restored on every way out, panics included (install color-eyre's
/// hooks before calling this, so its report prints after the terminal is restored). Returns the
/// number of the signal that ended it, if one did, for the exit status (128 + the number).
pub async fn run(agent: AgentHandle, options: TuiOptions) -> color_eyre::Result<Option<i32>> {
    let AgentHandle { commands, mut snapshots, events, task } = agent;
    // The TUI draws snapshots; the discrete events are for printing front ends. Dropping their
    // receiver tells the agent nobody reads them.
    drop(events);
    let mut app = App::new(commands, options);
    let result = {
        let mut terminal = terminal::setup()?;
        let _guard = terminal::Guard;
        let result = event_loop(&mut terminal, &mut app, &mut snapshots).await;
        // A terminal that cannot be restored (it hung up) is no reason to fail the exit.
        let _ = terminal::restore();
        result
    };
    if result.is_err() {
        app.quit();
    }
    // Give the agent a moment to stop what it runs; it is detached if it takes longer.
    let _ = tokio::time::timeout(AGENT_SHUTDOWN_GRACE, task).await;
    result
}

/// Why the event loop woke up.
enum Wake {
    Terminal(Option<std::io::Result<ratatui::crossterm::event::Event>>),
    /// How many snapshots were received (0: the agent's channel closed).
    Snapshots(usize),
    Tick,
    Frame,
    /// SIGTERM, SIGHUP or SIGINT: its number.
    Signal(i32),
}

async fn event_loop(
    terminal: &mut terminal::Tui,
    app: &mut App,
    snapshots: &mut UnboundedReceiver<Snapshot>,
) -> color_eyre::Result<Option<i32>> {
    let frame_interval = Duration::from_secs(1) / MAX_FPS;
    let mut input = terminal_input::TerminalInput::open()?;
    let mut tick = tokio::time::interval(TICK);
    tick.set_missed_tick_behavior(MissedTickBehavior::Skip);
    let mut terminate = signal(SignalKind::terminate())?;
    let mut hangup = signal(SignalKind::hangup())?;
    let mut interrupt = signal(SignalKind::interrupt())?;
    let mut batch: Vec<Snapshot> = Vec::with_capacity(SNAPSHOT_BATCH);
    let mut snapshots_open = true;
    let mut dirty = true;
    let mut last_frame: Option<Instant> = None;
    let mut signalled = None;

    loop {
        // Leave before drawing: after SIGHUP there may be no terminal left to draw on.
        if app.should_quit() {
            return Ok(signalled);
        }
        let next_frame = last_frame.map_or_else(Instant::now, |at| at + frame_interval);
        if dirty && Instant::now() >= next_frame {
            let _section = terminal::ui_section();
            draw(terminal, app)?;
            last_frame = Some(Instant::now());
            dirty = false;
        }
        let wake = tokio::select! {
            event = input.next() => Wake::Terminal(event),
            received = snapshots.recv_many(&mut batch, SNAPSHOT_BATCH), if snapshots_open => {
                Wake::Snapshots(received)
            }
            _ = tick.tick() => Wake::Tick,
            () = tokio::time::sleep_until(next_frame), if dirty => Wake::Frame,
            _ = terminate.recv() => Wake::Signal(libc_number(nix::sys::signal::SIGTERM)),
            _ = hangup.recv() => Wake::Signal(libc_number(nix::sys::signal::SIGHUP)),
            _ = interrupt.recv() => Wake::Signal(libc_number(nix::sys::signal::SIGINT)),
        };
        let _section = terminal::ui_section();
        match wake {
            Wake::Terminal(Some(Ok(event))) => {
                if let Some(event) = UiEvent::from_terminal(event) {
                    app.handle_event(event);
                    dirty = true;
                }
            }
            Wake::Terminal(Some(Err(error))) => return Err(error.into()),
            Wake::Terminal(None) => app.quit(),
            Wake::Signal(number) => {
                signalled = Some(number);
                app.quit();
            }
            Wake::Snapshots(0) => {
                snapshots_open = false;
                app.agent_stopped();
                // The agent may have died noisily (a panic report on stderr): draw everything anew.
                terminal.clear()?;
                dirty = true;
            }
            Wake::Snapshots(_) => {
                if let Some(newest) = batch.pop() {
                    app.apply_snapshot(newest);
                }
                batch.clear();
                dirty = true;
            }
            Wake::Tick => dirty |= app.on_tick(std::time::Instant::now()),
            Wake::Frame => {}
        }
    }
}

/// A signal's number, as the exit status counts it.
fn libc_number(signal: nix::sys::signal::Signal) -> i32 {
    signal as i32
}

/// Lays out and draws one frame inside a synchronized update.
fn draw(terminal: &mut terminal::Tui, app: &mut App) -> std::io::Result<()> {
    let size = terminal.size()?;
    app.prepare(Rect::new(0, 0, size.width, size.height));
    queue!(terminal.backend_mut(), BeginSynchronizedUpdate)?;
    let drawn = terminal.draw(|frame| render(app, frame)).map(|_| ());
    execute!(terminal.backend_mut(), EndSynchronizedUpdate)?;
    drawn
}
