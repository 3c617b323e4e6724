//! The model's context window, and how much of it the next request takes (docs/architecture.md,
//! "Long sessions").
//!
//! [`ContextMeter`] estimates a request before it is sent: the input tokens the server reported
//! for the last request plus what the history gained since, converted at the server's own rate
//! of tokens per byte (a quarter until it has reported). The window is the configured one (or
//! the figure for the model's family) until a server's "too long" answer states a smaller one.
//! Keel compacts when the estimate passes `compact_at` of the window less `max_tokens`.
//! `mask` and `summary` are the two ways of compacting, cheapest first.

use crate::agent::snapshot::ContextUse;
use crate::llm::Overflow;
use crate::message::{History, Message};
use std::io::Write;

/// Tokens per byte until a server has counted: a quarter, the usual rate for English and code.
const DEFAULT_TOKENS_PER_BYTE: f64 = 0.25;
/// The rates a server's counts may teach: outside them, its figures are not believed.
const TOKENS_PER_BYTE_RANGE: (f64, f64) = (0.1, 1.0);
/// A refusal that states no numbers: the window is taken to be this share of the refused
/// request, so the next one is smaller.
const UNSTATED_LIMIT_SHARE: f64 = 0.9;

/// Where the window figure came from, for messages that say what to raise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WindowSource {
    /// `--context-window` or `context_window`.
    Configured,
    /// keel's figure for the model's family.
    Assumed,
    /// A server's "too long" answer.
    Server,
}

/// What the server counted for a request, and the history it counted.
#[derive(Debug, Clone, Copy)]
struct Counted {
    tokens: u64,
    history_len: usize,
    history_bytes: u64,
}

/// The window and the estimate of what the next request takes of it.
#[derive(Debug, Clone)]
pub struct ContextMeter {
    window: u64,
    source: WindowSource,
    compact_at: f64,
    max_tokens: u64,
    /// The bytes every request carries besides the history: system prompt and tool schemas.
    overhead: u64,
    tokens_per_byte: f64,
    /// The bytes of the first `counted` messages of the history.
    counted: usize,
    bytes: u64,
    /// The newest request the server reported on.
    reported: Option<Counted>,
    /// The request on its way: the history length and bytes it carries.
    in_flight: Option<(usize, u64)>,
}

impl ContextMeter {
    pub fn new(window: u32, source: WindowSource, compact_at: f64, max_tokens: u32) -> Self {
        Self {
            window: u64::from(window),
            source,
            compact_at,
            max_tokens: u64::from(max_tokens),
            overhead: 0,
            tokens_per_byte: DEFAULT_TOKENS_PER_BYTE,
            counted: 0,
            bytes: 0,
            reported: None,
            in_flight: None,
        }
    }

    /// Counts `bytes` of system prompt and tool schemas into every request.
    pub fn with_overhead(mut self, bytes: usize) -> Self {
        self.overhead = bytes as u64;
        self
    }

    /// The system prompt and tool schemas changed (an MCP server's tools arrived): what the
    /// provider reported no longer holds.
    pub fn set_overhead(&mut self, bytes: usize) {
        if self.overhead != bytes as u64 {
            self.overhead = bytes as u64;
            self.reported = None;
        }
    }

    pub fn window(&self) -> u64 {
        self.window
    }

    pub fn source(&self) -> WindowSource {
        self.source
    }

    pub fn max_tokens(&self) -> u64 {
        self.max_tokens
    }

    /// `tokens` of the window in use, as the status bar shows it.
    pub fn usage(&self, tokens: u64) -> ContextUse {
        ContextUse { tokens, window: self.window }
    }

    /// The tokens the prompt may take at most: the window less what the answer may take.
    pub fn room(&self) -> u64 {
        self.window.saturating_sub(self.max_tokens)
    }

    /// The estimate above which keel compacts.
    pub fn threshold(&self) -> u64 {
        (self.room() as f64 * self.compact_at) as u64
    }

    pub fn tokens_per_byte(&self) -> f64 {
        self.tokens_per_byte
    }

