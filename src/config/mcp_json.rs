//! A project's `.mcp.json` (Claude Code's file), read like the workspace's own config: a cloned
//! repository ships it and the model can write it, so keel never starts a server it names —
//! a server is a program keel would run, or an address it would send to. keel says once, as it
//! starts, what it found and how to use it: `keel mcp import` prints the servers in the form
//! the person's own config takes (`[mcp_servers.NAME]`), for them to copy there if they trust
//! them.

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
    Some(match serde_json::from_str::<File>(&text) {
        Ok(file) => McpJson::Servers(file.servers),
        Err(err) => McpJson::Unreadable(format!("it is not the JSON keel expects: {err}")),
    })
}

impl McpJson {
    /// The one line that says what keel found and that it started none of it.
    pub fn notice(&self) -> String {
        match self {
            Self::Unreadable(why) => {
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
                    .map(|(name, server)| format!("{name} ({})", server.describe()))
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

    /// The servers as the person's own config file takes them, to copy there.
    pub fn as_toml(&self) -> String {
        let Self::Servers(servers) = self else {
            return format!("# {}\n", self.notice());
        };
        let mut out = format!(
            "# From the workspace's {MCP_JSON}. Copy the servers you trust into your own config \
             file\n# (~/.config/keel/config.toml); keel starts only the servers named there.\n"
        );
        for (name, server) in servers {
            out.push('\n');
            out.push_str(&server.as_toml(name));
        }
        out
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

    /// `[mcp_servers.NAME]` with what keel's config can say of this server; what it cannot
    /// say is a comment.
    fn as_toml(&self, name: &str) -> String {
        let mut table = toml::Table::new();
        let mut notes = Vec::new();
        if let Some(command) = &self.command {
            table.insert("command".into(), command.clone().into());
            if !self.args.is_empty() {
                table.insert("args".into(), self.args.clone().into());
            }
            let (env, vars): (Vec<_>, Vec<_>) =
                self.env.iter().partition(|(_, value)| variable(value).is_none());
            if !env.is_empty() {
                let env: toml::Table = env
                    .into_iter()
                    .map(|(key, value)| (key.clone(), value.clone().into()))
                    .collect();
                table.insert("env".into(), env.into());
            }
            // `KEY = "${KEY}"` passes the person's own variable on.
            let vars: Vec<String> = vars
                .into_iter()
                .filter_map(|(key, value)| {
                    let from = variable(value)?;
                    if from != **key {
                        notes.push(format!("# {key} took ${{{from}}}: keel passes {key} itself"));
                    }
                    Some(key.clone())
                })
                .collect();
            if !vars.is_empty() {
                table.insert("env_vars".into(), vars.into());
            }
        } else if let Some(url) = &self.url {
            table.insert("url".into(), url.clone().into());
            for (header, value) in &self.headers {
                let bearer = value.strip_prefix("Bearer ").and_then(variable);
                match bearer {
                    Some(var) if header.eq_ignore_ascii_case("authorization") => {
                        table.insert("bearer_token_env_var".into(), var.into());
                    }
                    _ => notes.push(format!("# header {header} is not one keel can send")),
                }
            }
            if self.kind.as_deref() == Some("sse") {
                notes.push("# an SSE server: keel speaks Streamable HTTP, which it may not".into());
            }
        } else {
            notes.push("# no command or url: nothing keel could start".into());
        }
        let mut servers = toml::Table::new();
        servers.insert(name.to_owned(), table.into());
        let mut root = toml::Table::new();
        root.insert("mcp_servers".into(), servers.into());
        let mut out: String = notes.iter().map(|note| format!("{note}\n")).collect();
        out.push_str(&toml::to_string(&root).unwrap_or_default());
        out
    }
}

/// `NAME` of a value that is exactly `${NAME}`.
fn variable(value: &str) -> Option<String> {
    let name = value.strip_prefix(VARIABLE_OPEN)?.strip_suffix('}')?;
    (!name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
        .then(|| name.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn servers(json: &str) -> McpJson {
        let file: File = serde_json::from_str(json).unwrap();
        McpJson::Servers(file.servers)
    }

    #[test]
    fn claude_codes_servers_become_keels_tables() {
        let found = servers(
            r#"{"mcpServers": {
                "github": {"command": "npx", "args": ["-y", "server-github"],
                           "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}", "MODE": "ro"}},
                "docs": {"type": "http", "url": "https://mcp.example.com/mcp",
                         "headers": {"Authorization": "Bearer ${DOCS_TOKEN}"}}
            }}"#,
        );
        let toml = found.as_toml();
        let parsed: toml::Table = toml::from_str(&toml).unwrap();
        let github = &parsed["mcp_servers"]["github"];
        assert_eq!(github["command"].as_str(), Some("npx"));
        assert_eq!(github["env_vars"].as_array().unwrap().len(), 1);
        assert_eq!(github["env"]["MODE"].as_str(), Some("ro"));
        let docs = &parsed["mcp_servers"]["docs"];
        assert_eq!(docs["bearer_token_env_var"].as_str(), Some("DOCS_TOKEN"));
        // What keel prints is what its own config reads.
        for (name, server) in parsed["mcp_servers"].as_table().unwrap() {
            let config: crate::tools::mcp::ServerConfig = server.clone().try_into().unwrap();
            config.check(name).unwrap();
        }
        let notice = found.notice();
        assert!(
            notice.contains("docs (https://mcp.example.com/mcp), github (npx -y server-github)")
        );
        assert!(notice.contains("started none") && notice.contains("keel mcp import"));
    }

    #[test]
    fn control_characters_in_the_file_are_shown_not_acted_on() {
        let found = servers(r#"{"mcpServers": {"x": {"command": "evil\u001b[2J"}}}"#);
        assert!(!found.notice().contains('\u{1b}'), "{}", found.notice());
        assert!(!found.as_toml().contains('\u{1b}'), "{}", found.as_toml());
    }
}
