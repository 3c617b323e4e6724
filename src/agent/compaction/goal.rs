//! Compaction's choices, as plain functions of the history and the meter: what one compaction
//! aims for ([`Goal`]), whether masking is enough or a summary is needed ([`decide`]), the
//! arithmetic of its targets and budgets, and what the person is told when nothing fits.

use super::mask;
use super::meter::{ContextMeter, WindowSource};
use super::summary;
use crate::agent::journal::compaction::{Mask, Trigger, apply_masks};
use crate::message::History;

/// A refused request is made at most this share of its size before it is sent again.
const REFUSED_SHRINK: f64 = 0.75;
/// The least room for the prompt, in tokens, that is worth trying with.
pub(super) const MIN_ROOM: u64 = 1024;
/// The share of the threshold a summary's stand-in list of calls may take.
const DIGEST_SHARE: f64 = 0.25;

/// What one compaction is for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Goal {
    pub trigger: Trigger,
    /// The estimate of the next request as it is, in tokens.
    pub before: u64,
    /// The estimate to get below.
    pub target: u64,
    /// Summarise even when masking would be enough (`/compact`).
    pub summarise: bool,
    /// The window a server's refusal stated, to be saved with the compaction.
    pub learned_window: Option<u64>,
}

impl Goal {
    /// The estimate passed the threshold before a request.
    pub fn threshold(meter: &ContextMeter, before: u64) -> Self {
        let target = meter.threshold();
        Self { trigger: Trigger::Threshold, before, target, summarise: false, learned_window: None }
    }

    /// The server refused a request of `refused` tokens (the meter has learned what it stated):
    /// the next is smaller by a share at least, and below the threshold.
    pub fn refused(meter: &ContextMeter, refused: u64) -> Self {
        let learned = (meter.source() == WindowSource::Server).then(|| meter.window());
        let target = meter.threshold().min((refused as f64 * REFUSED_SHRINK) as u64);
        Self {
            trigger: Trigger::Refused,
            before: refused,
            target,
            summarise: false,
            learned_window: learned,
        }
    }

    /// The person asked (`/compact`): a summary, whatever masking would do.
    pub fn asked(meter: &ContextMeter, before: u64) -> Self {
        let target = meter.threshold();
        Self { trigger: Trigger::Request, before, target, summarise: true, learned_window: None }
    }
}

/// What a compaction towards a goal does.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Work {
    /// Nothing can go: no result is old or bulky enough, and nothing before the newest round
    /// could be summarised.
    Nothing,
    /// Masking is enough (or all there is): these masks, leaving `after` tokens.
    Mask { masks: Vec<Mask>, after: u64 },
    /// A summary of the work before `tail` of the `masked` history.
    Summarise { masked: History, tail: usize },
}

/// The cheapest work that reaches `goal`: masking with the newest rounds kept whole, then with
/// only the newest; a summary when that is not enough (or asked for) and there is work before
/// the newest round to summarise.
pub(super) fn decide(history: &History, meter: &ContextMeter, goal: &Goal) -> Work {
    let (mut masks, mut masked) = masked(history, mask::KEEP_ROUNDS);
    let mut after = meter.estimate_of(&masked);
    if after > goal.target {
        (masks, masked) = self::masked(history, 1);
        after = meter.estimate_of(&masked);
    }
    match summary::tail_start(&masked) {
        Some(tail) if after > goal.target || goal.summarise => Work::Summarise { masked, tail },
        _ if masks.is_empty() => Work::Nothing,
        _ => Work::Mask { masks, after },
    }
}

/// `history` with what can go masked, keeping `keep` rounds whole; and the masks.
pub(super) fn masked(history: &History, keep: usize) -> (Vec<Mask>, History) {
    let masks = mask::plan(history, keep);
    let mut masked = history.clone();
    // The plan names only calls the history holds.
    if apply_masks(masked.iter_mut(), &masks).is_err() {
        return (Vec::new(), history.clone());
    }
    (masks, masked)
}

/// The bytes that come to `tokens` at the rate the server's counts taught.
pub(super) fn bytes_for(meter: &ContextMeter, tokens: f64) -> usize {
    (tokens / meter.tokens_per_byte()) as usize
}

/// What the list of calls that stands in for a failed summary may take, in bytes.
pub(super) fn digest_budget(meter: &ContextMeter) -> usize {
    bytes_for(meter, meter.threshold() as f64 * DIGEST_SHARE)
}

/// What the summary request may carry of the work, in bytes: `compact_at` of the window less
/// the summary's own answer (`max_tokens`).
pub(super) fn summary_budget(meter: &ContextMeter, max_tokens: u32, compact_at: f64) -> usize {
    let room = meter.window().saturating_sub(u64::from(max_tokens));
    bytes_for(meter, room as f64 * compact_at)
}

/// Whether the window leaves room worth trying for the prompt.
pub(super) fn has_room(meter: &ContextMeter) -> bool {
    meter.room() >= MIN_ROOM
}

/// What the person is told when nothing fits, and what to raise.
pub fn does_not_fit(meter: &ContextMeter, tokens: u64) -> String {
    let source = match meter.source() {
        WindowSource::Configured => "as --context-window or context_window sets it",
        WindowSource::Assumed => "keel's figure for this model",
        WindowSource::Server => "as the server stated it",
    };
    format!(
        "The conversation does not fit in the model's context window, even compacted: the \
         request takes about {tokens} tokens, and the window of {} tokens ({source}) leaves \
         {} for it beside the {} that --max-tokens keeps for the answer. Raise the window — \
         the server's context size (llama.cpp --ctx-size, Ollama num_ctx, vLLM \
         --max-model-len), or --context-window where keel's figure is too low — or lower \
         --max-tokens, or /clear to start over.",
        meter.window(),
        meter.room(),
        meter.max_tokens()
    )
}

#[cfg(test)]
mod tests;
