//! The HTTP mechanics of a request: the `reqwest` client, one streamed POST per attempt, and
//! turning what the server answered into a [`Completion`] or an [`LlmError`] that says what to do.
//!
//! Each attempt is bounded in time without bounding the answer's length: the response headers
//! and then every chunk of the body must arrive within the idle timeout. Error bodies are read
//! only up to [`MAX_ERROR_BODY`] and summarised (see `error::summarize_body`).

use super::error::{LlmError, StreamError, root_cause, summarize_body};
use super::overflow;
use super::retry;
use super::settings::HttpSettings;
use super::sse::{self, EventDecoder};
use super::types::{Completion, SentRequest, StreamEvent, WireFormat};
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderValue, RETRY_AFTER};
use reqwest::{Response, StatusCode};
use std::time::{Duration, SystemTime};
use tokio::sync::mpsc::UnboundedSender;

/// How much of an error body is read to explain the error.
const MAX_ERROR_BODY: usize = 64 * 1024;
/// The header some OpenAI-compatible servers use for a retry delay in milliseconds.
const RETRY_AFTER_MS: &str = "retry-after-ms";
/// Statuses that mean "busy, try again" rather than "this request is wrong".
const RETRYABLE_STATUSES: [u16; 6] = [429, 500, 502, 503, 504, 529];
const USER_AGENT: &str = concat!("keel/", env!("CARGO_PKG_VERSION"));

/// Where one provider sends its requests, and the words its errors use.
#[derive(Debug, Clone)]
pub(crate) struct Endpoint {
    pub url: String,
    pub model: String,
    /// The variable that holds the key (`ANTHROPIC_API_KEY`, `OPENAI_API_KEY`).
    pub key_var: &'static str,
    /// The variable that sets the base URL.
    pub base_var: &'static str,
    /// Extra advice for a 404, starting with "; ", or empty.
    pub not_found_hint: String,
}

/// Makes ring the process's TLS provider, which every HTTP client keel builds (the providers',
/// the MCP servers') uses: reqwest is built without one of its own. Once is enough; later calls
/// find it there.
pub fn install_tls() {
    let _already = rustls::crypto::ring::default_provider().install_default();
}

/// The `reqwest` client for one provider's `url`. Redirects are not followed: an API endpoint
/// that answers with one is misconfigured, and following it would carry the key elsewhere.
pub(crate) fn client(settings: &HttpSettings, url: &str) -> Result<reqwest::Client, LlmError> {
    install_tls();
    let mut builder = reqwest::Client::builder()
        .connect_timeout(settings.connect_timeout)
        .user_agent(USER_AGENT)
        .redirect(reqwest::redirect::Policy::none());
    if url.starts_with("http://") {
        // Plain HTTP verifies no certificate: loading the platform's trust store, file by file,
        // would cost milliseconds at every start for nothing.
        builder = builder.tls_certs_only(std::iter::empty());
    }
    builder.build().map_err(|error| LlmError::Client(root_cause(&error)))
}

/// `base` (trailing slashes dropped) joined with `path`, checked to be an http(s) URL.
pub(crate) fn join_url(base: &str, path: &str, base_var: &'static str) -> Result<String, LlmError> {
    let url = format!("{}{path}", base.trim().trim_end_matches('/'));
    let invalid =
        |detail: String| LlmError::InvalidBaseUrl { url: base.to_owned(), detail, base_var };
    let parsed = reqwest::Url::parse(&url).map_err(|error| invalid(error.to_string()))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(invalid("it must start with http:// or https://".to_owned()));
    }
    Ok(url)
}

/// A header value holding a secret, or an error naming the variable it came from.
pub(crate) fn secret_header(value: &str, key_var: &'static str) -> Result<HeaderValue, LlmError> {
    let mut header = HeaderValue::from_str(value).map_err(|_| {
        LlmError::Client(format!(
            "the API key contains characters not allowed in an HTTP header — check {key_var}"
        ))
    })?;
    header.set_sensitive(true);
    Ok(header)
}

/// One request, retried per the settings' policy: POSTs `body` to the endpoint and decodes the
/// streamed answer with a fresh `D` per attempt.
pub(crate) async fn complete<D: EventDecoder + Default>(
    http: &reqwest::Client,
    endpoint: &Endpoint,
    headers: &HeaderMap,
    (format, body): (WireFormat, Vec<u8>),
    settings: &HttpSettings,
    events: &UnboundedSender<StreamEvent>,
) -> Result<Completion, LlmError> {
    // Shared, not copied, by each attempt (and the inspector): the body carries the whole history.
    let body = bytes::Bytes::from(body);
    retry::run(&settings.retry, events, || {
        let sent = SentRequest { body: body.clone(), at: SystemTime::now(), format };
        // The receiver may be gone (headless mode shutting down); the request goes on regardless.
        let _ = events.send(StreamEvent::Sent(sent));
        let request = http.post(&endpoint.url).headers(headers.clone()).body(body.clone());
        attempt::<D>(request, endpoint, settings, events)
    })
    .await
}

