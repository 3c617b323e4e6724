//! Why a request to the model failed, in words that say what to do about it.
//!
//! Every [`LlmError`] displays as one line naming the server, what went wrong and, where there is
//! one, the fix (the variable to set, the flag to check). Server bodies are summarised, never
//! dumped: an HTML error page becomes its title, a long text its first line. [`StreamError`] is
//! the narrower failure of reading one event stream, before the provider adds the URL to it.

use super::overflow::Overflow;
use std::time::Duration;
use thiserror::Error;

/// The longest summary of a server's body that goes into an error message, in characters.
const MAX_SUMMARY_CHARS: usize = 200;

/// A failed model request. `Display` is one line a person can act on.
#[derive(Debug, Error)]
pub enum LlmError {
    /// The configured base URL is not a URL.
    #[error("invalid base URL {url:?}: {detail} — check --base-url or {base_var}")]
    InvalidBaseUrl { url: String, detail: String, base_var: &'static str },
    /// The HTTP client could not be set up (TLS roots, proxy settings).
    #[error("could not set up the HTTP client: {0}")]
    Client(String),
    /// 401 or 403: the key is missing, wrong or not allowed.
    #[error("{} ({status} from {url}): {message} — set {key_var} to a valid key", auth_label(*status))]
    Auth { status: u16, url: String, message: String, key_var: &'static str },
    /// 404: usually a wrong model name or base URL.
    #[error(
        "not found (404 from {url}): {message} — check the model name {model:?} (--model) and the \
         base URL (--base-url or {base_var}){hint}"
    )]
    NotFound {
        url: String,
        message: String,
        model: String,
        base_var: &'static str,
        /// Extra advice, starting with "; " when present.
        hint: String,
    },
    /// The server said the prompt is too long for the model (in any status): the agent makes
    /// the request smaller before it sends it again, never the same one.
    #[error("the prompt is too long for the model ({status} from {url}): {message}")]
    ContextOverflow { status: u16, url: String, message: String, overflow: Overflow },
    /// A status that retrying will not fix (400, 413, 422, …): the server's own words.
    #[error("request rejected ({status} from {url}): {message}")]
    Rejected { status: u16, url: String, message: String },
    /// A status worth retrying: 429, 500, 502, 503, 504, 529.
    #[error("{} ({status} from {url}): {message}{}", status_label(*status), retry_after_note(*retry_after))]
    Server {
        status: u16,
        url: String,
        message: String,
        /// How long the server asked us to wait (`retry-after`), if it said.
        retry_after: Option<Duration>,
    },
    /// Nothing answered at the URL.
    #[error(
        "could not connect to {url}: {detail} — is the server running? check --base-url or {base_var}"
    )]
    Connect { url: String, detail: String, base_var: &'static str },
    /// The request failed on the way, after connecting.
    #[error("request to {url} failed: {detail}")]
    Transport { url: String, detail: String },
    /// The answer started but its stream failed.
    #[error("the answer from {url} failed: {cause}")]
    Stream { url: String, cause: StreamError },
    /// The server answered 200 with something other than an event stream.
    #[error("unexpected answer from {url}: {detail}")]
    NotAStream { url: String, detail: String },
    /// Every attempt failed; `last` says how the final one did.
    #[error("gave up after {attempts} attempts: {last}")]
    RetriesExhausted { attempts: u32, last: Box<LlmError> },
    /// Anything else (used by providers that do not speak HTTP).
    #[error("{0}")]
    Other(String),
}

