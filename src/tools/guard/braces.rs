//! Brace expansion (`/{usr,etc}`, `{1..3}`), which bash does before anything else: one word
//! becomes several.

use super::words::MAX_ALTERNATIVES;
use brush_parser::word::{BraceExpressionMember as Member, BraceExpressionOrText as Part};

/// The words a brace expression becomes, at most [`MAX_ALTERNATIVES`] of them.
pub fn expand(parts: &[Part]) -> Vec<String> {
    let mut words = vec![String::new()];
    for part in parts {
        let options = match part {
            Part::Text(text) => vec![text.clone()],
            Part::Expr(members) => members.iter().flat_map(member).collect(),
        };
        let mut next = Vec::new();
        for word in &words {
            for option in &options {
                if next.len() < MAX_ALTERNATIVES {
                    next.push(format!("{word}{option}"));
                }
            }
        }
        words = next;
    }
    words
}

fn member(member: &Member) -> Vec<String> {
    match member {
        Member::Child(parts) => expand(parts),
        Member::NumberSequence { start, end, increment } => {
            let step = usize::try_from(increment.unsigned_abs()).unwrap_or(1).max(1);
            let (low, high) = ((*start).min(*end), (*start).max(*end));
            (low..=high).step_by(step).take(MAX_ALTERNATIVES).map(|n| n.to_string()).collect()
        }
        Member::CharSequence { start, end, increment } => {
            let step = usize::try_from(increment.unsigned_abs()).unwrap_or(1).max(1);
            let (low, high) = ((*start).min(*end), (*start).max(*end));
            (low..=high).step_by(step).take(MAX_ALTERNATIVES).map(String::from).collect()
        }
    }
}