async fn attempt<D: EventDecoder + Default>(
    request: reqwest::RequestBuilder,
    endpoint: &Endpoint,
    settings: &HttpSettings,
    events: &UnboundedSender<StreamEvent>,
) -> Result<Completion, LlmError> {
    let idle = settings.idle_timeout;
    let stream_error = |cause| LlmError::Stream { url: endpoint.url.clone(), cause };
    let response = match tokio::time::timeout(idle, request.send()).await {
        Err(_elapsed) => return Err(stream_error(StreamError::Idle(idle))),
        Ok(Err(error)) => return Err(send_error(&error, endpoint)),
        Ok(Ok(response)) => response,
    };
    let status = response.status();
    if !status.is_success() {
        return Err(status_error(status, response, endpoint, idle).await);
    }
    let content_type = header_text(response.headers(), CONTENT_TYPE.as_str());
    if content_type.contains("json") || content_type.contains("html") {
        let body = read_capped(response, idle).await;
        return Err(LlmError::NotAStream {
            url: endpoint.url.clone(),
            detail: format!(
                "expected an event stream, got {content_type}: {}",
                summarize_body(Some(&content_type), &body)
            ),
        });
    }
    let chunks = sse::with_idle_timeout(response.bytes_stream(), idle);
    sse::drive_within(D::default(), chunks, events, settings.stall_timeout)
        .await
        .map_err(stream_error)
}

fn send_error(error: &reqwest::Error, endpoint: &Endpoint) -> LlmError {
    if error.is_connect() || error.is_timeout() {
        let detail = if error.is_timeout() { "timed out".to_owned() } else { root_cause(error) };
        LlmError::Connect { url: endpoint.url.clone(), detail, base_var: endpoint.base_var }
    } else {
        LlmError::Transport { url: endpoint.url.clone(), detail: root_cause(error) }
    }
}

async fn status_error(
    status: StatusCode,
    response: Response,
    endpoint: &Endpoint,
    idle: Duration,
) -> LlmError {
    let retry_after = retry_after(response.headers(), SystemTime::now());
    let content_type = header_text(response.headers(), CONTENT_TYPE.as_str());
    let body = read_capped(response, idle).await;
    let message = summarize_body(Some(&content_type), &body);
    let url = endpoint.url.clone();
    // Whatever the status: resending it as it is would only be refused again.
    if let Some(overflow) = overflow::detect(status.as_u16(), &body) {
        return LlmError::ContextOverflow { status: status.as_u16(), url, message, overflow };
    }
    match status.as_u16() {
        status @ (401 | 403) => LlmError::Auth { status, url, message, key_var: endpoint.key_var },
        404 => LlmError::NotFound {
            url,
            message,
            model: endpoint.model.clone(),
            base_var: endpoint.base_var,
            hint: endpoint.not_found_hint.clone(),
        },
        status if RETRYABLE_STATUSES.contains(&status) => {
            LlmError::Server { status, url, message, retry_after }
        }
        status => LlmError::Rejected { status, url, message },
    }
}

/// The server's requested delay: `retry-after-ms`, or `retry-after` in seconds or as an HTTP
/// date (a date already past asks for no wait). Whether keel waits that long is the retry
/// policy's call (see `retry::MAX_RETRY_AFTER`).
fn retry_after(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let seconds = |text: &str, scale: f64| {
        text.trim()
            .parse::<f64>()
            .ok()
            .filter(|value| value.is_finite() && *value >= 0.0)
            .and_then(|value| Duration::try_from_secs_f64(value * scale).ok())
    };
    let date = |text: &str| {
        httpdate::parse_http_date(text.trim())
            .ok()
            .map(|at| at.duration_since(now).unwrap_or(Duration::ZERO))
    };
    let after = header_text(headers, RETRY_AFTER.as_str());
    seconds(&header_text(headers, RETRY_AFTER_MS), 1e-3)
        .or_else(|| seconds(&after, 1.0))
        .or_else(|| date(&after))
}

fn header_text(headers: &HeaderMap, name: &str) -> String {
    headers.get(name).and_then(|value| value.to_str().ok()).unwrap_or_default().to_owned()
}

/// The start of a body, at most [`MAX_ERROR_BODY`] bytes, giving up quietly when it stalls or
/// breaks: it only serves to explain an error.
async fn read_capped(mut response: Response, idle: Duration) -> Vec<u8> {
    let mut body = Vec::new();
    while body.len() < MAX_ERROR_BODY {
        match tokio::time::timeout(idle, response.chunk()).await {
            Ok(Ok(Some(chunk))) => body.extend_from_slice(&chunk),
            _ => break,
        }
    }
    body
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Response headers, as (name, value) pairs.
    type Pairs = &'static [(&'static str, &'static str)];

    fn headers(pairs: Pairs) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, HeaderValue::from_str(value).unwrap());
        }
        map
    }

    /// A fixed moment, so that dates in headers are read against a known "now".
    fn now() -> SystemTime {
        httpdate::parse_http_date("Tue, 01 Dec 2026 12:00:00 GMT").unwrap()
    }

    #[test]
    fn retry_after_is_read_in_every_form_the_servers_use() {
        let cases: [(Pairs, Option<Duration>); 10] = [
            (&[("retry-after", "3")], Some(Duration::from_secs(3))),
            (&[("retry-after", " 1.5 ")], Some(Duration::from_millis(1500))),
            (&[("retry-after-ms", "250")], Some(Duration::from_millis(250))),
            // The millisecond header is the more precise one and wins.
            (&[("retry-after-ms", "250"), ("retry-after", "9")], Some(Duration::from_millis(250))),
            (&[("retry-after", "Tue, 01 Dec 2026 12:00:07 GMT")], Some(Duration::from_secs(7))),
            (&[("retry-after", "Tue, 01 Dec 2026 13:00:00 GMT")], Some(Duration::from_secs(3600))),
            // A date already past: try again at once (the backoff still applies).
            (&[("retry-after", "Tue, 01 Dec 2026 11:59:00 GMT")], Some(Duration::ZERO)),
            (&[("retry-after", "-4")], None),
            (&[("retry-after", "soon")], None),
            (&[], None),
        ];
        for (pairs, expected) in cases {
            assert_eq!(retry_after(&headers(pairs), now()), expected, "{pairs:?}");
        }
    }
}