/// Why one event stream could not be read to its end.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum StreamError {
    /// No bytes arrived for the idle timeout.
    #[error("no data for {}s (idle timeout); the server stalled", .0.as_secs_f32())]
    Idle(Duration),
    /// The connection broke while the answer streamed.
    #[error("the connection broke: {0}")]
    Transport(String),
    /// The stream ended before the protocol's end marker.
    #[error("the stream ended before the answer was complete (no {expected})")]
    Cut { expected: &'static str },
    /// A 200 whose body held no event at all.
    #[error("the server answered 200 with an empty body")]
    Empty,
    /// A `data:` line that is not the JSON the protocol promises.
    #[error("a data line is not valid JSON ({detail}): {snippet}")]
    InvalidJson { detail: String, snippet: String },
    /// The bytes are not an event stream (bad UTF-8, unparsable framing).
    #[error("the event stream is malformed: {0}")]
    Framing(String),
    /// The server sent an error event in the middle of the stream.
    #[error("the server reported {kind}: {message}")]
    Server { kind: String, message: String, retryable: bool },
    /// Bytes kept coming, but no event that carries the answer for the stall timeout: a server
    /// trickling bytes to keep the connection open.
    #[error(
        "no progress for {}s (the server sent only keep-alives or trickled bytes); the stall \
         timeout is set by KEEL_STALL_TIMEOUT", .0.as_secs_f32()
    )]
    Stalled(Duration),
    /// The response passed the size one response may have.
    #[error("the response passed {} MiB, the most keel reads of one response", .0 >> 20)]
    TooLarge(usize),
}

impl From<std::convert::Infallible> for StreamError {
    fn from(never: std::convert::Infallible) -> Self {
        match never {}
    }
}

impl From<std::io::Error> for StreamError {
    fn from(error: std::io::Error) -> Self {
        Self::Transport(error.to_string())
    }
}

impl From<reqwest::Error> for StreamError {
    fn from(error: reqwest::Error) -> Self {
        Self::Transport(root_cause(&error))
    }
}

impl StreamError {
    /// Whether trying the request again may succeed.
    pub fn is_retryable(&self) -> bool {
        match self {
            Self::Server { retryable, .. } => *retryable,
            Self::TooLarge(_) => false,
            _ => true,
        }
    }

    /// A few words for "retrying because …".
    pub fn reason(&self) -> String {
        match self {
            Self::Idle(after) => format!("no data for {}s", after.as_secs_f32()),
            Self::Stalled(after) => format!("no progress for {}s", after.as_secs_f32()),
            Self::TooLarge(_) => "response too large".to_owned(),
            Self::Transport(_) => "connection broke".to_owned(),
            Self::Cut { .. } => "stream cut off".to_owned(),
            Self::Empty => "empty response".to_owned(),
            Self::InvalidJson { .. } | Self::Framing(_) => "malformed stream".to_owned(),
            Self::Server { kind, .. } => kind.clone(),
        }
    }
}

impl LlmError {
    /// Whether the server refused the key (401/403), looking through retries.
    pub fn is_auth(&self) -> bool {
        match self {
            Self::Auth { .. } => true,
            Self::RetriesExhausted { last, .. } => last.is_auth(),
            _ => false,
        }
    }

    /// What the server said when it refused the prompt as too long for the model.
    pub fn overflow(&self) -> Option<Overflow> {
        match self {
            Self::ContextOverflow { overflow, .. } => Some(*overflow),
            Self::RetriesExhausted { last, .. } => last.overflow(),
            _ => None,
        }
    }

    /// Whether trying the same request again may succeed.
    pub fn is_retryable(&self) -> bool {
        match self {
            Self::Server { .. } | Self::Connect { .. } | Self::Transport { .. } => true,
            Self::Stream { cause, .. } => cause.is_retryable(),
            _ => false,
        }
    }

    /// How long the server asked us to wait before trying again.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            Self::Server { retry_after, .. } => *retry_after,
            _ => None,
        }
    }

    /// A few words for "retrying because …" (the status bar has little room).
    pub fn reason(&self) -> String {
        match self {
            Self::Server { status, .. } => format!("{status} {}", status_label(*status)),
            Self::Connect { .. } => "could not connect".to_owned(),
            Self::Transport { .. } => "request failed".to_owned(),
            Self::Stream { cause, .. } => cause.reason(),
            Self::RetriesExhausted { last, .. } => last.reason(),
            other => other.to_string(),
        }
    }
}

/// The innermost cause of an error: for a failed connection that is "Connection refused (os error
/// 111)" rather than reqwest's "error sending request".
pub(crate) fn root_cause(error: &(dyn std::error::Error + 'static)) -> String {
    let mut cause = error;
    while let Some(source) = cause.source() {
        cause = source;
    }
    cause.to_string()
}

fn auth_label(status: u16) -> &'static str {
    if status == 403 { "access denied" } else { "authentication failed" }
}

