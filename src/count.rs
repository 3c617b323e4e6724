//! Counts as every part of keel writes them for a person to read: a token count in a few
//! characters (`950`, `12.3k`, `4.1M`), the same in the status bar and in the conversation's notes.

const THOUSAND: u64 = 1_000;
const MILLION: u64 = 1_000_000;

/// A count in a few characters: `950`, `12.3k`, `4.1M`.
pub fn compact(count: u64) -> String {
    match count {
        n if n < THOUSAND => n.to_string(),
        n if n < MILLION => format!("{:.1}k", n as f64 / THOUSAND as f64),
        n => format!("{:.1}M", n as f64 / MILLION as f64),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_read_in_a_few_characters() {
        assert_eq!(compact(950), "950");
        assert_eq!(compact(35_300), "35.3k");
        assert_eq!(compact(4_100_000), "4.1M");
    }
}
