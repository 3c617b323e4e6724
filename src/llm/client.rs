//! The one HTTP client, generic over the protocol: one `reqwest` client per provider, the
//! endpoint and headers worked out once, and each request encoded, sent and retried the same way
//! whatever the protocol (the mechanics are in `http`).

use super::error::LlmError;
use super::http::{self, Endpoint};
use super::protocol::Protocol;
use super::settings::HttpSettings;
use super::types::{ChatRequest, Completion, StreamEvent};
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderValue};
use std::fmt;
use tokio::sync::mpsc::UnboundedSender;

/// A client for one model behind protocol `P`.
pub struct HttpClient<P: Protocol> {
    protocol: std::marker::PhantomData<P>,
    settings: HttpSettings,
    http: reqwest::Client,
    endpoint: Endpoint,
    headers: reqwest::header::HeaderMap,
}

impl<P: Protocol> fmt::Debug for HttpClient<P> {
    // By hand, so the key never reaches a log.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpClient")
            .field("protocol", &P::NAME)
            .field("url", &self.endpoint.url)
            .field("model", &self.settings.model)
            .finish_non_exhaustive()
    }
}

impl<P: Protocol> HttpClient<P> {
    /// A client for `settings`; fails on a base URL that is not an http(s) URL or a key that
    /// cannot go in a header.
    pub fn new(settings: HttpSettings) -> Result<Self, LlmError> {
        let protocol = P::default();
        let url = http::join_url(&settings.base_url, P::PATH, P::BASE_VAR)?;
        let mut headers = protocol.headers(&settings.api_key)?;
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
        let endpoint = Endpoint {
            url,
            model: settings.model.clone(),
            key_var: P::KEY_VAR,
            base_var: P::BASE_VAR,
            not_found_hint: protocol.not_found_hint(&settings.base_url),
        };
        Ok(Self {
            http: http::client(&settings, &endpoint.url)?,
            protocol: std::marker::PhantomData,
            settings,
            endpoint,
            headers,
        })
    }

    pub fn model(&self) -> &str {
        &self.settings.model
    }

    /// The settings the client was made from.
    pub fn settings(&self) -> &HttpSettings {
        &self.settings
    }

    /// The JSON body sent for `request`, serialised straight from the history (no `Value` tree
    /// in between: the body carries the whole history every round).
    pub fn request_bytes(&self, request: &ChatRequest<'_>) -> Result<Vec<u8>, LlmError> {
        P::WIRE.encode(&self.settings.model, request)
    }

    /// Streams the answer to `request`, retrying per the settings.
    pub async fn complete(
        &self,
        request: &ChatRequest<'_>,
        events: &UnboundedSender<StreamEvent>,
    ) -> Result<Completion, LlmError> {
        let body = self.request_bytes(request)?;
        http::complete::<P::Decoder>(
            &self.http,
            &self.endpoint,
            &self.headers,
            (P::WIRE, body),
            &self.settings,
            events,
        )
        .await
    }
}
