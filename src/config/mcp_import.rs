//! What `keel mcp import` prints: a project's `.mcp.json` servers (`super::mcp_json`) as the
//! tables the person's own config file takes, `[mcp_servers.NAME]`, for them to copy there.
//!
//! Every name and value comes from a cloned repository, and the person reads the output before
//! pasting it. So every key and string is quoted by TOML's own writer (`toml_writer`, the `toml`
//! crate's) as a one-line basic string: `"`, `\` and `]` are quoted, a line break is `\n` and
//! never a new line, so no name or value can end its table and start another server or key.
//! The characters a terminal acts on or draws as nothing are escaped too (`\u001B`, `\u202E`):
//! the writer escapes the ASCII ones, and the rest — which TOML allows raw, and which the person
//! would not see — are escaped here the same way, so what is printed reads as what TOML reads
//! back. Comments quote names the same way. A server whose name holds such a character is not
//! imported: [`Import::refused`] says which and why, visibly.

use super::mcp_json::{JsonServer, MCP_JSON, McpJson, variable};
use crate::visible::is_hidden;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use toml_writer::{ToTomlKey as _, ToTomlValue as _, TomlKeyBuilder, TomlStringBuilder};

/// The tables' parent key in keel's config.
const SERVERS: &str = "mcp_servers";

/// What `keel mcp import` prints, and the servers it would not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Import {
    /// The TOML to copy, with comments.
    pub toml: String,
    /// One line for each server refused, saying why.
    pub refused: Vec<String>,
}

impl McpJson {
    /// The servers as the person's own config file takes them, to copy there.
    pub fn import(&self) -> Import {
        let servers = match self {
            Self::Servers(servers) => servers,
            Self::Unreadable(_) => {
                return Import { toml: comment(&self.notice()), refused: Vec::new() };
            }
        };
        let mut out = format!(
            "# From the workspace's {MCP_JSON}. Copy the servers you trust into your own config \
             file\n# (~/.config/keel/config.toml); keel starts only the servers named there.\n"
        );
        let mut refused = Vec::new();
        for (name, server) in servers {
            out.push('\n');
            match refusal(name) {
                Some(why) => {
                    let line = format!("the server named {} is not imported: {why}", quoted(name));
                    out.push_str(&comment(&line));
                    refused.push(line);
                }
                None => out.push_str(&table(name, server)),
            }
        }
        Import { toml: out, refused }
    }
}

/// Why a server named `name` is not imported; `None` when it may be.
fn refusal(name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("its name is empty".to_owned());
    }
    let mut hidden: Vec<String> = Vec::new();
    for c in name.chars().filter(|c| is_hidden(*c)) {
        let said = match c {
            '\u{1b}' => "ESC".to_owned(),
            '\r' => "CR".to_owned(),
            '\n' => "a line break (LF)".to_owned(),
            '\t' => "a tab".to_owned(),
            c => format!("U+{:04X}", u32::from(c)),
        };
        if !hidden.contains(&said) {
            hidden.push(said);
        }
    }
    (!hidden.is_empty()).then(|| {
        format!(
            "its name holds characters a terminal acts on or hides ({}); rename it in {MCP_JSON} \
             to import it",
            hidden.join(", ")
        )
    })
}

