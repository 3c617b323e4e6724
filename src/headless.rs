//! `keel -p`: runs one prompt to the end without a terminal UI.
//!
//! Progress (board changes, tool calls, reminders, retries) goes to stderr as text, and the final
//! answer to stdout — or, with `--output-format json`, every [`AgentEvent`] as one JSON object per
//! line on stdout. Tools run without asking: there is no one to ask. Everything printed as text
//! that came from the model or a tool has its control characters made visible (`crate::visible`),
//! so no escape sequence reaches the person's terminal; JSON output escapes them already.
//!
//! With `--plan` the answer is the plan: the board the turn ended with goes to stdout (the model's
//! last words to stderr), or, in JSON, it is the `todo` event just before the `result`.

use crate::agent::{AgentEvent, AgentHandle, Command, TurnOutcome};
use crate::todo::{TodoBoard, TodoItem};
use crate::tools::{ToolName, call};
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

/// How the run ended, for the exit code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunResult {
    pub outcome: TurnOutcome,
    pub error: Option<String>,
}

/// Sends `start` (a prompt, or `Continue`), prints events until the turn ends, then stops the
/// agent. `plan`: the agent is in plan mode, and the plan is the answer. Ctrl+C, SIGTERM and
/// SIGHUP interrupt the turn (the history stays valid and saved) and end the run.
pub async fn run(
    mut agent: AgentHandle,
    start: Command,
    format: OutputFormat,
    plan: bool,
) -> std::io::Result<RunResult> {
    // Nothing is drawn here: closing the snapshot channel at once keeps the agent from queueing
    // a snapshot per change for the whole run (each holding its own version of the history).
    drop(agent.snapshots);
    let _ = agent.commands.send(start);
    let mut terminate = signal(SignalKind::terminate())?;
    let mut hangup = signal(SignalKind::hangup())?;
    let mut stdout = std::io::stdout().lock();
    let mut stderr = std::io::stderr().lock();
    let mut interrupted = false;
    let mut board: Vec<TodoItem> = Vec::new();
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
            };
        };
        if let AgentEvent::Todo { items, .. } = &event {
            board.clone_from(items);
        }
        match format {
            OutputFormat::Json => {
                serde_json::to_writer(&mut stdout, &event)?;
                writeln!(stdout)?;
                stdout.flush()?;
            }
            OutputFormat::Text if plan => {
                // The model's last words are progress here; the board is the answer.
                let mut words = Vec::new();
                print_progress(&mut stderr, &mut words, &event)?;
                stderr.write_all(&words)?;
                if matches!(event, AgentEvent::Result { outcome: TurnOutcome::Success, .. }) {
                    writeln!(
                        stdout,
                        "{}",
                        TodoBoard::from_items(std::mem::take(&mut board)).render()
                    )?;
                    stdout.flush()?;
                }
            }
            OutputFormat::Text => print_progress(&mut stderr, &mut stdout, &event)?,
        }
        if let AgentEvent::Result { outcome, error, .. } = event {
            break RunResult { outcome, error };
        }
    };
    let _ = agent.commands.send(Command::Quit);
    let _ = agent.task.await;
    Ok(result)
}

/// Resolves when the person or the system asks keel to stop: Ctrl+C, SIGTERM or SIGHUP.
async fn interruption(terminate: &mut Signal, hangup: &mut Signal) {
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = terminate.recv() => {}
        _ = hangup.recv() => {}
    }
}

/// One event as a person reads it: progress to `err`, the final answer to `out`.
fn print_progress(
    err: &mut impl Write,
    out: &mut impl Write,
    event: &AgentEvent,
) -> std::io::Result<()> {
    match event {
        AgentEvent::Todo { items, .. } => {
            writeln!(err, "todo:")?;
            for line in TodoBoard::from_items(items.to_vec()).render().lines() {
                if line.is_empty() {
                    writeln!(err)?;
                } else {
                    writeln!(err, "  {}", visible(line))?;
                }
            }
        }
        AgentEvent::ToolStart { name, input, .. } => {
            let tool = ToolName::parse(name);
            if tool != ToolName::Todo {
                writeln!(err, "→ {}: {}", visible(name), visible(&call::summary(&tool, input)))?;
            }
        }
        AgentEvent::ToolEnd { name, is_error, exit_code, duration_ms, output, .. } => {
            if *is_error {
                let first = output.lines().next().unwrap_or_default();
                writeln!(err, "  ✗ {} failed: {}", visible(name), visible(first))?;
            } else if name != crate::todo::TOOL_NAME {
                match exit_code {
                    Some(code) => writeln!(err, "  ✓ exit {code} ({duration_ms} ms)")?,
                    None => writeln!(err, "  ✓ done ({duration_ms} ms)")?,
                }
            }
        }
        AgentEvent::Reminder { text, rounds_since_todo, .. } => {
            writeln!(err, "! reminder after {rounds_since_todo} rounds: {}", visible(text))?;
        }
        AgentEvent::AssistantText { text } => writeln!(err, "{}", visible(text))?,
        AgentEvent::Retry { attempt, delay_ms, reason } => {
            writeln!(err, "… retry {attempt} in {delay_ms} ms: {}", visible(reason))?;
        }
        AgentEvent::Compaction {
            tokens_before,
            tokens_after,
            masked,
            summarised,
            summary_error,
            ..
        } => {
            let how = match (summarised, summary_error) {
                (0, _) => format!("{masked} old tool results elided"),
                (_, None) => format!("{summarised} messages summarised"),
                (_, Some(why)) => {
                    format!("{summarised} messages listed (no summary: {})", visible(why))
                }
            };
            writeln!(
                err,
                "· compacted the history: about {tokens_before} → {tokens_after} tokens; {how}"
            )?;
        }
        AgentEvent::Usage { .. } => {}
        AgentEvent::Result { outcome, text, error, done, total, rounds, .. } => {
            match error {
                Some(error) => writeln!(err, "keel: {}", visible(error))?,
                None if *outcome == TurnOutcome::Interrupted => writeln!(err, "keel: interrupted")?,
                None => {}
            }
            writeln!(err, "({rounds} model responses; board {done}/{total})")?;
            if !text.is_empty() {
                writeln!(out, "{}", visible(text))?;
            }
            out.flush()?;
        }
    }
    Ok(())
}
