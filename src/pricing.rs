//! What a model's tokens cost, for the status bar and `keel -p`'s closing line: a small table of
//! list prices, in US dollars per million tokens, for the models keel is most often pointed at,
//! which the config files override or extend (`[prices."MODEL"]`, see `config`). A model in
//! neither has no price, and keel shows no cost rather than a guess.
//!
//! Prices change; the table is a convenience, not a bill. A dated model name
//! (`claude-sonnet-4-5-20250929`, `gpt-4.1-2025-04-14`) or a `-latest` alias takes the price of
//! the name it extends; nothing else is matched loosely, so `gpt-4.1-mini` is never priced as
//! `gpt-4.1`.

use crate::message::Usage;
use serde::Deserialize;
use std::collections::BTreeMap;
use thiserror::Error;

/// Tokens a price is given for.
const PER_TOKENS: f64 = 1_000_000.0;

/// One model's price, in US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    /// Prompt tokens neither read from nor written to the cache.
    pub input: f64,
    pub output: f64,
    /// Prompt tokens read from the cache; the input price when not given.
    #[serde(default)]
    pub cache_read: Option<f64>,
    /// Prompt tokens written to the cache (Anthropic); the input price when not given.
    #[serde(default)]
    pub cache_write: Option<f64>,
}

/// A price that cannot be one.
#[derive(Debug, Clone, PartialEq, Error)]
#[error("the price of `{model}` must be a finite number of dollars, 0 or more, in every field")]
pub struct BadPrice {
    pub model: String,
}

impl Price {
    const fn of(input: f64, output: f64, cache_read: f64, cache_write: f64) -> Self {
        Self { input, output, cache_read: Some(cache_read), cache_write: Some(cache_write) }
    }

    /// What `usage` cost, in US dollars. Usage counts cached prompt tokens within its input.
    pub fn cost(&self, usage: &Usage) -> f64 {
        let cached = usage.cache_read_tokens.saturating_add(usage.cache_write_tokens);
        let fresh = usage.input_tokens.saturating_sub(cached);
        let dollars = |tokens: u64, price: f64| tokens as f64 * price / PER_TOKENS;
        dollars(fresh, self.input)
            + dollars(usage.cache_read_tokens, self.cache_read.unwrap_or(self.input))
            + dollars(usage.cache_write_tokens, self.cache_write.unwrap_or(self.input))
            + dollars(usage.output_tokens, self.output)
    }

    fn is_valid(&self) -> bool {
        [Some(self.input), Some(self.output), self.cache_read, self.cache_write]
            .into_iter()
            .flatten()
            .all(|price| price.is_finite() && price >= 0.0)
    }
}

/// `$0.42`, `$12.35`, `$1234`: an amount of US dollars as the status bar and `-p` show it.
pub fn dollars(amount: f64) -> String {
    const WHOLE_DOLLARS_FROM: f64 = 1_000.0;
    if amount >= WHOLE_DOLLARS_FROM { format!("${amount:.0}") } else { format!("${amount:.2}") }
}

/// List prices known to keel, by model name (as of late 2025).
const BUILT_IN: &[(&str, Price)] = &[
    ("claude-opus-4-5", Price::of(5.0, 25.0, 0.5, 6.25)),
    ("claude-opus-4-1", Price::of(15.0, 75.0, 1.5, 18.75)),
    ("claude-opus-4", Price::of(15.0, 75.0, 1.5, 18.75)),
    ("claude-sonnet-4-5", Price::of(3.0, 15.0, 0.3, 3.75)),
    ("claude-sonnet-4", Price::of(3.0, 15.0, 0.3, 3.75)),
    ("claude-haiku-4-5", Price::of(1.0, 5.0, 0.1, 1.25)),
    ("claude-3-5-haiku", Price::of(0.8, 4.0, 0.08, 1.0)),
    ("gpt-5", Price::of(1.25, 10.0, 0.125, 1.25)),
    ("gpt-5-mini", Price::of(0.25, 2.0, 0.025, 0.25)),
    ("gpt-4.1", Price::of(2.0, 8.0, 0.5, 2.0)),
    ("gpt-4.1-mini", Price::of(0.4, 1.6, 0.1, 0.4)),
    ("gpt-4.1-nano", Price::of(0.1, 0.4, 0.025, 0.1)),
    ("gpt-4o", Price::of(2.5, 10.0, 1.25, 2.5)),
    ("gpt-4o-mini", Price::of(0.15, 0.6, 0.075, 0.15)),
    ("o3", Price::of(2.0, 8.0, 0.5, 2.0)),
    ("o4-mini", Price::of(1.1, 4.4, 0.275, 1.1)),
    ("deepseek-chat", Price::of(0.28, 0.42, 0.028, 0.28)),
    ("deepseek-reasoner", Price::of(0.28, 0.42, 0.028, 0.28)),
];