/// `[mcp_servers.NAME]` with what keel's config can say of this server; what it cannot say is a
/// comment above it.
fn table(name: &str, server: &JsonServer) -> String {
    let mut keys: Vec<(&str, String)> = Vec::new();
    let mut notes = Vec::new();
    if let Some(command) = &server.command {
        keys.push(("command", quoted(command)));
        if !server.args.is_empty() {
            keys.push(("args", array(&server.args)));
        }
        let (env, vars): (BTreeMap<_, _>, BTreeMap<_, _>) =
            server.env.iter().partition(|(_, value)| variable(value).is_none());
        if !env.is_empty() {
            let pairs: Vec<String> = env
                .iter()
                .map(|(key, value)| format!("{} = {}", toml_key(key), quoted(value)))
                .collect();
            keys.push(("env", format!("{{ {} }}", pairs.join(", "))));
        }
        // `KEY = "${KEY}"` passes the person's own variable on.
        let mut passed = Vec::new();
        for (key, value) in vars {
            let Some(from) = variable(value) else { continue };
            if from != **key {
                notes.push(format!(
                    "{} took ${{{from}}}: keel passes {} itself",
                    quoted(key),
                    quoted(key)
                ));
            }
            passed.push(key.clone());
        }
        if !passed.is_empty() {
            keys.push(("env_vars", array(&passed)));
        }
    } else if let Some(url) = &server.url {
        keys.push(("url", quoted(url)));
        for (header, value) in &server.headers {
            let bearer = value.strip_prefix("Bearer ").and_then(variable);
            match bearer {
                Some(var) if header.eq_ignore_ascii_case("authorization") => {
                    keys.push(("bearer_token_env_var", quoted(&var)));
                }
                _ => notes.push(format!("header {} is not one keel can send", quoted(header))),
            }
        }
        if server.kind.as_deref() == Some("sse") {
            notes.push("an SSE server: keel speaks Streamable HTTP, which it may not".into());
        }
    } else {
        notes.push("no command or url: nothing keel could start".into());
    }
    let mut out: String = notes.iter().map(|note| comment(note)).collect();
    let _ = writeln!(out, "[{SERVERS}.{}]", toml_key(name));
    for (key, value) in keys {
        let _ = writeln!(out, "{key} = {value}");
    }
    out
}

/// `text` as comment lines, each made visible: nothing in it can end the comment.
fn comment(text: &str) -> String {
    text.lines().map(|line| format!("# {}\n", crate::visible::visible(line))).collect()
}

/// A key (a server's name, a variable's) as TOML writes it and the person reads it: bare where
/// TOML allows, else a one-line basic string, escaped.
pub fn toml_key(key: &str) -> String {
    match TomlKeyBuilder::new(key).as_unquoted() {
        Some(bare) => bare.to_toml_key(),
        None => escape_hidden(&TomlKeyBuilder::new(key).as_basic().to_toml_key()),
    }
}

/// `text` as a one-line TOML basic string.
fn quoted(text: &str) -> String {
    escape_hidden(&TomlStringBuilder::new(text).as_basic().to_toml_value())
}

/// `["…", "…"]`.
fn array(items: &[String]) -> String {
    let items: Vec<String> = items.iter().map(|item| quoted(item)).collect();
    format!("[{}]", items.join(", "))
}