    /// A window stated by a server in an earlier run of this session.
    pub fn learn_window(&mut self, window: u64) {
        if window < self.window {
            self.window = window;
            self.source = WindowSource::Server;
        }
    }

    /// The estimate, in tokens, of a request carrying `history`.
    pub fn estimate(&mut self, history: &History) -> u64 {
        self.count(history);
        match self.reported {
            Some(counted) if counted.history_len <= history.len() => {
                let added = self.bytes.saturating_sub(counted.history_bytes);
                counted.tokens + self.tokens(added)
            }
            _ => self.tokens(self.overhead + self.bytes),
        }
    }

    /// The estimate of a request carrying `messages`, counted afresh (for a history not yet
    /// the agent's: the outcome of a compaction being weighed).
    pub fn estimate_of<'a>(&self, messages: impl IntoIterator<Item = &'a Message>) -> u64 {
        let bytes: u64 = messages.into_iter().map(message_bytes).sum();
        self.tokens(self.overhead + bytes)
    }

    /// The bytes a request carrying `messages` has, as keel counts them.
    pub fn bytes_of<'a>(&self, messages: impl IntoIterator<Item = &'a Message>) -> u64 {
        self.overhead + messages.into_iter().map(message_bytes).sum::<u64>()
    }

    /// A request carrying `history` is on its way.
    pub fn sent(&mut self, history: &History) {
        self.count(history);
        self.in_flight = Some((history.len(), self.bytes));
    }

    /// The server counted `input_tokens` for the request on its way (0: it did not say).
    pub fn reported(&mut self, input_tokens: u64) {
        let Some((history_len, history_bytes)) = self.in_flight.take() else { return };
        if input_tokens == 0 {
            return;
        }
        self.calibrate(input_tokens, self.overhead + history_bytes);
        self.reported = Some(Counted { tokens: input_tokens, history_len, history_bytes });
    }

    /// The server refused the request on its way as too long: learns what it stated (its
    /// window, its count of the prompt) or, when it stated nothing, takes the window to be
    /// smaller than that request. Returns the refused request's size in tokens, as now known.
    pub fn refused(&mut self, overflow: Overflow) -> u64 {
        let (_, history_bytes) = self.in_flight.take().unwrap_or((0, self.bytes));
        let bytes = self.overhead + history_bytes;
        if let Some(prompt) = overflow.prompt {
            self.calibrate(prompt, bytes);
        }
        let size = overflow.prompt.unwrap_or_else(|| self.tokens(bytes));
        let limit = overflow
            .limit
            .unwrap_or_else(|| (size as f64 * UNSTATED_LIMIT_SHARE) as u64 + self.max_tokens);
        if limit < self.window {
            self.window = limit;
            self.source = WindowSource::Server;
        }
        self.reported = None;
        size
    }

    /// The history was rewritten (compacted, cleared, replaced): count it again from scratch.
    pub fn history_changed(&mut self) {
        self.counted = 0;
        self.bytes = 0;
        self.reported = None;
        self.in_flight = None;
    }

    /// The tokens `bytes` of text come to, as keel estimates them.
    pub fn tokens(&self, bytes: u64) -> u64 {
        (bytes as f64 * self.tokens_per_byte).ceil() as u64
    }

    fn calibrate(&mut self, tokens: u64, bytes: u64) {
        if bytes > 0 {
            let (low, high) = TOKENS_PER_BYTE_RANGE;
            self.tokens_per_byte = (tokens as f64 / bytes as f64).clamp(low, high);
        }
    }

    /// Counts the messages added since the last count (all of them, if the history shrank).
    fn count(&mut self, history: &History) {
        if history.len() < self.counted {
            self.history_changed();
        }
        for message in history.skip(self.counted).iter() {
            self.bytes += message_bytes(message);
        }
        self.counted = history.len();
    }
}

