//! Where keel's settings come from, in this order of precedence:
//! flags > environment > `./.keel/config.toml` (in the workspace) >
//! `~/.config/keel/config.toml` (or `$XDG_CONFIG_HOME/keel/config.toml`) > defaults.
//!
//! A file that does not parse, or names a key keel does not know, is an error naming the file,
//! line and key: a typo in a setting must never be silently ignored.

use crate::agent::{
    ApprovalMode, DEFAULT_MAX_ROUNDS, DEFAULT_MAX_TOKENS, DEFAULT_NAG_MESSAGE,
    DEFAULT_NAG_THRESHOLD,
};
use serde::Deserialize;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// The Anthropic API when no base URL is given (no `/v1`: the client adds it).
pub const DEFAULT_ANTHROPIC_BASE_URL: &str = "https://api.anthropic.com";
/// The OpenAI API when no base URL is given (with `/v1`, as OpenAI-compatible servers expect).
pub const DEFAULT_OPENAI_BASE_URL: &str = "https://api.openai.com/v1";
pub const DEFAULT_ANTHROPIC_MODEL: &str = "claude-sonnet-4-5";
pub const DEFAULT_OPENAI_MODEL: &str = "gpt-4.1";
/// The project's own settings file, relative to the workspace.
pub const PROJECT_CONFIG: &str = ".keel/config.toml";

/// Which wire protocol to speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum ProviderKind {
    /// Anthropic Messages API.
    Anthropic,
    /// OpenAI-compatible Chat Completions (OpenAI, DeepSeek, Doubao, Ollama, vLLM, …).
    #[value(name = "openai")]
    #[serde(rename = "openai")]
    OpenAi,
}

impl ProviderKind {
    /// The environment variable holding this provider's key.
    pub fn key_variable(self) -> &'static str {
        match self {
            Self::Anthropic => "ANTHROPIC_API_KEY",
            Self::OpenAi => "OPENAI_API_KEY",
        }
    }

    fn base_url_variable(self) -> &'static str {
        match self {
            Self::Anthropic => "ANTHROPIC_BASE_URL",
            Self::OpenAi => "OPENAI_BASE_URL",
        }
    }

    fn parse(text: &str) -> Option<Self> {
        match text.trim().to_lowercase().as_str() {
            "anthropic" => Some(Self::Anthropic),
            "openai" => Some(Self::OpenAi),
            _ => None,
        }
    }
}

/// The settings a config file may hold. Every field is optional.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileSettings {
    pub provider: Option<ProviderKind>,
    pub model: Option<String>,
    pub base_url: Option<String>,
    pub api_key: Option<String>,
    pub max_tokens: Option<u32>,
    pub nag_threshold: Option<u32>,
    pub nag_message: Option<String>,
    pub max_rounds: Option<u32>,
    pub approval: Option<ApprovalMode>,
}

/// The settings given as flags.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FlagSettings {
    pub provider: Option<ProviderKind>,
    pub model: Option<String>,
    pub base_url: Option<String>,
    pub max_tokens: Option<u32>,
    pub nag_threshold: Option<u32>,
    pub max_rounds: Option<u32>,
    pub approval: Option<ApprovalMode>,
}

/// Settings after every source has had its say.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// `None` when no provider was named and no key is set.
    pub provider: Option<ProviderKind>,
    pub model: String,
    pub base_url: String,
    pub api_key: Option<String>,
    pub max_tokens: u32,
    pub nag_threshold: u32,
    pub nag_message: String,
    pub max_rounds: u32,
    /// `None`: the front end's own default (ask in the TUI, auto when headless).
    pub approval: Option<ApprovalMode>,
}

/// A setting that could not be read.
#[derive(Debug, Error)]
pub enum ConfigError {
    #[error("{path}:{line}:{column}: {key}{message}")]
    Parse { path: PathBuf, line: usize, column: usize, key: String, message: String },
    #[error("{path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("{variable}={value:?} is not a provider keel knows: use anthropic or openai")]
    BadProvider { variable: &'static str, value: String },
}

/// Reads a config file; a missing file is no settings at all.
pub fn read_file(path: &Path) -> Result<FileSettings, ConfigError> {
    match std::fs::read_to_string(path) {
        Ok(text) => parse_file(path, &text),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(FileSettings::default()),
        Err(source) => Err(ConfigError::Read { path: path.to_owned(), source }),
    }
}

/// Parses a config file's text, pointing at the line and key of any mistake.
pub fn parse_file(path: &Path, text: &str) -> Result<FileSettings, ConfigError> {
    toml::from_str(text).map_err(|err| {
        let offset = err.span().map_or(0, |span| span.start).min(text.len());
        let before = &text[..offset];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |index| index + 1);
        let column = before[line_start..].chars().count() + 1;
        let line_text = text[line_start..].lines().next().unwrap_or_default();
        let key = line_text
            .split_once('=')
            .map(|(key, _)| key.trim())
            .filter(|key| !key.is_empty() && !key.starts_with('#'))
            .map(|key| format!("key `{key}`: "))
            .unwrap_or_default();
        ConfigError::Parse {
            path: path.to_owned(),
            line,
            column,
            key,
            message: err.message().trim().to_owned(),
        }
    })
}