/// `basic` (a basic string as the writer made it) with each character a terminal would act on
/// or hide as its `\u` escape: the writer escapes the ASCII controls and passes the others raw.
fn escape_hidden(basic: &str) -> String {
    let mut out = String::with_capacity(basic.len());
    for c in basic.chars() {
        match u32::from(c) {
            code if is_hidden(c) && code > 0xffff => {
                let _ = write!(out, "\\U{code:08X}");
            }
            code if is_hidden(c) => {
                let _ = write!(out, "\\u{code:04X}");
            }
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(json: &str) -> McpJson {
        super::super::mcp_json::parse(json)
    }

    #[test]
    fn claude_codes_servers_become_keels_tables() {
        let found = found(
            r#"{"mcpServers": {
                "github": {"command": "npx", "args": ["-y", "server-github"],
                           "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}", "MODE": "ro"}},
                "docs": {"type": "http", "url": "https://mcp.example.com/mcp",
                         "headers": {"Authorization": "Bearer ${DOCS_TOKEN}"}}
            }}"#,
        );
        let import = found.import();
        assert!(import.refused.is_empty());
        let parsed: toml::Table = toml::from_str(&import.toml).unwrap();
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
    }

    #[test]
    fn quotes_backslashes_brackets_and_line_breaks_stay_inside_their_strings() {
        let name = "we\"ird]\\name.x = 1 #";
        let command = "run\n[mcp_servers.evil]\ncommand = \"sh\"";
        let args = ["a\"b", "c\\d", "e\nf]\nurl = \"x\"", "'''", "\"\"\"", ""];
        let json = serde_json::json!({"mcpServers": {name: {"command": command, "args": args,
            "env": {"K\"\n[y]": "v\\\"\n]", "PASS": "${OTHER}"}}}});
        let import = found(&json.to_string()).import();
        assert!(import.refused.is_empty(), "{:?}", import.refused);
        let parsed: toml::Table = toml::from_str(&import.toml).unwrap();
        assert_eq!(parsed.len(), 1, "{}", import.toml);
        let servers = parsed["mcp_servers"].as_table().unwrap();
        assert_eq!(servers.keys().collect::<Vec<_>>(), [name], "{}", import.toml);
        let server = servers[name].as_table().unwrap();
        let mut keys: Vec<&str> = server.keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(keys, ["args", "command", "env", "env_vars"], "{}", import.toml);
        assert_eq!(server["command"].as_str(), Some(command));
        let got: Vec<&str> =
            server["args"].as_array().unwrap().iter().map(|a| a.as_str().unwrap()).collect();
        assert_eq!(got, args);
        let env = server["env"].as_table().unwrap();
        assert_eq!(env.len(), 1);
        assert_eq!(env["K\"\n[y]"].as_str(), Some("v\\\"\n]"));
        assert_eq!(server["env_vars"].as_array().unwrap().len(), 1);
        assert_eq!(server["env_vars"][0].as_str(), Some("PASS"));
        // One line per key: no value's line break starts a line of its own.
        let table_lines = import.toml.lines().filter(|line| !line.starts_with('#'));
        assert_eq!(table_lines.filter(|line| !line.is_empty()).count(), 1 + 4, "{}", import.toml);
    }

    #[test]
    fn a_name_with_a_control_character_is_refused_and_shown_visibly() {
        let json = serde_json::json!({"mcpServers": {
            "a\u{1b}[31mred\rb\n[mcp_servers.evil]\ncommand = \"sh\"": {"command": "x"},
            "fine": {"command": "y"}
        }});
        let import = found(&json.to_string()).import();
        assert_eq!(import.refused.len(), 1, "{:?}", import.refused);
        let refused = &import.refused[0];
        assert!(refused.contains(r#""a\u001B[31mred\rb\n[mcp_servers.evil]\ncommand = \"sh\"""#));
        assert!(refused.contains("(ESC, CR, a line break (LF))"), "{refused}");
        for text in [refused.as_str(), import.toml.as_str()] {
            assert!(!text.contains(['\u{1b}', '\r']), "{text}");
        }
        let parsed: toml::Table = toml::from_str(&import.toml).unwrap();
        let servers = parsed["mcp_servers"].as_table().unwrap();
        assert_eq!(servers.keys().collect::<Vec<_>>(), ["fine"], "{}", import.toml);
    }

    #[test]
    fn characters_a_terminal_hides_are_escaped_where_toml_would_pass_them_raw() {
        let json = serde_json::json!({"mcpServers": {"s": {"command": "ls\u{202e}txt.exe\u{85}",
            "args": ["\u{200b}", "\u{e0041}"]}}});
        let import = found(&json.to_string()).import();
        assert!(import.toml.contains(r#"command = "ls\u202Etxt.exe\u0085""#), "{}", import.toml);
        assert!(import.toml.contains(r#"args = ["\u200B", "\U000E0041"]"#), "{}", import.toml);
        let parsed: toml::Table = toml::from_str(&import.toml).unwrap();
        assert_eq!(parsed["mcp_servers"]["s"]["command"].as_str(), Some("ls\u{202e}txt.exe\u{85}"));
        assert_eq!(parsed["mcp_servers"]["s"]["args"][1].as_str(), Some("\u{e0041}"));
    }
}
