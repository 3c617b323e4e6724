//! A project's `.mcp.json` (Claude Code's file), read like the workspace's own config: a cloned
//! repository ships it and the model can write it, so keel never starts a server it names —
//! a server is a program keel would run, or an address it would send to. keel says once, as it
//! starts, what it found and how to use it: `keel mcp import` prints the servers in the form
//! the person's own config takes (`[mcp_servers.NAME]`, `super::mcp_import`), for them to copy
//! there if they trust them. What keel says of the file shows its strings visibly.

use super::mcp_import::toml_key;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;

/// The file, at the workspace's top.
pub const MCP_JSON: &str = ".mcp.json";
/// A file larger than this is not read: a list of servers is a few lines.
const MAX_BYTES: u64 = 1024 * 1024;
/// `${NAME}`: a variable the file takes from the environment.
const VARIABLE_OPEN: &str = "${";

/// `.mcp.json` as Claude Code writes it; fields keel does not know are left aside.
#[derive(Debug, Clone, Default, Deserialize)]
struct File {
    #[serde(rename = "mcpServers", default)]
    servers: BTreeMap<String, JsonServer>,
}

/// One server of the file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct JsonServer {
    /// `stdio`, `http` or `sse`; absent for a stdio server.
    #[serde(rename = "type")]
    pub kind: Option<String>,
    pub command: Option<String>,
    #[serde(default)]
    pub args: Vec<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    pub url: Option<String>,
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
}

/// What the workspace's `.mcp.json` holds, or why it could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McpJson {
    Servers(BTreeMap<String, JsonServer>),
    Unreadable(String),
}

/// Reads `workspace`'s `.mcp.json`; `None` when there is none. Only a regular file is read (a
/// FIFO would hang keel's start; a symlink may point anywhere).
pub fn find(workspace: &Path) -> Option<McpJson> {
    let path = workspace.join(MCP_JSON);
    let meta = std::fs::symlink_metadata(&path).ok()?;
    if !meta.file_type().is_file() {
        return Some(McpJson::Unreadable("it is not a regular file".to_owned()));
    }
    if meta.len() > MAX_BYTES {
        return Some(McpJson::Unreadable(format!("it is larger than {MAX_BYTES} bytes")));
    }
    let mut text = String::new();
    let read =
        std::fs::File::open(&path).and_then(|file| file.take(MAX_BYTES).read_to_string(&mut text));
    if let Err(err) = read {
        return Some(McpJson::Unreadable(err.to_string()));
    }
    Some(parse(&text))
}

/// The file's `text`, read.
pub(super) fn parse(text: &str) -> McpJson {
    match serde_json::from_str::<File>(text) {
        Ok(file) => McpJson::Servers(file.servers),
        Err(err) => McpJson::Unreadable(format!("it is not the JSON keel expects: {err}")),
    }
}

impl McpJson {
    /// The one line that says what keel found and that it started none of it.
    pub fn notice(&self) -> String {
        match self {
            Self::Unreadable(why) => {
                let why = crate::visible::one_line(why);
                format!(
                    "found the workspace's {MCP_JSON} but did not read it ({why}); it started no server from it."
                )
            }
            Self::Servers(servers) if servers.is_empty() => {
                format!("found the workspace's {MCP_JSON}, which names no MCP server.")
            }
            Self::Servers(servers) => {
                let named: Vec<String> = servers
                    .iter()
                    .map(|(name, server)| format!("{} ({})", toml_key(name), server.describe()))
                    .collect();
                format!(
                    "found MCP servers in the workspace's {MCP_JSON} — {} — and started none: a \
                     project's file may not start programs or reach servers. To use one you \
                     trust, put it in your own config file: `keel mcp import` prints them as \
                     [mcp_servers.NAME] tables.",
                    named.join(", ")
                )
            }
        }
    }
}

impl JsonServer {
    /// Its command line or its URL, in a few words.
    fn describe(&self) -> String {
        match (&self.command, &self.url) {
            (Some(command), _) => {
                let mut line = vec![command.as_str()];
                line.extend(self.args.iter().map(String::as_str));
                crate::visible::one_line(&line.join(" "))
            }
            (None, Some(url)) => crate::visible::one_line(url),
            (None, None) => "no command or url".to_owned(),
        }
    }
}

/// `NAME` of a value that is exactly `${NAME}`.
pub(super) fn variable(value: &str) -> Option<String> {
    let name = value.strip_prefix(VARIABLE_OPEN)?.strip_suffix('}')?;
    (!name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
        .then(|| name.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_notice_names_each_server_and_how_to_use_it() {
        let found = parse(
            r#"{"mcpServers": {
                "github": {"command": "npx", "args": ["-y", "server-github"]},
                "docs": {"type": "http", "url": "https://mcp.example.com/mcp"}
            }}"#,
        );
        let notice = found.notice();
        assert!(
            notice.contains("docs (https://mcp.example.com/mcp), github (npx -y server-github)")
        );
        assert!(notice.contains("started none") && notice.contains("keel mcp import"));
    }

    #[test]
    fn control_characters_in_the_file_are_shown_not_acted_on() {
        let found = parse(
            r#"{"mcpServers": {"x\u001b]0;owned\u0007\r\nname": {"command": "evil\u001b[2J"}}}"#,
        );
        let notice = found.notice();
        assert!(!notice.contains(['\u{1b}', '\u{7}', '\r', '\n']), "{notice}");
        assert!(notice.contains(r#""x\u001B]0;owned\u0007\r\nname" (evil^[[2J)"#), "{notice}");
        let import = found.import().toml;
        assert!(!import.contains(['\u{1b}', '\u{7}', '\r']), "{import}");
        let unreadable = parse("{\"mcpServers\": {\"a\": {\"command\": 5}}, \"\u{1b}\": 1}");
        assert!(!unreadable.notice().contains('\u{1b}'), "{}", unreadable.notice());
    }
}
