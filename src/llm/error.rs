//! Why a request to the model failed, in words that say what to do about it.

use thiserror::Error;

/// A failed model request. `Display` is one line a person can act on.
#[derive(Debug, Error)]
pub enum LlmError {
    #[error("{0}")]
    Other(String),
}
