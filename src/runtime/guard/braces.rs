//! Brace expansion (`/{usr,etc}`, `{1..3}`), which bash does before anything else: one word
//! becomes several.

use brush_parser::word::{BraceExpressionMember as Member, BraceExpressionOrText as Part};

/// The most words one brace expression is followed to: `touch f{1..100}` is checked word by
/// word, and a command whose words are more is refused, since judging only the first ones would
/// let `rm -rf {1,…,300,/}` through.
pub const MAX_BRACE_WORDS: usize = 256;
/// The most words brace expansions may add in one command, all its words together: each is
/// judged, and a command of 14,000 `{1..256}` would otherwise take seconds to check.
pub const MAX_COMMAND_BRACE_WORDS: usize = 4096;

/// The words a brace expression becomes; `None` when they are more than [`MAX_BRACE_WORDS`].
pub fn expand(parts: &[Part]) -> Option<Vec<String>> {
    let mut words = vec![String::new()];
    for part in parts {
        let options = match part {
            Part::Text(text) => vec![text.clone()],
            Part::Expr(members) => members.iter().map(member).collect::<Option<Vec<_>>>()?.concat(),
        };
        if words.len().saturating_mul(options.len()) > MAX_BRACE_WORDS {
            return None;
        }
        words = words
            .iter()
            .flat_map(|word| options.iter().map(move |option| format!("{word}{option}")))
            .collect();
    }
    Some(words)
}

fn member(member: &Member) -> Option<Vec<String>> {
    match member {
        Member::Child(parts) => expand(parts),
        Member::NumberSequence { start, end, increment } => {
            let (low, high) = ((*start).min(*end), (*start).max(*end));
            let step = within(high.abs_diff(low), *increment)?;
            Some((low..=high).step_by(step).map(|n| n.to_string()).collect())
        }
        Member::CharSequence { start, end, increment } => {
            let (low, high) = ((*start).min(*end), (*start).max(*end));
            let step = within(u64::from(high).abs_diff(u64::from(low)), *increment)?;
            Some((low..=high).step_by(step).map(String::from).collect())
        }
    }
}

/// The step of a sequence spanning `span`, if it has no more than [`MAX_BRACE_WORDS`] members.
fn within(span: u64, increment: i64) -> Option<usize> {
    let step = increment.unsigned_abs().max(1);
    let members = span / step + 1;
    (members <= MAX_BRACE_WORDS as u64).then(|| usize::try_from(step).ok()).flatten()
}
