//! Plan mode in words: with a plan waiting for approval, a short "go ahead", "yes" or
//! "approve" typed as a prompt is taken as `/approve` once the person confirms it with one key
//! (the composer's border asks), rather than sent to the model as more planning.

/// The approvals recognised, as typed once punctuation and case are set aside.
const APPROVALS: &[&str] = &[
    "yes",
    "y",
    "yep",
    "yeah",
    "sure",
    "ok",
    "okay",
    "approve",
    "approved",
    "i approve",
    "go",
    "go ahead",
    "yes go ahead",
    "ok go ahead",
    "go for it",
    "proceed",
    "please proceed",
    "yes please",
    "lgtm",
    "looks good",
    "sounds good",
    "ship it",
    "start",
    "lets go",
    "carry on",
];

/// Whether `text` is one of the short approvals; a slash command (`/approve`) or a `!command`
/// is never words.
pub fn is_approval(text: &str) -> bool {
    if text.trim_start().starts_with(['/', '!']) {
        return false;
    }
    let words: Vec<String> = text
        .split_whitespace()
        .map(|word| {
            word.chars()
                .filter(|c| c.is_alphanumeric())
                .flat_map(char::to_lowercase)
                .collect::<String>()
        })
        .filter(|word| !word.is_empty())
        .collect();
    let said = words.join(" ");
    APPROVALS.contains(&said.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_approvals_are_known_and_requests_are_not() {
        for said in ["go ahead", "Yes!", "approve", "  OK, go ahead. ", "LGTM", "let's go"] {
            assert!(is_approval(said), "{said}");
        }
        for said in [
            "yes but rename it first",
            "go ahead and delete the tests",
            "no",
            "",
            "/approve",
            "!yes",
        ] {
            assert!(!is_approval(said), "{said}");
        }
    }
}
