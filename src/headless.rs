//! `keel -p`: runs one prompt to the end without a terminal UI.
//!
//! Progress (board changes, tool calls, reminders, retries, the model's answers between tool
//! calls) goes to stderr as text, and the final answer to stdout, once — or, with
//! `--output-format json`, every [`AgentEvent`] as one JSON object per line on stdout. Tools run
//! without asking: there is no one to ask. Everything printed as text that came from the model or
//! a tool has its control characters made visible (`crate::visible`), so no escape sequence
//! reaches the person's terminal; JSON output escapes them already. A reader that goes away
//! (`keel -p … | head`) ends the run quietly, as if interrupted, with exit code 0.
//!
//! With `--plan` the answer is the plan: the board the turn ended with goes to stdout, each item's
//! check written out under it (the model's last words to stderr), or, in JSON, it is the `todo`
//! event just before the `result`.

use crate::agent::{AgentEvent, AgentHandle, Command, TurnOutcome};
use crate::board::{Board, BoardItem};
use crate::message::Usage;
use crate::pricing::Price;
use crate::visible::visible;
use std::io::Write;
use tokio::signal::unix::{Signal, SignalKind, signal};

/// How `-p` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum OutputFormat {
    /// Progress on stderr, the final answer on stdout.
    #[default]
    Text,
    /// One JSON event per line on stdout.
    Json,
}

/// How `-p` prints, and what it prices the tokens at.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Printing {
    pub format: OutputFormat,
    /// The agent is in plan mode, and the plan is the answer.
    pub plan: bool,
    /// The model's price, for the cost in the closing line; `None` when it is not known.
    pub price: Option<Price>,
}

/// How the run ended, for the exit code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunResult {
    pub outcome: TurnOutcome,
    pub error: Option<String>,
    /// Whoever read stdout closed it before the run ended: nobody is left to tell of a failure.
    pub reader_gone: bool,
    /// The session log could not be written (the person was told on stderr): the run fails.
    pub not_saved: bool,
}

/// Sends `start` (a prompt, or `Continue`), prints events until the turn ends, then stops the
/// agent. Ctrl+C, SIGTERM and SIGHUP interrupt the turn (the history stays valid and saved) and
/// end the run.
pub async fn run(
    mut agent: AgentHandle,
    start: Command,
    printing: Printing,
) -> std::io::Result<RunResult> {
    let Printing { format, plan, price } = printing;
    // Nothing is drawn here: closing the snapshot channel at once keeps the agent from queueing
    // a snapshot per change for the whole run (each holding its own version of the history).
    drop(agent.snapshots);
    let _ = agent.commands.send(start);
    let mut terminate = signal(SignalKind::terminate())?;
    let mut hangup = signal(SignalKind::hangup())?;
    let mut printer = Printer { price, ..Printer::default() };
    let mut interrupted = false;
    let mut reader_gone = false;
    let mut board: Vec<BoardItem> = Vec::new();
    let mut not_saved = false;
    let result = loop {
        let event = tokio::select! {
            event = agent.events.recv() => event,
            () = interruption(&mut terminate, &mut hangup), if !interrupted => {
                interrupted = true;
                let _ = agent.commands.send(Command::Cancel);
                continue;
            }
        };
        let Some(event) = event else {
            break RunResult {
                outcome: TurnOutcome::Error,
                error: Some("the agent stopped unexpectedly".into()),
                reader_gone,
                not_saved,
            };
        };
        if let AgentEvent::Todo { items, .. } = &event {
            board.clone_from(items);
        }
        let event = headless_words(event);
        not_saved |= matches!(event, AgentEvent::NotSaved { .. });
        if !reader_gone {
            // Held while one event is printed, never while the next is awaited: another thread
            // (a tool's blocking job, a panic message) can always write.
            let (mut stdout, mut stderr) = (std::io::stdout().lock(), std::io::stderr().lock());
            let printed = match format {
                OutputFormat::Json => print_json(&mut stdout, &event),
                OutputFormat::Text if plan => {
                    print_plan(&mut printer, &mut stderr, &mut stdout, &event, &mut board)
                }
                OutputFormat::Text => printer.print(&mut stderr, &mut stdout, &event),
            };
            match printed {
                Ok(()) => {}
                // The reader left (`| head`): stop the work nobody will read, and say nothing.
                Err(err) if err.kind() == std::io::ErrorKind::BrokenPipe => {
                    reader_gone = true;
                    if !interrupted {
                        interrupted = true;
                        let _ = agent.commands.send(Command::Cancel);
                    }
                }
                Err(err) => return Err(err),
            }
        }
        if let AgentEvent::Result { outcome, error, .. } = event {
            break RunResult { outcome, error, reader_gone, not_saved };
        }
    };
    let _ = agent.commands.send(Command::Quit);
    let _ = agent.task.await;
    Ok(result)
}

/// How a run stopped at `--max-rounds` goes on from the command line.
const GO_ON: &str = "`keel -p --continue` goes on from here (with a higher --max-rounds, further \
at a time).";

/// `event` in the words of a run with no one to send a message: a turn stopped at
/// `--max-rounds` goes on with `--continue`.
fn headless_words(mut event: AgentEvent) -> AgentEvent {
    if let AgentEvent::Result { outcome: TurnOutcome::MaxRounds, error: Some(error), .. } =
        &mut event
    {
        *error = error.replace(crate::agent::GO_ON, GO_ON);
    }
    event
}

