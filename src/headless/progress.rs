//! `-p`'s progress as a person reads it: each event one line (or a few) on stderr — the board
//! when it changes, a tool's call and how it ended, reminders, retries — the final answer on
//! stdout, and the closing line with what the run took.

use crate::agent::{AgentEvent, Entry, TurnOutcome};
use crate::board::Board;
use crate::message::Usage;
use crate::pricing::{Price, dollars};
use crate::tools::bash::hint::SandboxHint;
use crate::tools::registry;
use crate::visible::{one_line, visible};
use std::io::Write;

/// What the run's model responses took, for the closing line.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Spent {
    pub(super) responses: u32,
    /// Of the child agents, besides `responses` (their tokens are in `usage`).
    pub(super) child_responses: u32,
    pub(super) usage: Usage,
    pub(super) price: Option<Price>,
}

/// One event as a person reads it: progress to `err`, the final answer to `out`.
pub(super) fn print_progress(
    err: &mut impl Write,
    out: &mut impl Write,
    event: &AgentEvent,
    spent: &Spent,
) -> std::io::Result<()> {
    match event {
        AgentEvent::Todo { items, .. } => {
            writeln!(err, "todo:")?;
            for line in Board::from_items(items.to_vec()).render().lines() {
                if line.is_empty() {
                    writeln!(err)?;
                } else {
                    writeln!(err, "  {}", visible(line))?;
                }
            }
        }
        AgentEvent::ToolStart { name, summary, .. } => {
            if registry::describe(name).is_none_or(|tool| tool.effect().shown_in_tool_pane()) {
                writeln!(err, "→ {}: {}", one_line(name), one_line(summary))?;
            }
        }
        AgentEvent::ToolEnd { name, is_error, exit_code, duration_us, output, tally, .. } => {
            // What the sandbox had to do with it, as the TUI's tool line says it.
            let runs_command = registry::describe(name).map(|tool| tool.effect())
                == Some(crate::tools::Effect::RunsCommand);
            let hint = runs_command
                .then(|| SandboxHint::in_result(output))
                .flatten()
                .map_or_else(String::new, |hint| format!(" · {}", hint.label()));
            if *is_error {
                let first = output.lines().next().unwrap_or_default();
                writeln!(err, "  ✗ {} failed: {}{hint}", visible(name), visible(first))?;
            } else if name != crate::tools::names::TODO.model {
                let took = tool_time(*duration_us);
                let mark = if hint.is_empty() { "✓" } else { "⚠" };
                match (exit_code, tally) {
                    (Some(code), _) => writeln!(err, "  {mark} exit {code} ({took}){hint}")?,
                    (None, Some(tally)) => {
                        writeln!(err, "  {mark} {} ({took}){hint}", visible(tally))?;
                    }
                    (None, None) => writeln!(err, "  {mark} done ({took}){hint}")?,
                }
            }
        }
        // The conversation's line: `✓ check #3 cargo test -q parser · 2.1s`.
        AgentEvent::CheckEnd { .. } => {
            if let Some(Entry::Notice { text }) = event.entry() {
                writeln!(err, "{}", visible(&text))?;
            }
        }
        AgentEvent::Reminder { text, rounds_since_todo, .. } => {
            writeln!(err, "! reminder after {rounds_since_todo} rounds: {}", visible(text))?;
        }
        AgentEvent::AssistantText { text } => writeln!(err, "{}", visible(text))?,
        AgentEvent::NotSaved { reason: text } | AgentEvent::Error { text } => {
            writeln!(err, "keel: {}", visible(text))?;
        }
        AgentEvent::Retry { attempt, delay_ms, reason } => {
            writeln!(err, "… retry {attempt} in {delay_ms} ms: {}", visible(reason))?;
        }
        // The same line the conversation shows, and why there is no summary when there is none.
        AgentEvent::Compaction { summary_error, .. } => {
            if let Some(Entry::Notice { text }) = event.entry() {
                match summary_error {
                    Some(why) => writeln!(err, "· {text} (no summary: {})", visible(why))?,
                    None => writeln!(err, "· {text}")?,
                }
            }
        }
        // The line the conversation shows for a hook that blocked or failed.
        AgentEvent::Hook { .. } => {
            if let Some(Entry::Notice { text } | Entry::Error { text }) = event.entry() {
                writeln!(err, "keel: {}", visible(&text))?;
            }
        }
        AgentEvent::Usage { .. }
        | AgentEvent::CheckStart { .. }
        | AgentEvent::AgentStart { .. }
        | AgentEvent::AgentEnd { .. }
        | AgentEvent::Child { .. }
        | AgentEvent::Prompt { .. }
        | AgentEvent::Thinking { .. }
        | AgentEvent::InterruptedText { .. }
        | AgentEvent::Notice { .. } => {}
        AgentEvent::Result { outcome, text, error, done, total, .. } => {
            match error {
                Some(error) => writeln!(err, "keel: {}", visible(error))?,
                None if *outcome == TurnOutcome::Interrupted => writeln!(err, "keel: interrupted")?,
                None => {}
            }
            writeln!(err, "({})", summary(spent, *done, *total))?;
            if !text.is_empty() {
                writeln!(out, "{}", visible(text))?;
            }
            out.flush()?;
        }
    }
    Ok(())
}

/// A tool's time as the progress lines show it: to a tenth of a millisecond below a second
/// (`0.3 ms`, `101.4 ms`), whole milliseconds above.
pub(super) fn tool_time(micros: u64) -> String {
    const MICROS_PER_MS: u64 = 1_000;
    const MICROS_PER_TENTH: u64 = 100;
    const TENTHS_BELOW: u64 = 1_000_000;
    let (ms, rest) = (micros / MICROS_PER_MS, micros % MICROS_PER_MS);
    if micros < TENTHS_BELOW {
        format!("{ms}.{} ms", rest / MICROS_PER_TENTH)
    } else {
        format!("{ms} ms")
    }
}

/// `3 model responses, board 2/5 done; 12345 tokens in, 678 out, $0.04`, `no response from
/// the model`. The cost only where the model's price is known.
pub(super) fn summary(spent: &Spent, done: usize, total: usize) -> String {
    let mut responses = match spent.responses {
        0 => return "no response from the model".to_owned(),
        1 => "1 model response".to_owned(),
        n => format!("{n} model responses"),
    };
    if spent.child_responses > 0 {
        responses.push_str(&format!(" (and {} by child agents)", spent.child_responses));
    }
    let board =
        if total == 0 { "no board".to_owned() } else { format!("board {done}/{total} done") };
    let usage = &spent.usage;
    let mut line = format!(
        "{responses}, {board}; {} tokens in, {} out",
        usage.input_tokens, usage.output_tokens
    );
    if let Some(price) = spent.price {
        line.push_str(&format!(", {}", dollars(price.cost(usage))));
    }
    line
}