/// A message's size in keel's own JSON form, near enough to what either protocol sends.
pub fn message_bytes(message: &Message) -> u64 {
    let mut counter = ByteCounter(0);
    // Writing to a counter cannot fail, and a message always serialises.
    let _ = serde_json::to_writer(&mut counter, message);
    counter.0
}

/// Counts what is written to it.
struct ByteCounter(u64);

impl Write for ByteCounter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len() as u64;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn history(texts: &[&str]) -> History {
        texts.iter().map(|text| Message::user_text(*text)).collect()
    }

    #[test]
    fn before_any_report_it_is_a_quarter_of_the_bytes() {
        let mut meter =
            ContextMeter::new(1000, WindowSource::Configured, 0.8, 200).with_overhead(400);
        let history = history(&["x"]);
        let bytes = 400 + message_bytes(&history[0]);
        assert_eq!(meter.estimate(&history), bytes.div_ceil(4));
        assert_eq!((meter.room(), meter.threshold()), (800, 640));
    }

    #[test]
    fn tool_schemas_that_arrive_later_count_at_once() {
        let mut meter = ContextMeter::new(100_000, WindowSource::Assumed, 0.8, 0);
        let history = history(&["x"]);
        meter.sent(&history);
        meter.reported(10);
        assert_eq!(meter.estimate(&history), 10);
        meter.set_overhead(40_000);
        // The report no longer holds: the request is counted afresh, schemas and all.
        let afresh = meter.estimate_of(history.iter());
        assert_eq!(meter.estimate(&history), afresh);
        assert!(afresh >= 4_000, "an MCP server's schemas count: {afresh}");
    }

    #[test]
    fn after_a_report_it_adds_what_came_since_at_the_servers_rate() {
        let mut meter = ContextMeter::new(100_000, WindowSource::Assumed, 0.8, 0);
        let mut history = history(&[&"a".repeat(1000)]);
        meter.sent(&history);
        let sent = meter.bytes_of(history.iter());
        meter.reported(sent / 2);
        assert!((meter.tokens_per_byte() - 0.5).abs() < 0.01);
        history.push_back(Message::user_text("b".repeat(100)));
        let added = message_bytes(&history[1]);
        assert_eq!(meter.estimate(&history), sent / 2 + (added as f64 * 0.5).ceil() as u64);
    }

    #[test]
    fn a_refusal_teaches_the_window_and_the_rate() {
        let mut meter = ContextMeter::new(200_000, WindowSource::Assumed, 0.8, 8192);
        let history = history(&[&"a".repeat(40_000)]);
        meter.sent(&history);
        let size = meter.refused(Overflow { limit: Some(24_000), prompt: Some(30_000) });
        assert_eq!((size, meter.window(), meter.source()), (30_000, 24_000, WindowSource::Server));
        assert!(meter.tokens_per_byte() > 0.7);
        // A larger stated limit is not believed over a smaller known one.
        meter.sent(&history);
        meter.refused(Overflow { limit: Some(1_000_000), prompt: None });
        assert_eq!(meter.window(), 24_000);
    }

    #[test]
    fn a_refusal_that_states_nothing_shrinks_the_window_below_the_request() {
        let mut meter = ContextMeter::new(200_000, WindowSource::Assumed, 0.8, 1000);
        let history = history(&[&"a".repeat(40_000)]);
        meter.sent(&history);
        let size = meter.refused(Overflow::default());
        assert_eq!(meter.window(), (size as f64 * UNSTATED_LIMIT_SHARE) as u64 + 1000);
        assert!(meter.room() < size);
    }

    #[test]
    fn rates_no_tokenizer_has_are_not_learned() {
        let mut meter = ContextMeter::new(1000, WindowSource::Configured, 0.8, 0);
        let history = history(&[&"a".repeat(4000)]);
        meter.sent(&history);
        meter.reported(1);
        assert_eq!(meter.tokens_per_byte(), TOKENS_PER_BYTE_RANGE.0);
        meter.sent(&history);
        meter.reported(u64::MAX);
        assert_eq!(meter.tokens_per_byte(), TOKENS_PER_BYTE_RANGE.1);
    }
}