/// Resolves when the person or the system asks keel to stop: Ctrl+C, SIGTERM or SIGHUP.
async fn interruption(terminate: &mut Signal, hangup: &mut Signal) {
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = terminate.recv() => {}
        _ = hangup.recv() => {}
    }
}

/// One event of a `--plan` run: the model's last words are progress here; the board is the
/// answer, printed when the turn succeeds.
fn print_plan(
    printer: &mut Printer,
    err: &mut impl Write,
    out: &mut impl Write,
    event: &AgentEvent,
    board: &mut Vec<BoardItem>,
) -> std::io::Result<()> {
    let mut words = Vec::new();
    // The newest board is held back: printed on stderr only when more progress follows it,
    // else it is the answer, printed once on stdout.
    match event {
        AgentEvent::Todo { .. } => {
            printer.held_board = Some(event.clone());
            return Ok(());
        }
        AgentEvent::Result { outcome: TurnOutcome::Success, .. } => printer.held_board = None,
        _ if shows_progress(event) => {
            if let Some(board) = printer.held_board.take() {
                printer.print(err, &mut words, &board)?;
            }
        }
        _ => {}
    }
    match event {
        // The model's last words were printed already when the board came after them: once.
        AgentEvent::Result { text, .. }
            if printer.held.is_empty() && printer.released.as_deref() == Some(text.as_str()) =>
        {
            let mut event = event.clone();
            if let AgentEvent::Result { text, .. } = &mut event {
                text.clear();
            }
            printer.print(err, &mut words, &event)?;
        }
        _ => printer.print(err, &mut words, event)?,
    }
    err.write_all(&words)?;
    if matches!(event, AgentEvent::Result { outcome: TurnOutcome::Success, .. }) {
        // The plan as the person approves it: each item's check written out under it.
        writeln!(out, "{}", Board::from_items(std::mem::take(board)).render_with_checks())?;
        out.flush()?;
    }
    Ok(())
}

/// Whether `event` prints a line of progress, after which a board held back is no longer the
/// last thing said.
fn shows_progress(event: &AgentEvent) -> bool {
    let board = |name: &str| name == crate::tools::names::TODO.model;
    match event {
        AgentEvent::ToolStart { name, .. } => !board(name),
        AgentEvent::ToolEnd { name, is_error, .. } => *is_error || !board(name),
        AgentEvent::Usage { .. }
        | AgentEvent::Prompt { .. }
        | AgentEvent::Thinking { .. }
        | AgentEvent::InterruptedText { .. }
        | AgentEvent::Notice { .. }
        | AgentEvent::AssistantText { .. }
        | AgentEvent::CheckStart { .. }
        | AgentEvent::Todo { .. } => false,
        _ => true,
    }
}

fn print_json(out: &mut impl Write, event: &AgentEvent) -> std::io::Result<()> {
    serde_json::to_writer(&mut *out, &agents::json(event)?)?;
    writeln!(out)?;
    out.flush()
}

/// Prints events as a person reads them, holding each answer back until it is known not to be
/// the last: the last one goes to stdout alone, the others to stderr with the progress. (Both
/// show on a terminal; printing the last on both showed it twice.)
#[derive(Debug, Default)]
struct Printer {
    /// Answers not printed yet: the last answer so far, in parts when it was continued.
    held: Vec<String>,
    /// The answer last printed as progress, whole.
    released: Option<String>,
    /// With `--plan`: the newest board, not printed yet.
    held_board: Option<AgentEvent>,
    /// Model responses so far (each reports its usage).
    responses: u32,
    /// Their tokens, added up.
    usage: Usage,
    price: Option<Price>,
    /// The child agents' lines and what they spent.
    children: agents::Children,
}

impl Printer {
    fn print(
        &mut self,
        err: &mut impl Write,
        out: &mut impl Write,
        event: &AgentEvent,
    ) -> std::io::Result<()> {
        match event {
            AgentEvent::AssistantText { text } => {
                self.held.push(text.clone());
                return Ok(());
            }
            AgentEvent::Usage { .. } => {
                self.responses += 1;
                self.usage.add(event.usage().unwrap_or_default());
                return Ok(());
            }
            // What only the screen shows: the prompt given, the reasoning, an interrupted
            // answer's part, keel's notes (their substance has events of its own).
            AgentEvent::Prompt { .. }
            | AgentEvent::Thinking { .. }
            | AgentEvent::InterruptedText { .. }
            | AgentEvent::Notice { .. } => return Ok(()),
            AgentEvent::AgentStart { .. }
            | AgentEvent::AgentEnd { .. }
            | AgentEvent::Child { .. } => {
                self.release(err)?;
                return self.children.print(err, event);
            }
            AgentEvent::Result { .. } => {}
            _ => self.release(err)?,
        }
        let mut usage = self.usage;
        usage.add(self.children.usage);
        let spent = Spent {
            responses: self.responses,
            child_responses: self.children.responses,
            usage,
            price: self.price,
        };
        print_progress(err, out, event, &spent)
    }

    /// Prints the held answers as progress: something came after them.
    fn release(&mut self, err: &mut impl Write) -> std::io::Result<()> {
        if self.held.is_empty() {
            return Ok(());
        }
        for text in &self.held {
            writeln!(err, "{}", visible(text))?;
        }
        self.released = Some(self.held.concat());
        self.held.clear();
        Ok(())
    }
}

mod agents;
mod progress;

use progress::{Spent, print_progress};
#[cfg(test)]
mod tests;
