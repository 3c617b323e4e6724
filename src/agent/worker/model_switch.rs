//! `/model [PROVIDER] NAME`: another model from the next request on — over the same provider,
//! or over the other one where its key was set when keel started — with the context window
//! that goes with it: the one the person set, else keel's figure for the model's family. The
//! status bar names the new model, and prices it where its price is known.

use super::Agent;
use crate::agent::event::AgentEvent;
use crate::agent::state::ModelLabel;
use crate::llm::{Provider, WireFormat};
use std::sync::Arc;

impl Agent {
    /// Switches to the model `spec` names (`gpt-4o`, `openai gpt-4o`), or says why not; with no
    /// name, says which model is in use and what it may switch to.
    pub(in crate::agent) fn switch_model(&mut self, spec: &str) {
        let words: Vec<&str> = spec.split_whitespace().collect();
        let current = self.conversation.provider.as_ref().and_then(|provider| {
            provider.settings().map(|settings| (provider.wire_format(), settings.clone()))
        });
        let (kind, model) = match (words.as_slice(), &current) {
            ([], _) => {
                let text = self.models_note();
                return self.turn().emit(AgentEvent::Notice { text });
            }
            ([model], Some((kind, _))) => (*kind, *model),
            ([provider, model], _) => match WireFormat::parse(provider) {
                Some(kind) => (kind, *model),
                None => return self.refuse_switch(format!("{provider} is not a provider keel knows: use anthropic or openai")),
            },
            ([_], None) => {
                return self.refuse_switch("there is no model to switch from (no key is set, or the demo is running)".to_owned());
            }
            _ => return self.refuse_switch("give a model name, and a provider before it if it is the other one: /model gpt-4o, /model anthropic claude-sonnet-4-5".to_owned()),
        };
        let built = match &current {
            Some((current_kind, settings)) if *current_kind == kind => {
                let settings =
                    crate::llm::HttpSettings { model: model.to_owned(), ..settings.clone() };
                Some(Provider::over(kind, settings))
            }
            _ => self.conversation.config.routes.provider(kind, model),
        };
        let provider = match built {
            Some(Ok(provider)) => provider,
            Some(Err(err)) => return self.refuse_switch(err.to_string()),
            None => {
                return self.refuse_switch(format!(
                    "{} was not set when keel started, so keel cannot talk to {}; set it (and {} for a server other than the vendor's) and start keel again",
                    kind.key_variable(),
                    provider_name(kind),
                    kind.base_url_variable()
                ));
            }
        };
        let conversation = &mut self.conversation;
        if conversation.config.context_window_assumed {
            conversation.config.context_window = conversation.config.routes.window_of(model);
        }
        conversation.remeter();
        let label =
            ModelLabel { provider: provider.name(), model: provider.model(), wire_format: kind };
        conversation.state.set_label(label);
        conversation.provider = Some(Arc::new(provider));
        let window = crate::count::grouped(conversation.config.context_window.into());
        let mut turn = self.turn();
        turn.tell_request_shape();
        let tokens = turn.meter.estimate(&turn.state.view().history);
        turn.state.set_context(turn.meter.usage(tokens));
        turn.emit(AgentEvent::Notice {
            text: format!(
                "Model: {model} ({}) from the next request on; context window {window} tokens.",
                provider_name(kind)
            ),
        });
    }

    /// The model in use, and what `/model` may switch to.
    fn models_note(&self) -> String {
        let conversation = &self.conversation;
        let view = conversation.state.view();
        let window = crate::count::grouped(conversation.config.context_window.into());
        let mut kinds: Vec<WireFormat> = conversation.config.routes.kinds();
        if let Some(provider) = conversation.provider.as_ref().filter(|p| p.settings().is_some()) {
            kinds.retain(|kind| *kind != provider.wire_format());
            kinds.insert(0, provider.wire_format());
        }
        let names: Vec<&str> = kinds.into_iter().map(provider_name).collect();
        format!(
            "Model: {} ({}), context window {window} tokens. /model NAME switches to another \
             model from the next request on; /model PROVIDER NAME to another provider as well \
             (keys set: {}).",
            view.model,
            view.provider,
            if names.is_empty() { "none".to_owned() } else { names.join(", ") }
        )
    }

    fn refuse_switch(&mut self, why: String) {
        self.turn().emit(AgentEvent::Error { text: format!("The model was not switched: {why}.") });
    }
}

/// The provider as `--provider` names it.
fn provider_name(kind: WireFormat) -> &'static str {
    match kind {
        WireFormat::Anthropic => "anthropic",
        WireFormat::OpenAi => "openai",
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn windows_are_written_with_thousands_marked() {
        assert_eq!(crate::count::grouped(200_000), "200,000");
        assert_eq!(crate::count::grouped(1_047_576), "1,047,576");
        assert_eq!(crate::count::grouped(999), "999");
    }
}
