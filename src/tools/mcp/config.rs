//! One MCP server as the person's own config describes it, under `[mcp_servers.NAME]`.
//!
//! The shape is Codex's: a stdio server has `command` (with `args`, `env`, `env_vars`), a
//! Streamable HTTP server has `url` (with `bearer_token_env_var`). Only the person's own file
//! may name servers: a workspace's file could otherwise start any program (see `config::trust`).

use serde::Deserialize;
use std::collections::BTreeMap;
use std::time::Duration;

/// How long a server may take to start and list its tools, unless its config says.
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(10);
/// How long one tool call may take, unless the server's config says.
pub const DEFAULT_TOOL_TIMEOUT: Duration = Duration::from_secs(60);

/// `[mcp_servers.NAME]` as written.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerConfig {
    /// The program of a stdio server.
    pub command: Option<String>,
    #[serde(default)]
    pub args: Vec<String>,
    /// Variables set for a stdio server, with their values.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Variables of the person's own environment passed on to a stdio server (provider keys
    /// included, when named here).
    #[serde(default)]
    pub env_vars: Vec<String>,
    /// The endpoint of a Streamable HTTP server.
    pub url: Option<String>,
    /// The variable holding the bearer token sent to a Streamable HTTP server.
    pub bearer_token_env_var: Option<String>,
    /// `false` leaves the server out without removing it from the file.
    pub enabled: Option<bool>,
    pub startup_timeout_ms: Option<u64>,
    pub tool_timeout_ms: Option<u64>,
}

/// How keel reaches a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transport {
    Stdio {
        command: String,
        args: Vec<String>,
        env: BTreeMap<String, String>,
        env_vars: Vec<String>,
    },
    Http {
        url: String,
        bearer_token_env_var: Option<String>,
    },
}

/// A server's settings, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Server {
    pub name: String,
    pub transport: Transport,
    pub enabled: bool,
    pub startup_timeout: Duration,
    pub tool_timeout: Duration,
}

impl ServerConfig {
    /// The server's settings, or why they cannot be used.
    pub fn check(&self, name: &str) -> Result<Server, String> {
        let transport = match (&self.command, &self.url) {
            (Some(command), None) if !command.trim().is_empty() => Transport::Stdio {
                command: command.clone(),
                args: self.args.clone(),
                env: self.env.clone(),
                env_vars: self.env_vars.clone(),
            },
            (None, Some(url)) if url.starts_with("http://") || url.starts_with("https://") => {
                Transport::Http {
                    url: url.clone(),
                    bearer_token_env_var: self.bearer_token_env_var.clone(),
                }
            }
            (None, Some(url)) => {
                return Err(format!("url {url:?} is not an http:// or https:// address"));
            }
            (Some(_), Some(_)) => {
                return Err("has both command and url: a server is one or the other".into());
            }
            _ => return Err("needs a command (stdio) or a url (Streamable HTTP)".into()),
        };
        let is_http = matches!(transport, Transport::Http { .. });
        if is_http && (!self.args.is_empty() || !self.env.is_empty() || !self.env_vars.is_empty()) {
            return Err("args, env and env_vars are for stdio servers, not a url".into());
        }
        if !is_http && self.bearer_token_env_var.is_some() {
            return Err("bearer_token_env_var is for servers with a url".into());
        }
        let millis = |value: Option<u64>, default| value.map_or(default, Duration::from_millis);
        Ok(Server {
            name: name.to_owned(),
            transport,
            enabled: self.enabled.unwrap_or(true),
            startup_timeout: millis(self.startup_timeout_ms, DEFAULT_STARTUP_TIMEOUT),
            tool_timeout: millis(self.tool_timeout_ms, DEFAULT_TOOL_TIMEOUT),
        })
    }
}

impl Server {
    /// How the server is reached, in a few words: its command line or its URL.
    pub fn describe(&self) -> String {
        match &self.transport {
            Transport::Stdio { command, args, .. } => std::iter::once(command.as_str())
                .chain(args.iter().map(String::as_str))
                .fold(String::new(), |mut line, word| {
                    if !line.is_empty() {
                        line.push(' ');
                    }
                    line.push_str(word);
                    line
                }),
            Transport::Http { url, .. } => url.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> ServerConfig {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn stdio_and_http_servers_are_told_apart_and_mistakes_named() {
        let stdio =
            parse("command = \"npx\"\nargs = [\"-y\", \"x\"]\ntool_timeout_ms = 5").check("a");
        let stdio = stdio.unwrap();
        assert_eq!(stdio.describe(), "npx -y x");
        assert_eq!(stdio.tool_timeout, Duration::from_millis(5));
        assert_eq!(stdio.startup_timeout, DEFAULT_STARTUP_TIMEOUT);
        let http = parse("url = \"http://127.0.0.1:1/mcp\"\nenabled = false").check("b").unwrap();
        assert!(!http.enabled && matches!(http.transport, Transport::Http { .. }));
        for (text, why) in [
            ("", "needs a command"),
            ("url = \"file:///x\"", "not an http"),
            ("command = \"a\"\nurl = \"http://x\"", "both"),
            ("url = \"http://x\"\nargs = [\"a\"]", "stdio servers"),
            ("command = \"a\"\nbearer_token_env_var = \"T\"", "with a url"),
        ] {
            assert!(parse(text).check("c").unwrap_err().contains(why), "{text}");
        }
        assert!(toml::from_str::<ServerConfig>("comand = \"x\"").is_err());
    }
}