/// The user's config file: `$XDG_CONFIG_HOME/keel/config.toml`, else `~/.config/keel/config.toml`.
pub fn user_config_path(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let base = env("XDG_CONFIG_HOME")
        .filter(|dir| !dir.is_empty())
        .map(PathBuf::from)
        .or_else(|| env("HOME").map(|home| Path::new(&home).join(".config")))?;
    Some(base.join("keel").join("config.toml"))
}

/// Merges flags, environment (through `env`) and the two config files.
pub fn resolve(
    flags: &FlagSettings,
    env: &dyn Fn(&str) -> Option<String>,
    workspace: &Path,
) -> Result<Config, ConfigError> {
    let project = read_file(&workspace.join(PROJECT_CONFIG))?;
    let user = match user_config_path(env) {
        Some(path) => read_file(&path)?,
        None => FileSettings::default(),
    };
    merge(flags, env, &project, &user)
}

/// The precedence rules, apart from any file system.
pub fn merge(
    flags: &FlagSettings,
    env: &dyn Fn(&str) -> Option<String>,
    project: &FileSettings,
    user: &FileSettings,
) -> Result<Config, ConfigError> {
    let env = |name: &str| env(name).filter(|value| !value.trim().is_empty());
    let files = [project, user];
    let from_files =
        |pick: &dyn Fn(&FileSettings) -> Option<String>| files.iter().find_map(|f| pick(f));

    let env_provider = match env("KEEL_PROVIDER") {
        Some(value) => Some(
            ProviderKind::parse(&value)
                .ok_or(ConfigError::BadProvider { variable: "KEEL_PROVIDER", value })?,
        ),
        None => None,
    };
    let provider = flags
        .provider
        .or(env_provider)
        .or(project.provider)
        .or(user.provider)
        .or_else(|| {
            [ProviderKind::Anthropic, ProviderKind::OpenAi]
                .into_iter()
                .find(|kind| env(kind.key_variable()).is_some())
        })
        .or_else(|| files.iter().any(|f| f.api_key.is_some()).then_some(ProviderKind::Anthropic));

    let kind = provider.unwrap_or(ProviderKind::Anthropic);
    let api_key = env(kind.key_variable()).or_else(|| from_files(&|f| f.api_key.clone()));
    let base_url = flags
        .base_url
        .clone()
        .or_else(|| env(kind.base_url_variable()))
        .or_else(|| from_files(&|f| f.base_url.clone()))
        .unwrap_or_else(|| match kind {
            ProviderKind::Anthropic => DEFAULT_ANTHROPIC_BASE_URL.to_owned(),
            ProviderKind::OpenAi => DEFAULT_OPENAI_BASE_URL.to_owned(),
        });
    let model = flags
        .model
        .clone()
        .or_else(|| env("KEEL_MODEL"))
        .or_else(|| from_files(&|f| f.model.clone()))
        .unwrap_or_else(|| match kind {
            ProviderKind::Anthropic => DEFAULT_ANTHROPIC_MODEL.to_owned(),
            ProviderKind::OpenAi => DEFAULT_OPENAI_MODEL.to_owned(),
        });
    let number = |flag: Option<u32>, pick: fn(&FileSettings) -> Option<u32>, default: u32| {
        flag.or_else(|| files.iter().find_map(|f| pick(f))).unwrap_or(default)
    };
    Ok(Config {
        provider,
        model,
        base_url,
        api_key,
        max_tokens: number(flags.max_tokens, |f| f.max_tokens, DEFAULT_MAX_TOKENS),
        nag_threshold: number(flags.nag_threshold, |f| f.nag_threshold, DEFAULT_NAG_THRESHOLD),
        nag_message: from_files(&|f| f.nag_message.clone())
            .unwrap_or_else(|| DEFAULT_NAG_MESSAGE.to_owned()),
        max_rounds: number(flags.max_rounds, |f| f.max_rounds, DEFAULT_MAX_ROUNDS),
        approval: flags.approval.or(project.approval).or(user.approval),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> =
            pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
        move |name| map.get(name).cloned()
    }

    fn merged(flags: FlagSettings, env: &[(&str, &str)], project: &str, user: &str) -> Config {
        let project = parse_file(Path::new("project.toml"), project).unwrap();
        let user = parse_file(Path::new("user.toml"), user).unwrap();
        merge(&flags, &env_of(env), &project, &user).unwrap()
    }

    #[test]
    fn defaults_with_nothing_set() {
        let config = merged(FlagSettings::default(), &[], "", "");
        assert_eq!(config.provider, None);
        assert_eq!(config.api_key, None);
        assert_eq!(config.nag_threshold, 3);
        assert_eq!(config.nag_message, "<reminder>Update your todos.</reminder>");
        assert_eq!(config.max_rounds, 100);
    }

    #[test]
    fn the_provider_whose_key_is_set_is_used() {
        let config = merged(FlagSettings::default(), &[("OPENAI_API_KEY", "sk")], "", "");
        assert_eq!(config.provider, Some(ProviderKind::OpenAi));
        assert_eq!(config.api_key.as_deref(), Some("sk"));
        assert_eq!(config.base_url, DEFAULT_OPENAI_BASE_URL);
    }

    #[test]
    fn flags_beat_environment_beat_project_beat_user() {
        let env = [("KEEL_MODEL", "env-model"), ("ANTHROPIC_API_KEY", "k")];
        let project = "model = \"project-model\"\nnag_threshold = 5\n";
        let user = "model = \"user-model\"\nnag_threshold = 7\nmax_rounds = 9\n";
        let config = merged(FlagSettings::default(), &env, project, user);
        assert_eq!(config.model, "env-model");
        assert_eq!(config.nag_threshold, 5);
        assert_eq!(config.max_rounds, 9);

        let flags = FlagSettings {
            model: Some("flag-model".into()),
            nag_threshold: Some(0),
            ..FlagSettings::default()
        };
        let config = merged(flags, &env, project, user);
        assert_eq!(config.model, "flag-model");
        assert_eq!(config.nag_threshold, 0);

        let config = merged(FlagSettings::default(), &[], project, user);
        assert_eq!(config.model, "project-model");
    }

    #[test]
    fn base_url_comes_from_the_providers_variable() {
        let env = [("KEEL_PROVIDER", "openai"), ("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")];
        let config = merged(FlagSettings::default(), &env, "", "");
        assert_eq!(config.base_url, "http://127.0.0.1:1/v1");
    }

    #[test]
    fn a_bad_provider_variable_is_an_error() {
        let err = merge(
            &FlagSettings::default(),
            &env_of(&[("KEEL_PROVIDER", "gemini")]),
            &FileSettings::default(),
            &FileSettings::default(),
        )
        .unwrap_err();
        assert!(err.to_string().contains("KEEL_PROVIDER=\"gemini\""));
    }

    #[test]
    fn a_bad_value_names_the_file_line_and_key() {
        let text = "model = \"m\"\nnag_threshold = \"three\"\n";
        let err = parse_file(Path::new("cfg.toml"), text).unwrap_err().to_string();
        assert!(err.starts_with("cfg.toml:2:"), "{err}");
        assert!(err.contains("key `nag_threshold`"), "{err}");
    }

    #[test]
    fn an_unknown_key_is_an_error() {
        let err = parse_file(Path::new("cfg.toml"), "nag_treshold = 3\n").unwrap_err().to_string();
        assert!(err.starts_with("cfg.toml:1:"), "{err}");
        assert!(err.contains("nag_treshold"), "{err}");
    }

    #[test]
    fn broken_syntax_is_an_error() {
        let err = parse_file(Path::new("cfg.toml"), "model = \n").unwrap_err().to_string();
        assert!(err.starts_with("cfg.toml:1:"), "{err}");
    }

    #[test]
    fn files_are_read_from_disk_and_missing_ones_are_empty() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(read_file(&dir.path().join("none.toml")).unwrap(), FileSettings::default());
        std::fs::create_dir_all(dir.path().join(".keel")).unwrap();
        std::fs::write(dir.path().join(PROJECT_CONFIG), "approval = \"read-only\"\n").unwrap();
        let config = resolve(&FlagSettings::default(), &|_| None, dir.path()).unwrap();
        assert_eq!(config.approval, Some(ApprovalMode::ReadOnly));
    }
}
