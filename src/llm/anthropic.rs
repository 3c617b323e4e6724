//! stub
use super::{ChatRequest, Completion, HttpSettings, LlmError, StreamEvent};
use crate::message::History;
use serde_json::Value;
use tokio::sync::mpsc::UnboundedSender;

#[derive(Debug)]
pub struct AnthropicClient {
    settings: HttpSettings,
}

impl AnthropicClient {
    pub fn new(settings: HttpSettings) -> Result<Self, LlmError> {
        Ok(Self { settings })
    }

    pub fn model(&self) -> &str {
        &self.settings.model
    }

    pub async fn complete(
        &self,
        _request: &ChatRequest<'_>,
        _events: &UnboundedSender<StreamEvent>,
    ) -> Result<Completion, LlmError> {
        Err(LlmError::Other("not implemented".into()))
    }
}

pub fn wire_messages(_history: &History) -> Vec<Value> {
    Vec::new()
}
