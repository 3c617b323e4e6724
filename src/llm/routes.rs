//! The providers a session may switch to (`/model`): each wire protocol whose key was set when
//! keel started, with the settings its client is made from, and how to find a model's context
//! window. The launcher fills it in; the agent only looks things up.

use super::error::LlmError;
use super::provider::Provider;
use super::settings::HttpSettings;
use super::types::WireFormat;

/// Where `/model` may take the session.
#[derive(Debug, Clone)]
pub struct Routes {
    routes: Vec<(WireFormat, HttpSettings)>,
    /// The context window keel assumes for a model (the launcher's `config::default_window`).
    window_of: fn(&str) -> u32,
}

impl Default for Routes {
    fn default() -> Self {
        Self { routes: Vec::new(), window_of: |_| super::DEFAULT_CONTEXT_WINDOW }
    }
}

impl Routes {
    /// No other provider, and `window_of` for the windows.
    pub fn new(window_of: fn(&str) -> u32) -> Self {
        Self { routes: Vec::new(), window_of }
    }

    /// The same, with `kind` reachable through `settings` (its model is replaced when used).
    pub fn with(mut self, kind: WireFormat, settings: HttpSettings) -> Self {
        self.routes.retain(|(known, _)| *known != kind);
        self.routes.push((kind, settings));
        self
    }

    /// The protocols a switch may name, in the order they were added.
    pub fn kinds(&self) -> Vec<WireFormat> {
        self.routes.iter().map(|(kind, _)| *kind).collect()
    }

    /// The window keel assumes for `model`.
    pub fn window_of(&self, model: &str) -> u32 {
        (self.window_of)(model)
    }

    /// A client of `model` over `kind`; `None` when no key for `kind` was set.
    pub fn provider(&self, kind: WireFormat, model: &str) -> Option<Result<Provider, LlmError>> {
        let (_, settings) = self.routes.iter().find(|(known, _)| *known == kind)?;
        let settings = HttpSettings { model: model.to_owned(), ..settings.clone() };
        Some(Provider::over(kind, settings))
    }
}