fn status_label(status: u16) -> &'static str {
    match status {
        429 => "rate limited",
        529 => "server overloaded",
        503 => "service unavailable",
        502 | 504 => "gateway error",
        _ => "server error",
    }
}

fn retry_after_note(retry_after: Option<Duration>) -> String {
    retry_after.map(|after| format!(" (retry after {}s)", after.as_secs())).unwrap_or_default()
}

/// One line saying what a server's error body holds: the JSON error message if there is one, the
/// title of an HTML page, or the first line of anything else, cut to a readable length.
pub fn summarize_body(content_type: Option<&str>, body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return "(empty body)".to_owned();
    }
    if let Ok(json) = serde_json::from_str::<serde_json::Value>(trimmed) {
        return truncate(&json_message(&json).unwrap_or_else(|| json.to_string()));
    }
    let is_html =
        content_type.is_some_and(|kind| kind.contains("html")) || trimmed.starts_with('<');
    if is_html {
        return match html_title(trimmed) {
            Some(title) => truncate(&format!("an HTML page: {title}")),
            None => "an HTML page".to_owned(),
        };
    }
    let first_line = trimmed.lines().next().unwrap_or_default();
    truncate(first_line)
}

/// The human part of the usual JSON error shapes: `{"error": {"message"}}` (both vendors),
/// `{"error": "…"}`, `{"message": "…"}`, `{"detail": "…"}`.
fn json_message(json: &serde_json::Value) -> Option<String> {
    let error = json.get("error");
    let nested = error.and_then(|error| error.get("message"));
    [nested, error, json.get("message"), json.get("detail")]
        .into_iter()
        .flatten()
        .find_map(|value| value.as_str().map(str::to_owned))
}

fn html_title(html: &str) -> Option<String> {
    let lower = html.to_ascii_lowercase();
    let start = lower.find("<title")?;
    let open_end = start + lower[start..].find('>')? + 1;
    let close = open_end + lower[open_end..].find("</title")?;
    let title = html.get(open_end..close)?.split_whitespace().collect::<Vec<_>>().join(" ");
    (!title.is_empty()).then_some(title)
}

/// Cuts `text` to [`MAX_SUMMARY_CHARS`], on a character boundary, and replaces control
/// characters so the result stays on one line.
pub(crate) fn truncate(text: &str) -> String {
    let mut out: String = text
        .chars()
        .take(MAX_SUMMARY_CHARS)
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if text.chars().nth(MAX_SUMMARY_CHARS).is_some() {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summarizes_json_error_shapes() {
        let anthropic = br#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#;
        assert_eq!(summarize_body(None, anthropic), "invalid x-api-key");
        assert_eq!(summarize_body(None, br#"{"detail":"Not Found"}"#), "Not Found");
        assert_eq!(summarize_body(None, br#"{"error":"bad"}"#), "bad");
        assert_eq!(summarize_body(None, br#"[1,2]"#), "[1,2]");
    }

    #[test]
    fn summarizes_html_by_title() {
        let page = b"<!DOCTYPE html>\n<html><head><TITLE>502 Bad\n Gateway</TITLE></head><body>x</body></html>";
        assert_eq!(summarize_body(Some("text/html"), page), "an HTML page: 502 Bad Gateway");
        assert_eq!(summarize_body(None, b"<html><body>oops</body></html>"), "an HTML page");
    }

    #[test]
    fn summarizes_text_by_first_line_cut_short() {
        assert_eq!(summarize_body(None, b""), "(empty body)");
        assert_eq!(summarize_body(None, b"upstream failed\nstack trace..."), "upstream failed");
        let long = "é".repeat(500);
        let summary = summarize_body(None, long.as_bytes());
        assert_eq!(summary.chars().count(), MAX_SUMMARY_CHARS + 1);
        assert!(summary.ends_with('…'));
    }

    #[test]
    fn exhausted_retries_look_through_to_the_cause() {
        let last = LlmError::Auth {
            status: 401,
            url: "http://x".into(),
            message: "no".into(),
            key_var: "K",
        };
        let error = LlmError::RetriesExhausted { attempts: 3, last: Box::new(last) };
        assert!(error.is_auth());
        assert!(error.to_string().starts_with("gave up after 3 attempts: authentication failed"));
    }
}
