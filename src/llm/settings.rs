//! What every HTTP provider is configured with: where, which key and model, and how patient to be.

use super::retry::RetryPolicy;
use std::fmt;
use std::time::Duration;

/// Settings every HTTP provider shares. `Debug` leaves the key out, so settings can be logged.
#[derive(Clone, PartialEq)]
pub struct HttpSettings {
    /// Base URL: for Anthropic without `/v1`, for OpenAI-compatible servers with it.
    pub base_url: String,
    pub api_key: String,
    pub model: String,
    pub connect_timeout: Duration,
    /// How long a stream may go without a byte before it counts as cut.
    pub idle_timeout: Duration,
    /// How long a stream may go without an event that carries the answer (keep-alives and
    /// trickled bytes do not count) before it counts as stalled.
    pub stall_timeout: Duration,
    pub retry: RetryPolicy,
}

impl fmt::Debug for HttpSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpSettings")
            .field("base_url", &self.base_url)
            .field("api_key", &"<hidden>")
            .field("model", &self.model)
            .field("connect_timeout", &self.connect_timeout)
            .field("idle_timeout", &self.idle_timeout)
            .field("stall_timeout", &self.stall_timeout)
            .field("retry", &self.retry)
            .finish()
    }
}
