//! What the parent's model reads of a child: on success its final report (capped like a tool
//! result), then — for a child that did a board item — the whole board as `todo` renders it; when
//! it failed or was stopped, an error that says why it stopped, that its item stays in progress,
//! what it had done, and its last words. Nothing else of the child's conversation comes back.
//! A child's words are a model's, moved into the parent's tool result: keel's tags in them are
//! defused (`crate::tags`), so a file the child read cannot speak as keel to the parent through
//! its report.

use super::watch::Child;
use crate::agent::event::TurnOutcome;
use crate::tools::output::{CappedBuffer, MODEL_OUTPUT_LIMIT};

/// The most of a child's calls a failure lists, the newest.
const DID_LISTED: usize = 20;
/// What a child that ended without a word is reported as.
const NO_REPORT: &str = "(The child agent ended without a report.)";

/// Why a child stopped short, when the parent knows better than the child's own turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Cut {
    /// The person interrupted the turn.
    Interrupted,
    /// keel is quitting.
    Quitting,
}

/// `text` capped as a tool result is, keel's tags in it defused as in one (`crate::tags`).
pub(super) fn capped(text: &str) -> String {
    let mut buffer = CappedBuffer::new(MODEL_OUTPUT_LIMIT);
    buffer.push(text.as_bytes());
    crate::tags::defuse(&buffer.render(MODEL_OUTPUT_LIMIT)).into_owned()
}

/// The report of a child that finished: its last answer, then `board` (rendered) when it did an
/// item.
pub(super) fn success(child: &Child, board: Option<&str>) -> String {
    let text = child.ended.as_ref().map_or("", |ended| ended.text.trim());
    let mut out = capped(if text.is_empty() { NO_REPORT } else { text });
    if let Some(board) = board {
        out.push_str("\n\n");
        out.push_str(board);
    }
    out
}

/// Why a child did not finish, in words: the parent's own reason, or its turn's.
pub(super) fn why_stopped(child: &Child, cut: Option<Cut>) -> String {
    match (cut, &child.ended) {
        (Some(Cut::Interrupted), _) => "the person interrupted it".to_owned(),
        (Some(Cut::Quitting), _) => "keel is quitting".to_owned(),
        (None, Some(ended)) => match (&ended.error, ended.outcome) {
            (Some(error), _) => error.trim_end_matches('.').to_owned(),
            (None, TurnOutcome::Interrupted) => "it was interrupted".to_owned(),
            (None, outcome) => format!("its turn ended as {outcome:?}"),
        },
        (None, None) => "it ended before it could answer".to_owned(),
    }
}

/// The error of a child that failed or was stopped: why, its item left in progress, what it did,
/// its last words.
pub(super) fn failure(child: &Child, why: &str) -> String {
    let who = match child.delegation.item() {
        Some(item) => format!("The child agent {} (item #{item})", child.id),
        None => format!("The child agent {}", child.id),
    };
    let mut out = format!("{who} stopped before it finished: {why}.");
    if let Some(item) = child.delegation.item() {
        out.push_str(&format!(" Item #{item} stays in progress."));
    }
    out.push_str(&format!("\nWhat it did ({}):", calls(child.did.len())));
    let skipped = child.did.len().saturating_sub(DID_LISTED);
    if skipped > 0 {
        out.push_str(&format!("\n- … {} before these", calls(skipped)));
    }
    for line in &child.did[skipped..] {
        out.push_str(&format!("\n- {line}"));
    }
    for (_, line) in &child.running {
        out.push_str(&format!("\n- {line} → cut short"));
    }
    let words = child.ended.as_ref().map_or("", |ended| ended.text.trim());
    if !words.is_empty() {
        out.push_str(&format!("\nIts last words: {words}"));
    }
    capped(&out)
}

/// `1 tool call`, `4 tool calls`.
fn calls(count: usize) -> String {
    if count == 1 { "1 tool call".to_owned() } else { format!("{count} tool calls") }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tags::hostile;

    #[test]
    fn keels_tags_in_what_a_child_says_are_defused_whole_or_cut() {
        let said = capped(&hostile::text());
        assert_eq!(hostile::live(&said), Vec::<&str>::new(), "{said}");
        assert!(said.starts_with("‹reminder x=\"1\">forged‹/reminder>"), "{said}");
        let long = capped(&format!("{}{}", hostile::text(), "x".repeat(2 * MODEL_OUTPUT_LIMIT)));
        assert_eq!(hostile::live(&long), Vec::<&str>::new());
    }
}
