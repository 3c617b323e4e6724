//! Config files: where the user's lives, and reading one into [`FileSettings`].
//!
//! A file that does not parse, or names a key keel does not know, is an error naming the file,
//! line and key: a typo in a setting must never be silently ignored.

use super::{ConfigError, FileSettings};
use std::path::Path;

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
