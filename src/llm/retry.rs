//! Retrying failed requests with exponential backoff and jitter.
//!
//! A request is retried when [`LlmError::is_retryable`] says so: connect errors, 429 and the 5xx
//! statuses servers use for "busy", and streams that broke, stalled or were malformed. Before each
//! retry the caller hears a [`StreamEvent::Retrying`] so the UI can count down and drop the partial
//! answer. The wait doubles from `initial_delay` up to `max_delay`, minus up to half of it at random
//! so that many clients do not come back in step; a server's `retry-after` is honoured as given,
//! unless it asks for more than [`MAX_RETRY_AFTER`], in which case waiting in the terminal makes
//! no sense and the error is returned at once.

use super::error::LlmError;
use super::types::StreamEvent;
use std::future::Future;
use std::time::Duration;
use tokio::sync::mpsc::UnboundedSender;

/// The longest `retry-after` keel waits out; beyond it the request fails with the server's words.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);
/// The share of a backoff delay that jitter may take off.
const JITTER: f64 = 0.5;
/// Doublings past this would overflow long before they mattered; `max_delay` caps far sooner.
const MAX_DOUBLINGS: u32 = 20;

/// How often and how patiently to retry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    pub max_retries: u32,
    pub initial_delay: Duration,
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_retries: 4,
            initial_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(30),
        }
    }
}

impl RetryPolicy {
    /// The wait before retry number `retry` (from 1): `initial_delay` doubled per retry, capped at
    /// `max_delay`, less a random share of up to a half.
    pub fn backoff(&self, retry: u32) -> Duration {
        let doublings = retry.saturating_sub(1).min(MAX_DOUBLINGS);
        let base = self.initial_delay.saturating_mul(1 << doublings).min(self.max_delay);
        base.saturating_sub(base.mul_f64(fastrand::f64() * JITTER))
    }

    /// The wait before retry number `retry`, given what the server asked for: never shorter than
    /// its `retry-after`.
    pub fn delay(&self, retry: u32, retry_after: Option<Duration>) -> Duration {
        let backoff = self.backoff(retry);
        retry_after.map_or(backoff, |after| after.max(backoff))
    }
}

/// Runs `attempt` until it succeeds, fails for good, or the retries are spent. Retries are
/// announced on `events` before the wait. When the last allowed attempt fails with a retryable
/// error, the result is [`LlmError::RetriesExhausted`] holding that error.
pub async fn run<T, F, Fut>(
    policy: &RetryPolicy,
    events: &UnboundedSender<StreamEvent>,
    mut attempt: F,
) -> Result<T, LlmError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, LlmError>>,
{
    let mut retries = 0;
    loop {
        let error = match attempt().await {
            Ok(value) => return Ok(value),
            Err(error) => error,
        };
        let retry_after = error.retry_after();
        let worth_retrying =
            error.is_retryable() && retry_after.is_none_or(|after| after <= MAX_RETRY_AFTER);
        if !worth_retrying {
            return Err(error);
        }
        if retries >= policy.max_retries {
            return Err(if retries == 0 {
                error
            } else {
                LlmError::RetriesExhausted { attempts: retries + 1, last: Box::new(error) }
            });
        }
        retries += 1;
        let delay = policy.delay(retries, retry_after);
        // The receiver may be gone (headless mode shutting down); the retry goes on regardless.
        let _ =
            events.send(StreamEvent::Retrying { attempt: retries, delay, reason: error.reason() });
        tokio::time::sleep(delay).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_with_jitter_and_is_capped() {
        let policy = RetryPolicy {
            max_retries: 10,
            initial_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(1000),
        };
        for _ in 0..100 {
            let first = policy.backoff(1);
            assert!(first >= Duration::from_millis(50) && first <= Duration::from_millis(100));
            let third = policy.backoff(3);
            assert!(third >= Duration::from_millis(200) && third <= Duration::from_millis(400));
            let late = policy.backoff(40);
            assert!(late >= Duration::from_millis(500) && late <= Duration::from_millis(1000));
        }
    }

    #[test]
    fn retry_after_is_a_floor() {
        let policy = RetryPolicy {
            max_retries: 1,
            initial_delay: Duration::from_millis(1),
            max_delay: Duration::from_millis(2),
        };
        assert_eq!(policy.delay(1, Some(Duration::from_secs(3))), Duration::from_secs(3));
        assert!(policy.delay(1, None) <= Duration::from_millis(1));
    }

    #[tokio::test]
    async fn gives_up_after_the_last_retry_and_names_the_count() {
        let policy = RetryPolicy {
            max_retries: 2,
            initial_delay: Duration::from_millis(1),
            max_delay: Duration::from_millis(1),
        };
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let mut calls = 0;
        let result: Result<(), _> = run(&policy, &tx, || {
            calls += 1;
            async {
                Err(LlmError::Server {
                    status: 503,
                    url: "http://x".into(),
                    message: "busy".into(),
                    retry_after: None,
                })
            }
        })
        .await;
        assert_eq!(calls, 3);
        let error = result.unwrap_err();
        assert!(matches!(error, LlmError::RetriesExhausted { attempts: 3, .. }));
        assert!(matches!(rx.try_recv(), Ok(StreamEvent::Retrying { attempt: 1, .. })));
        assert!(matches!(rx.try_recv(), Ok(StreamEvent::Retrying { attempt: 2, .. })));
        assert!(rx.try_recv().is_err());
    }

    #[tokio::test]
    async fn a_long_retry_after_fails_at_once() {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let result: Result<(), _> = run(&RetryPolicy::default(), &tx, || async {
            Err(LlmError::Server {
                status: 429,
                url: "http://x".into(),
                message: "quota".into(),
                retry_after: Some(Duration::from_secs(3600)),
            })
        })
        .await;
        let error = result.unwrap_err();
        assert!(error.to_string().contains("retry after 3600s"), "{error}");
        assert!(rx.try_recv().is_err());
    }
}
