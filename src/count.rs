//! Counts as every part of keel writes them for a person to read: a token count in a few
//! characters (`950`, `12.3k`, `4.1M`), the same in the status bar and in the conversation's notes,
//! and a count whole with its thousands grouped (`200,000`).

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

/// A count whole, its thousands grouped: `98,304`.
pub fn grouped(count: u64) -> String {
    let digits = count.to_string();
    let mut out = String::new();
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
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

    #[test]
    fn whole_counts_group_their_thousands() {
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(98_304), "98,304");
        assert_eq!(grouped(1_000_000), "1,000,000");
    }
}
