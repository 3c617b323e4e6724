//! The summary asked of the model: one request to the same model, without tools, carrying the
//! work as a transcript (`summary::request_text`), the person heard while it is answered. A
//! "too long" answer halves what the next attempt carries.

use super::{Failed, Parts, goal, summary};
use crate::agent::listening::{during_turn, on_stream_event};
use crate::llm::{ChatRequest, LlmError};
use crate::message::{History, Message};
use tokio::sync::mpsc;

/// Times the summary request is tried, halving what it carries after each "too long".
const SUMMARY_ATTEMPTS: u32 = 3;

/// Asks the model for a summary of the work before `tail`, listening for the person
/// meanwhile. `Ok(Err(why))` when there is none to be had.
pub(super) async fn summarise(
    parts: &mut Parts<'_>,
    history: &History,
    tail: usize,
) -> Result<Result<String, String>, Failed> {
    let Some(provider) = parts.provider else {
        return Ok(Err("no model is configured".to_owned()));
    };
    let max_tokens = parts.config.max_tokens.min(summary::MAX_TOKENS);
    let mut budget = goal::summary_budget(parts.meter, max_tokens, parts.config.compact_at);
    let mut last = String::new();
    for _ in 0..SUMMARY_ATTEMPTS {
        let asked: History =
            std::iter::once(Message::user_text(summary::request_text(history, tail, budget)))
                .collect();
        let request = ChatRequest {
            system: summary::SYSTEM,
            messages: &asked,
            tools: &[],
            max_tokens,
            thinking_budget: None,
        };
        let (stream_tx, mut stream_rx) = mpsc::unbounded_channel();
        let completion = provider.complete(&request, &stream_tx);
        tokio::pin!(completion);
        let result = loop {
            tokio::select! {
                biased;
                command = parts.inbox.recv() => {
                    if let Some(stop) =
                        during_turn(parts.state, parts.outbox, parts.services, command)
                    {
                        return Err(Failed::Stopped(stop));
                    }
                }
                Some(event) = stream_rx.recv() => {
                    on_stream_event(parts.state, parts.outbox, false, event);
                }
                result = &mut completion => break result,
            }
        };
        match result {
            Ok(completion) => {
                parts.state.add_usage(completion.usage);
                let text = Message::assistant(completion.content).text();
                return Ok(if text.trim().is_empty() {
                    Err("its answer was empty".to_owned())
                } else {
                    Ok(text)
                });
            }
            Err(err) if err.overflow().is_some() => {
                last = err.to_string();
                budget /= 2;
            }
            Err(err) => return Ok(Err(summary_failure(&err))),
        }
    }
    Ok(Err(last))
}

/// Why the summary request failed, in a few words for the note that stands in for it.
fn summary_failure(err: &LlmError) -> String {
    crate::llm::error::truncate(&err.to_string())
}
