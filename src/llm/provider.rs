//! The models keel can talk to: a closed set, each variant tested against its real protocol.

use super::anthropic::AnthropicClient;
use super::error::LlmError;
use super::openai::OpenAiClient;
use super::scripted::ScriptedProvider;
use super::types::{ChatRequest, Completion, StreamEvent, WireFormat};
use tokio::sync::mpsc::UnboundedSender;

/// A model to talk to. An enum rather than a trait object: the set is closed and each variant is
/// tested against its real wire protocol.
#[derive(Debug)]
pub enum Provider {
    Anthropic(AnthropicClient),
    OpenAi(OpenAiClient),
    Scripted(ScriptedProvider),
}

impl Provider {
    /// A client of the model `settings` names, over `kind`'s protocol.
    pub fn over(kind: WireFormat, settings: super::HttpSettings) -> Result<Self, LlmError> {
        match kind {
            WireFormat::Anthropic => AnthropicClient::new(settings).map(Self::Anthropic),
            WireFormat::OpenAi => OpenAiClient::new(settings).map(Self::OpenAi),
        }
    }

    /// The settings an HTTP provider was made from (`None` for the scripted demo).
    pub fn settings(&self) -> Option<&super::HttpSettings> {
        match self {
            Self::Anthropic(client) => Some(client.settings()),
            Self::OpenAi(client) => Some(client.settings()),
            Self::Scripted(_) => None,
        }
    }

    /// Sends the request and waits for the whole answer, streaming progress to `events`.
    /// Retries are handled inside; cancelling is dropping the future.
    pub async fn complete(
        &self,
        request: &ChatRequest<'_>,
        events: &UnboundedSender<StreamEvent>,
    ) -> Result<Completion, LlmError> {
        match self {
            Self::Anthropic(client) => client.complete(request, events).await,
            Self::OpenAi(client) => client.complete(request, events).await,
            Self::Scripted(script) => script.complete(request, events).await,
        }
    }

    /// A short name for the status bar: `anthropic`, `openai` or `demo`.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Anthropic(_) => "anthropic",
            Self::OpenAi(_) => "openai",
            Self::Scripted(_) => "demo",
        }
    }

    pub fn model(&self) -> &str {
        match self {
            Self::Anthropic(client) => client.model(),
            Self::OpenAi(client) => client.model(),
            Self::Scripted(_) => "scripted",
        }
    }

    pub fn wire_format(&self) -> WireFormat {
        match self {
            Self::OpenAi(_) => WireFormat::OpenAi,
            Self::Anthropic(_) | Self::Scripted(_) => WireFormat::Anthropic,
        }
    }
}
