//! stub
use super::{ChatRequest, Completion, LlmError, StreamEvent};
use tokio::sync::mpsc::UnboundedSender;

#[derive(Debug)]
pub struct ScriptedProvider;

impl ScriptedProvider {
    pub async fn complete(
        &self,
        _request: &ChatRequest<'_>,
        _events: &UnboundedSender<StreamEvent>,
    ) -> Result<Completion, LlmError> {
        Err(LlmError::Other("not implemented".into()))
    }
}
