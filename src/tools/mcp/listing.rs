//! The servers, their state and their tools as text, for `/mcp` and `keel mcp list`.
//!
//! Names and descriptions come from the servers, so their control characters are made visible.

use super::hub::{ServerView, Status};
use crate::visible::visible;

/// The longest part of a tool's description the listing shows, in characters.
const DESCRIPTION_MAX_CHARS: usize = 100;

/// What keel says when no server is configured.
pub const NONE_CONFIGURED: &str = "No MCP servers are configured. Add one under \
[mcp_servers.NAME] in your own config file (~/.config/keel/config.toml).";

/// One server's state in a few words.
pub fn status_text(status: &Status) -> String {
    match status {
        Status::Disabled => "disabled".to_owned(),
        Status::Starting => "starting".to_owned(),
        Status::Ready => "ready".to_owned(),
        Status::Failed(why) => format!("failed: {}", visible(why)),
    }
}

/// Every server, one block each: its name, state, how it is reached, its tools.
pub fn render(servers: &[ServerView]) -> String {
    if servers.is_empty() {
        return NONE_CONFIGURED.to_owned();
    }
    let mut out = String::new();
    for server in servers {
        let tools = match server.tools.len() {
            0 => String::new(),
            1 => ", 1 tool".to_owned(),
            count => format!(", {count} tools"),
        };
        out.push_str(&format!(
            "{} ({}{tools}) — {}\n",
            visible(&server.name),
            status_text(&server.status),
            visible(&server.reached_by)
        ));
        for tool in &server.tools {
            let first_line = tool.description.lines().next().unwrap_or_default();
            let mut description: String = first_line.chars().take(DESCRIPTION_MAX_CHARS).collect();
            if description.len() < tool.description.trim_end().len() {
                description.push('…');
            }
            let read_only = if tool.read_only { " [read-only]" } else { "" };
            out.push_str(&format!(
                "  {}{read_only}  {}\n",
                visible(&tool.exposed),
                visible(&description)
            ));
        }
        if let Some(capped) = &server.capped {
            out.push_str(&format!("  keel {capped}\n"));
        }
        if let (Status::Failed(_), Some(log)) = (&server.status, &server.log) {
            out.push_str(&format!("  its stderr: {}\n", log.display()));
        }
    }
    out.trim_end().to_owned()
}

/// The one line keel shows when it offers the model less than a server listed.
pub fn capped_line(server: &ServerView) -> Option<String> {
    let capped = server.capped.as_ref()?;
    Some(format!("MCP server `{}`: keel {capped}", visible(&server.name)))
}

/// The one line keel shows when a server failed.
pub fn failure_line(server: &ServerView) -> Option<String> {
    let Status::Failed(why) = &server.status else {
        return None;
    };
    let log = server
        .log
        .as_ref()
        .map_or_else(String::new, |log| format!(" (its stderr: {})", log.display()));
    Some(format!("MCP server `{}` failed: {}{log}", visible(&server.name), visible(why)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::mcp::RemoteTool;
    use serde_json::json;

    #[test]
    fn servers_texts_are_shown_with_their_control_characters_visible() {
        let servers = [ServerView {
            name: "evil\u{1b}]0;title\u{7}".into(),
            reached_by: "http://x/mcp".into(),
            status: Status::Ready,
            tools: vec![RemoteTool {
                exposed: "mcp__evil__t".into(),
                name: "t".into(),
                description: "safe\rrm -rf".into(),
                input_schema: json!({}),
                read_only: true,
            }],
            log: None,
            capped: Some("cut 1 description to 2048 characters".into()),
        }];
        let shown = render(&servers);
        assert!(!shown.contains('\u{1b}') && !shown.contains('\r'), "{shown:?}");
        assert!(shown.contains("evil^[]0;title^G (ready, 1 tool)"), "{shown}");
        assert!(shown.contains("mcp__evil__t [read-only]  safe␍rm -rf"), "{shown}");
        assert!(shown.contains("\n  keel cut 1 description to 2048 characters"), "{shown}");
        let line = capped_line(&servers[0]).unwrap();
        assert_eq!(
            line,
            "MCP server `evil^[]0;title^G`: keel cut 1 description to 2048 characters"
        );
        assert_eq!(render(&[]), NONE_CONFIGURED);
    }
}