/// The prices in force: the config files' over the built-in table.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Prices {
    configured: BTreeMap<String, Price>,
}

impl Prices {
    /// The built-in table with `configured` over it; every configured price must be valid.
    pub fn new(configured: BTreeMap<String, Price>) -> Result<Self, BadPrice> {
        if let Some((model, _)) = configured.iter().find(|(_, price)| !price.is_valid()) {
            return Err(BadPrice { model: model.clone() });
        }
        Ok(Self { configured })
    }

    /// `model`'s price: configured for that very name, else the built-in one for the name or the
    /// name it dates (`claude-sonnet-4-5-20250929`); `None` when neither knows it.
    pub fn of(&self, model: &str) -> Option<Price> {
        if let Some(price) = self.configured.get(model) {
            return Some(*price);
        }
        BUILT_IN
            .iter()
            .filter(|(name, _)| model.strip_prefix(name).is_some_and(is_version_suffix))
            .max_by_key(|(name, _)| name.len())
            .map(|(_, price)| *price)
    }
}

/// `""`, `-latest`, `-20250929` or `-2025-04-14`: the same model, pinned or not.
fn is_version_suffix(suffix: &str) -> bool {
    let Some(rest) = suffix.strip_prefix('-') else {
        return suffix.is_empty();
    };
    let digits =
        |part: &str, len: usize| part.len() == len && part.bytes().all(|b| b.is_ascii_digit());
    match rest.split('-').collect::<Vec<_>>().as_slice() {
        ["latest"] => true,
        [date] => digits(date, 8),
        [year, month, day] => digits(year, 4) && digits(month, 2) && digits(day, 2),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn costs_read_at_a_glance() {
        assert_eq!(dollars(0.0669), "$0.07");
        assert_eq!(dollars(12.345), "$12.35");
        assert_eq!(dollars(1234.5), "$1234");
    }

    fn usage(input: u64, output: u64, read: u64, write: u64) -> Usage {
        Usage {
            input_tokens: input,
            output_tokens: output,
            cache_read_tokens: read,
            cache_write_tokens: write,
        }
    }

    #[test]
    fn dated_names_take_the_price_of_the_name_they_pin_and_nothing_else_is_loose() {
        let prices = Prices::default();
        let sonnet = prices.of("claude-sonnet-4-5");
        assert!(sonnet.is_some());
        assert_eq!(prices.of("claude-sonnet-4-5-20250929"), sonnet);
        assert_eq!(prices.of("gpt-4.1-2025-04-14"), prices.of("gpt-4.1"));
        assert_eq!(prices.of("claude-3-5-haiku-latest"), prices.of("claude-3-5-haiku"));
        assert_ne!(prices.of("gpt-4.1-mini"), prices.of("gpt-4.1"));
        assert_eq!(prices.of("claude-opus-4-1-20250805"), prices.of("claude-opus-4-1"));
        for unknown in ["claude-opus-4-7", "gpt-4.1-foo", "llama3", "", "gpt-4.1-2025-4-14"] {
            assert_eq!(prices.of(unknown), None, "{unknown}");
        }
    }

    #[test]
    fn the_cost_prices_fresh_cached_and_written_prompt_tokens_apart() {
        let price = Price::of(3.0, 15.0, 0.3, 3.75);
        // 1M prompt tokens: 600k read from the cache, 100k written to it, 300k fresh.
        let cost = price.cost(&usage(1_000_000, 100_000, 600_000, 100_000));
        let expected = 0.3 * 3.0 + 0.6 * 0.3 + 0.1 * 3.75 + 0.1 * 15.0;
        assert!((cost - expected).abs() < 1e-9, "{cost} != {expected}");
        let plain = Price { cache_read: None, cache_write: None, ..price };
        let cost = plain.cost(&usage(1_000_000, 0, 500_000, 0));
        assert!((cost - 3.0).abs() < 1e-9, "no cache price: the input price, {cost}");
    }

    #[test]
    fn configured_prices_win_and_bad_ones_are_refused() {
        let mine = Price { input: 1.0, output: 2.0, cache_read: None, cache_write: None };
        let prices = Prices::new([("gpt-4.1".to_owned(), mine)].into()).unwrap();
        assert_eq!(prices.of("gpt-4.1"), Some(mine));
        for bad in [-1.0, f64::NAN, f64::INFINITY] {
            let price = Price { output: bad, ..mine };
            let error = Prices::new([("m".to_owned(), price)].into()).unwrap_err();
            assert_eq!(error.model, "m");
        }
    }
}
