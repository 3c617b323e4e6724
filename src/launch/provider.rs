//! The model a launch talks to: the scripted demo, or the configured provider with the HTTP
//! settings every request uses — and where `/model` may go besides.

use super::UsageError;
use color_eyre::eyre::WrapErr;
use keel::config::{self, Config};
use keel::llm::{HttpSettings, Provider, Routes, WireFormat, retry::RetryPolicy, scripted};
use keel::visible::visible;
use std::time::Duration;

/// How long to wait for a TCP/TLS connection to the provider.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);
/// How long a response stream may stay silent before it counts as cut.
const IDLE_TIMEOUT: Duration = Duration::from_secs(120);
/// How long a response may go without an event that carries the answer (a server trickling
/// bytes or sending only keep-alives), unless `KEEL_STALL_TIMEOUT` says otherwise.
const STALL_TIMEOUT: Duration = Duration::from_secs(300);
const STALL_TIMEOUT_VAR: &str = "KEEL_STALL_TIMEOUT";
/// The headless demo's pause before each answer: quick, but still readable as it scrolls.
const HEADLESS_DEMO_PACE: Duration = Duration::from_millis(150);

/// The scripted demo played in `place`, at `pace_ms` if given, else at a pace to watch (or,
/// `headless`, to read as it scrolls).
pub fn demo(
    place: &scripted::DemoPlace,
    pace_ms: Option<u64>,
    headless: bool,
) -> color_eyre::Result<Provider> {
    let pace = pace_ms.map(Duration::from_millis).unwrap_or(if headless {
        HEADLESS_DEMO_PACE
    } else {
        scripted::HUMAN_PACE
    });
    let script = scripted::ScriptedProvider::demo(pace).wrap_err("the demo script is broken")?;
    Ok(Provider::Scripted(script.ran_in(place)))
}

/// The configured provider, or `None` when there is no key.
pub fn configured(config: &Config) -> color_eyre::Result<Option<Provider>> {
    let (Some(kind), Some(api_key)) = (config.provider, config.api_key.clone()) else {
        return Ok(None);
    };
    let settings = settings(config.base_url.clone(), api_key, config.model.clone())?;
    // A client that cannot be built means a bad setting (a base URL that is not a URL).
    Provider::over(kind, settings).map(Some).map_err(|err| UsageError(err.to_string()).into())
}

/// Where `/model` may go besides the configured provider: the other protocol, where its key is
/// set in the environment (at its base URL variable's address, else the vendor's).
pub fn routes(
    config: &Config,
    env: &dyn Fn(&str) -> Option<String>,
    routes: Routes,
) -> color_eyre::Result<Routes> {
    let mut routes = routes;
    for kind in WireFormat::ALL {
        if Some(kind) == config.provider {
            continue;
        }
        let Some(api_key) = env(kind.key_variable()).filter(|key| !key.trim().is_empty()) else {
            continue;
        };
        let base_url = env(kind.base_url_variable())
            .filter(|url| !url.trim().is_empty())
            .unwrap_or_else(|| match kind {
                WireFormat::Anthropic => config::DEFAULT_ANTHROPIC_BASE_URL.to_owned(),
                WireFormat::OpenAi => config::DEFAULT_OPENAI_BASE_URL.to_owned(),
            });
        routes = routes.with(kind, settings(base_url, api_key, String::new())?);
    }
    Ok(routes)
}

/// The settings of a client of `model` at `base_url` with `api_key`.
fn settings(base_url: String, api_key: String, model: String) -> color_eyre::Result<HttpSettings> {
    Ok(HttpSettings {
        base_url,
        api_key,
        model,
        connect_timeout: CONNECT_TIMEOUT,
        idle_timeout: IDLE_TIMEOUT,
        stall_timeout: stall_timeout()?,
        retry: RetryPolicy::default(),
    })
}

/// How long a response may make no progress: `KEEL_STALL_TIMEOUT` seconds, else the default.
fn stall_timeout() -> color_eyre::Result<Duration> {
    match std::env::var(STALL_TIMEOUT_VAR) {
        Err(_) => Ok(STALL_TIMEOUT),
        Ok(text) => match text.trim().parse::<u64>() {
            Ok(seconds) if seconds > 0 => Ok(Duration::from_secs(seconds)),
            _ => Err(UsageError(format!(
                "{STALL_TIMEOUT_VAR} must be a whole number of seconds above 0, not {:?}",
                visible(&text)
            ))
            .into()),
        },
    }
}
